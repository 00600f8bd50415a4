/**
 * The client every scenario runs: an McpClient over the Streamable HTTP
 * transport that answers whatever the server asks (sampling with a canned
 * reply, elicitation forms accepted with the schema's defaults, an empty
 * list of roots), so each capability is declared and exercised.
 */
import type * as OAuthClient from "@effect-mcp/auth/OAuthClient"
import * as OAuthHttpClient from "@effect-mcp/auth/OAuthHttpClient"
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as RootsHandler from "@effect-mcp/client/RootsHandler"
import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

export const clientInfo = { name: "effect-mcp-conformance-client", version: "0.1.0" } as const

/**
 * The revisions a client built against `specVersion` speaks: that one and
 * every earlier one. Without a version, all of them (the newest is tried first).
 */
export const versionsUpTo = (
  specVersion: string | undefined
): ReadonlyArray<ProtocolVersion.ProtocolVersion> | undefined =>
  ProtocolVersion.isSupported(specVersion)
    ? ProtocolVersion.all.filter((v) => ProtocolVersion.isAtLeast(specVersion, v))
    : undefined

const handlers = Layer.mergeAll(
  SamplingHandler.layer((params) =>
    Effect.succeed({
      role: "assistant" as const,
      content: { type: "text" as const, text: `conformance reply to ${params.messages.length} message(s)` },
      model: "effect-mcp-conformance",
      stopReason: "endTurn"
    })
  ),
  // An empty answer: the client fills in every default the form declares.
  ElicitationHandler.layer({ form: () => Effect.succeed({ action: "accept" as const }) }),
  RootsHandler.layer([])
)

/**
 * The HTTP client of the transport: platform-node's (a POST that met a keep-alive connection the server had just
 * closed is sent again on a new one), logging in through `auth` when given.
 */
const httpClient = (url: string, auth: Layer.Layer<OAuthClient.OAuthClient> | undefined) =>
  auth === undefined
    ? NodeHttpClient.layer
    : OAuthHttpClient.layer({ serverUrl: url }).pipe(Layer.provide(Layer.merge(NodeHttpClient.layer, auth)))

const connect = (
  url: string,
  supportedVersions: ReadonlyArray<ProtocolVersion.ProtocolVersion> | undefined,
  auth: Layer.Layer<OAuthClient.OAuthClient> | undefined
) =>
  McpClient.layer({ clientInfo, supportedVersions }).pipe(
    Layer.provide(Layer.merge(StreamableHttpClient.layer({ url }).pipe(Layer.provide(httpClient(url, auth))), handlers))
  )

/** The revisions both sides speak, when the server refused ours with UnsupportedProtocolVersion. */
const offeredInstead = (
  error: McpClient.InitializeError,
  ours: ReadonlyArray<ProtocolVersion.ProtocolVersion>
): ReadonlyArray<ProtocolVersion.ProtocolVersion> | undefined => {
  const cause = error.cause
  if (!(cause instanceof McpError.UnsupportedProtocolVersion)) return undefined
  const mutual = ours.filter((v) => cause.data.supported.includes(v))
  return mutual.length === 0 ? undefined : mutual
}

/**
 * Connects to `url`. A server that refuses the first request with
 * UnsupportedProtocolVersion (-32022) is tried once more with the revisions
 * it listed that this client also speaks.
 */
export const layer = (options: {
  readonly url: string
  readonly supportedVersions?: ReadonlyArray<ProtocolVersion.ProtocolVersion> | undefined
  /** Logs in through this OAuth client (the authorization scenarios). */
  readonly auth?: Layer.Layer<OAuthClient.OAuthClient> | undefined
}): Layer.Layer<McpClient.McpClient, McpClient.InitializeError> =>
  connect(options.url, options.supportedVersions, options.auth).pipe(
    Layer.catchTag("InitializeError", (error) => {
      const retry = offeredInstead(error, options.supportedVersions ?? ProtocolVersion.all)
      return retry === undefined
        ? Layer.effect(McpClient.McpClient, Effect.fail(error))
        : connect(options.url, retry, options.auth)
    })
  )
