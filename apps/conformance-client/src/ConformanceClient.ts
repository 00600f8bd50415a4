/**
 * The client every scenario runs: an McpClient over the Streamable HTTP
 * transport that answers whatever the server asks (sampling with a canned
 * reply, elicitation forms accepted with the schema's defaults, an empty
 * list of roots), so each capability is declared and exercised.
 */
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as RootsHandler from "@effect-mcp/client/RootsHandler"
import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
import * as StreamableHttpClient from "@effect-mcp/engine/StreamableHttpClient"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Registry from "@effect-mcp/protocol/Registry"
import * as PlatformNodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Stream from "effect/Stream"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as ParamHeaders from "./ParamHeaders.ts"

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

/** The `tools/call` a POST body's text carries, if that is what it is. */
const toolCallOf = (text: string) => {
  try {
    const message: unknown = JSON.parse(text)
    if (!Predicate.isObject(message) || message.method !== "tools/call" || !Predicate.isObject(message.params)) {
      return undefined
    }
    const params = message.params as { readonly name?: unknown; readonly arguments?: unknown }
    return typeof params.name === "string" ? { name: params.name, args: params.arguments } : undefined
  } catch {
    return undefined
  }
}

/**
 * The POST body as bytes, and the request with a body that can still be sent.
 * The transport streams request bodies (to learn when one was handed over), so
 * a streamed body is read here and put back as bytes.
 */
const bodyOf = (request: HttpClientRequest.HttpClientRequest) => {
  const body = request.body
  if (request.method !== "POST") return Effect.succeed(undefined)
  if (body._tag === "Uint8Array") return Effect.succeed({ bytes: body.body, request })
  if (body._tag !== "Stream") return Effect.succeed(undefined)
  return Stream.runCollect(body.stream).pipe(
    Effect.map((chunks) => {
      const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0))
      let offset = 0
      for (const chunk of chunks) {
        bytes.set(chunk, offset)
        offset += chunk.length
      }
      return { bytes, request: HttpClientRequest.bodyUint8Array(request, bytes, body.contentType) }
    }),
    Effect.orDie
  )
}

const isStateless = (version: string | undefined) =>
  ProtocolVersion.isSupported(version) && Registry.get(version).stateless

/** Node's HTTP client, adding the `Mcp-Param-*` headers of stateless `tools/call` requests. */
const httpClient = Layer.effect(
  HttpClient.HttpClient,
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const params = yield* ParamHeaders.ParamHeaders
    return HttpClient.mapRequestEffect(client, (request) => {
      if (!isStateless(request.headers["mcp-protocol-version"])) return Effect.succeed(request)
      return Effect.map(bodyOf(request), (read) => {
        if (read === undefined) return request
        const call = toolCallOf(new TextDecoder().decode(read.bytes))
        return call === undefined
          ? read.request
          : HttpClientRequest.setHeaders(read.request, params.headersFor(call.name, call.args))
      })
    })
  })
).pipe(Layer.provide(PlatformNodeHttpClient.layerUndici))

const connect = (url: string, supportedVersions: ReadonlyArray<ProtocolVersion.ProtocolVersion> | undefined) =>
  McpClient.layer({ clientInfo, supportedVersions }).pipe(
    Layer.provide(Layer.merge(StreamableHttpClient.layer({ url }).pipe(Layer.provide(httpClient)), handlers))
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
}): Layer.Layer<McpClient.McpClient, McpClient.InitializeError, ParamHeaders.ParamHeaders> =>
  connect(options.url, options.supportedVersions).pipe(
    Layer.catchTag("InitializeError", (error) => {
      const retry = offeredInstead(error, options.supportedVersions ?? ProtocolVersion.all)
      return retry === undefined ? Layer.effect(McpClient.McpClient, Effect.fail(error)) : connect(options.url, retry)
    })
  )
