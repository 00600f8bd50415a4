/**
 * Identity in, credentials out, against a real OpenID provider
 * (oidc-provider on 127.0.0.1): the gateway is a protected resource whose
 * clients bring the provider's tokens; its upstream is another protected
 * resource, reached with the gateway's own token from the same provider (the
 * client credentials grant), never a caller's. The policy reads each
 * caller's verified token: a tool its scopes do not cover is neither listed
 * nor callable. Official SDK 1.x clients downstream.
 */
import * as Principal from "@effect-mcp/auth/Principal"
import type * as Audit from "@effect-mcp/gateway/Audit"
import * as Gateway from "@effect-mcp/gateway/Gateway"
import * as UpstreamOAuth from "@effect-mcp/gateway/UpstreamOAuth"
import * as McpHost from "@effect-mcp/host/McpHost"
import * as NodeConnector from "@effect-mcp/host/NodeConnector"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import { assert, describe, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as OidcProvider from "../support/OidcProvider.ts"
import * as Oauth from "./oauth.ts"

/** The gateway's client at the provider, and a downstream caller allowed only to read. */
const gatewayClient = { id: "gateway", secret: "gateway-secret-0123456789abcdef0123" }
const reader = { id: "reader", secret: "reader-secret-0123456789abcdef01234" }

/** The upstream: who called it (the verified token's client), and a tool needing `notes:write`. */
const Upstream = Tool.layer(
  Tool.make("whoami", {
    input: Schema.Struct({}),
    handler: () => Effect.map(Effect.orDie(Principal.current), (caller) => `${caller.clientId}`)
  }),
  Tool.make("write_notes", { input: Schema.Struct({}), handler: () => Effect.succeed("written") })
).pipe(Layer.provideMerge(McpServer.layer({ name: "notes", version: "1.0.0" })))

const setup = Effect.gen(function* () {
  const records: Array<Audit.Record> = []
  const provider = yield* OidcProvider.startWith({
    acceptResource: (indicator) => indicator.startsWith("http://127.0.0.1:"),
    extraClients: [gatewayClient, reader]
  })
  const auth = Oauth.protectedBy(provider)
  const upstream = yield* Layer.build(NodeMcpServer.layerHttp(Upstream, { auth })).pipe(Effect.orDie)
  const upstreamUrl = `${yield* NodeMcpServer.url.pipe(Effect.provideContext(upstream))}/mcp`
  const gateway = Gateway.layer({
    server: { name: "gateway", version: "1.0.0" },
    config: { mcpServers: { notes: { type: "http", url: upstreamUrl } } },
    credentials: {
      notes: UpstreamOAuth.clientCredentials({
        clientId: gatewayClient.id,
        clientSecret: gatewayClient.secret,
        allowInsecureRequests: true
      })
    },
    // Writing is for callers whose token grants notes:write.
    policy: (item, principal) =>
      item.name !== "notes__write_notes" || principal?.scopes.includes("notes:write") === true,
    // Three whoami an hour per caller: no refill while the test runs.
    limits: { tools: { notes__whoami: { rate: { capacity: 3, refillEvery: "1 hour" } } } },
    audit: { sink: (record) => Effect.sync(() => records.push(record)) },
    healthCheck: false
  }).pipe(Layer.provide(NodeConnector.layer()))
  const served = yield* Layer.build(NodeMcpServer.layerHttp(gateway, { auth })).pipe(Effect.orDie)
  const url = `${yield* NodeMcpServer.url.pipe(Effect.provideContext(served))}/mcp`
  return { provider, url, records }
})

describe("gateway: identity in, credentials out (oidc-provider)", () => {
  it.live(
    "callers bring the provider's tokens; the upstream sees the gateway's own; the policy reads the caller's scopes",
    () =>
      Effect.gen(function* () {
        const { provider, url, records } = yield* setup
        // Without a token the gateway answers 401 with its challenge.
        const anonymous = yield* Effect.promise(() =>
          fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
        )
        assert.strictEqual(anonymous.status, 401)
        const readerToken = yield* provider.token(url, "notes:read", reader)
        const readOnly = yield* Oauth.connect(url, readerToken)
        const writer = yield* Oauth.connect(url, yield* provider.token(url, "notes:read notes:write"))
        // The upstream was called with a token the provider issued to the gateway's client, not to the caller.
        assert.strictEqual(
          Oauth.textOf(yield* Effect.promise(() => readOnly.callTool({ name: "notes__whoami" }))),
          "gateway"
        )
        assert.strictEqual(
          Oauth.textOf(yield* Effect.promise(() => writer.callTool({ name: "notes__whoami" }))),
          "gateway"
        )
        // A tool the reader's scopes do not cover is neither listed nor callable.
        const listed = (client: Client) =>
          Effect.promise(() => client.listTools()).pipe(Effect.map((r) => r.tools.map((t) => t.name).sort()))
        assert.deepStrictEqual(yield* listed(readOnly), ["notes__whoami"])
        assert.deepStrictEqual(yield* listed(writer), ["notes__whoami", "notes__write_notes"])
        const refused = yield* Effect.promise(() =>
          readOnly.callTool({ name: "notes__write_notes" }).then(
            () => undefined,
            (error: { readonly code?: number; readonly message?: string }) => error
          )
        )
        assert.strictEqual(refused?.code, -32602)
        assert.include(refused?.message, "Unknown tool: notes__write_notes")
        assert.strictEqual(
          Oauth.textOf(yield* Effect.promise(() => writer.callTool({ name: "notes__write_notes" }))),
          "written"
        )
        // The reader's third whoami this hour is its last; the writer's count is its own.
        yield* Effect.promise(() => readOnly.callTool({ name: "notes__whoami" }))
        yield* Effect.promise(() => readOnly.callTool({ name: "notes__whoami" }))
        const limited = yield* Effect.promise(() =>
          readOnly.callTool({ name: "notes__whoami" }).then(
            () => undefined,
            (error: { readonly code?: number; readonly data?: { readonly retryAfterMs?: number } }) => error
          )
        )
        assert.strictEqual(limited?.code, -32029)
        assert.isAbove(limited?.data?.retryAfterMs ?? 0, 0)
        yield* Effect.promise(() => writer.callTool({ name: "notes__whoami" }))
        // One audit record per call, each naming its caller as the gateway authenticated it; no token in any.
        const readerOwner = JSON.stringify([provider.issuer, reader.id, reader.id])
        assert.deepStrictEqual(
          records.filter((r) => r.principal === readerOwner).map((r) => [r.target, r.upstream, r.outcome, r.errorCode]),
          [
            ["notes__whoami", "notes", "success", undefined],
            ["notes__write_notes", "notes", "error", -32602],
            ["notes__whoami", "notes", "success", undefined],
            ["notes__whoami", "notes", "success", undefined],
            ["notes__whoami", "notes", "error", -32029]
          ]
        )
        assert.strictEqual(records.length, 8)
        assert.notInclude(JSON.stringify(records), readerToken.split(".")[1]!)
      })
  )

  it.live(
    "a client credentials grant the provider refuses fails the connection, naming the error, not the secret",
    () =>
      Effect.gen(function* () {
        const provider = yield* OidcProvider.startWith({
          acceptResource: (indicator) => indicator.startsWith("http://127.0.0.1:"),
          extraClients: [gatewayClient]
        })
        const upstream = yield* Layer.build(
          NodeMcpServer.layerHttp(Upstream, { auth: Oauth.protectedBy(provider) })
        ).pipe(Effect.orDie)
        const upstreamUrl = `${yield* NodeMcpServer.url.pipe(Effect.provideContext(upstream))}/mcp`
        const wrong = "not-the-gateway-secret-0123456789abcdef"
        const context = yield* Layer.build(
          Gateway.layer({
            server: { name: "gateway", version: "1.0.0" },
            config: { mcpServers: { notes: { type: "http", url: upstreamUrl } } },
            credentials: {
              notes: UpstreamOAuth.clientCredentials({
                clientId: gatewayClient.id,
                clientSecret: wrong,
                allowInsecureRequests: true
              })
            },
            healthCheck: false,
            awaitUpstreams: 0
          }).pipe(Layer.provide(NodeConnector.layer()))
        )
        const host = Context.get(context, McpHost.McpHost)
        // The first connection's outcome: the grant was refused, so the connection was not made.
        const failed = yield* host.statusChanges.pipe(
          Stream.filter((change) => change.server === "notes" && change.status._tag !== "Connecting"),
          Stream.runHead,
          Effect.map(Option.getOrThrow)
        )
        assert.strictEqual(failed.status._tag, "Degraded")
        const message = failed.status._tag === "Degraded" ? failed.status.failure.message : ""
        assert.include(message, "invalid_client")
        assert.notInclude(message, wrong)
      })
  )
})
