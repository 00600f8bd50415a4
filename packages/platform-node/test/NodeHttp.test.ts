import { assert, describe, it } from "@effect/vitest"
import type * as HttpServeOptions from "@effect-mcp/http/HttpServeOptions"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as SseServer from "@effect-mcp/http/SseServer"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Transport from "@effect-mcp/engine/Transport"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect-mcp/platform-node/NodeHttpServer"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

const TIMEOUT = 20_000
const serverInfo = { name: "node-http-test", version: "1.0.0" }
const clientInfo = { name: "node-http-client", version: "1.0.0" }

/** Completed when a client resumes a stream of the server `listen` made last. */
let resumed = Deferred.makeUnsafe<void>()

const handlers = new Map<string, Session.Handler>([
  [
    "tools/list",
    () =>
      Effect.succeed({
        tools: [
          {
            name: "echo",
            description: "Echoes its text",
            inputSchema: { type: "object", properties: { text: { type: "string" } } }
          }
        ]
      })
  ],
  [
    "tools/call",
    (params) =>
      Effect.gen(function* () {
        const p = params as { readonly name: string; readonly arguments?: { readonly text?: string } }
        if (p.name === "progress") {
          const current = yield* CurrentRequest.CurrentRequest
          for (let i = 1; i <= 3; i++) yield* current.progress({ progress: i, total: 3 })
        }
        if (p.name === "test_reconnection") {
          yield* StreamableHttpServer.closeRequestStream
          // The result goes out only once the client has come back for the stream.
          yield* Deferred.await(resumed)
        }
        return { content: [{ type: "text", text: `${p.name}:${p.arguments?.text ?? ""}` }] }
      })
  ]
])

const sessionFactory = ServerSession.make({ serverInfo, capabilities: { tools: {} }, handlers })

/** A Streamable HTTP server on 127.0.0.1:<free port> for the test's scope; returns its URL and handle. */
const listen = (options: Partial<StreamableHttpServer.Options<never, StreamableHttpServer.SessionServices>> = {}) =>
  Effect.gen(function* () {
    const server = yield* StreamableHttpServer.make({ session: sessionFactory, ...options })
    resumed = Deferred.makeUnsafe<void>()
    const signalled = resumed
    // A GET with Last-Event-ID is a client resuming a stream: `resumed` tells the handlers.
    const handler = Effect.andThen(
      Effect.tap(HttpServerRequest.HttpServerRequest, (request) =>
        request.method === "GET" && request.headers["last-event-id"] !== undefined
          ? Deferred.succeed(signalled, undefined)
          : Effect.void
      ),
      server.handler
    )
    const context = yield* Layer.build(NodeHttpServer.layer(HttpRouter.add("*", "/mcp", handler)))
    const base = yield* NodeHttpServer.url.pipe(Effect.provideContext(context))
    return { server, url: `${base}/mcp`, base }
  })

const nodeHttp = Effect.map(Layer.build(NodeHttpClient.layer), (context) => Context.get(context, HttpClient.HttpClient))

const connect = (url: string, versions: ReadonlyArray<ProtocolVersion.ProtocolVersion>, http: HttpClient.HttpClient) =>
  Effect.gen(function* () {
    const transport = yield* StreamableHttpClient.make({
      url,
      reconnect: { initialDelay: "20 millis" }
    }).pipe(Effect.provideService(HttpClient.HttpClient, http))
    const session = yield* ClientSession.make({ clientInfo, capabilities: {}, supportedVersions: versions }).pipe(
      Effect.provideService(Transport.Transport, transport)
    )
    return { transport, session }
  })

const raw = (http: HttpClient.HttpClient, url: string, body: string, headers: Record<string, string> = {}) =>
  Effect.gen(function* () {
    const response = yield* http.execute(
      HttpClientRequest.post(url).pipe(
        HttpClientRequest.bodyText(body, "application/json"),
        HttpClientRequest.setHeaders({ accept: "application/json, text/event-stream", ...headers })
      )
    )
    return { status: response.status, text: yield* response.text }
  }).pipe(Effect.orDie)

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo }
})

describe("Streamable HTTP over loopback sockets", () => {
  for (const responseMode of ["sse", "json"] as const) {
    it.live(
      `a full stateful session (${responseMode}); DELETE on close releases it`,
      () =>
        Effect.gen(function* () {
          const { server, url } = yield* listen({ responseMode })
          const http = yield* nodeHttp
          yield* Effect.scoped(
            Effect.gen(function* () {
              const { session, transport } = yield* connect(url, ["2025-11-25"], http)
              assert.isDefined(transport.sessionId())
              assert.strictEqual(server.sessionCount(), 1)
              const result = yield* session.request("tools/call", { name: "echo", arguments: { text: "tcp" } })
              assert.deepStrictEqual(result, { content: [{ type: "text", text: "echo:tcp" }] })
              const events = yield* session
                .requestWithProgress("tools/call", { name: "progress", arguments: {} })
                .pipe(Stream.runCollect)
              assert.strictEqual(events[events.length - 1]?._tag, "Result")
              if (responseMode === "sse") assert.strictEqual(events.length, 4)
            })
          )
          assert.strictEqual(server.sessionCount(), 0)
        }),
      TIMEOUT
    )
  }

  it.live(
    "a stateless 2026-07-28 session",
    () =>
      Effect.gen(function* () {
        const { server, url } = yield* listen()
        const { session, transport } = yield* connect(url, ["2026-07-28"], yield* nodeHttp)
        assert.isUndefined(transport.sessionId())
        const result = yield* session.request("tools/call", { name: "echo", arguments: { text: "stateless" } })
        assert.deepStrictEqual(result, { content: [{ type: "text", text: "echo:stateless" }], resultType: "complete" })
        assert.strictEqual(server.sessionCount(), 0)
      }),
    TIMEOUT
  )

  it.live(
    "test_reconnection: the server ends the stream mid-call and the result arrives after the client resumes",
    () =>
      Effect.gen(function* () {
        const { url } = yield* listen({ retryInterval: "20 millis" })
        const { session } = yield* connect(url, ["2025-11-25"], yield* nodeHttp)
        const result = yield* session.request("tools/call", { name: "test_reconnection", arguments: {} })
        assert.deepStrictEqual(result, { content: [{ type: "text", text: "test_reconnection:" }] })
      }),
    TIMEOUT
  )

  it.live(
    "DNS rebinding: a foreign Host or Origin gets 403, localhost and 127.0.0.1 get 200",
    () =>
      Effect.gen(function* () {
        const { url, base } = yield* listen()
        const http = yield* nodeHttp
        const port = base.slice(base.lastIndexOf(":") + 1)
        assert.strictEqual((yield* raw(http, url, initialize, { host: "evil.example.com" })).status, 403)
        assert.strictEqual((yield* raw(http, url, initialize, { origin: "http://evil.example.com" })).status, 403)
        assert.strictEqual((yield* raw(http, url, initialize, { host: `localhost:${port}` })).status, 200)
        assert.strictEqual((yield* raw(http, url, initialize)).status, 200)
      }),
    TIMEOUT
  )

  it.live(
    "a non-loopback bind needs allowed hosts or the named opt-out: RebindingRequiredError, and no socket opened",
    () =>
      Effect.gen(function* () {
        // 192.0.2.1 (TEST-NET-1) is no interface of this machine: a bind that got past the check fails to listen.
        const start = (checks: HttpServeOptions.HostChecks | undefined, host = "192.0.2.1") =>
          Effect.flip(
            Layer.build(NodeHttpServer.layerStreamableHttp({ session: sessionFactory, host, port: 0, ...checks }))
          )
        const refused = yield* start(undefined)
        assert.strictEqual(refused._tag, "RebindingRequiredError")
        assert.include(refused.message, "192.0.2.1")
        assert.strictEqual(
          (yield* start({ allowedOrigins: ["https://app.example.com"] }))._tag,
          "RebindingRequiredError"
        )
        assert.strictEqual((yield* start(undefined, "0.0.0.0"))._tag, "RebindingRequiredError")
        const sse = yield* Effect.flip(
          Layer.build(NodeHttpServer.layerSse({ session: sessionFactory, host: "0.0.0.0", port: 0 }))
        )
        assert.strictEqual(sse._tag, "RebindingRequiredError")
        // An explicit list, or the named opt-out, gets as far as listening.
        const listed = yield* start({ allowedHosts: ["mcp.example.com"] })
        assert.instanceOf(listed, NodeHttpServer.ListenError)
        assert.instanceOf(yield* start({ dnsRebindingProtection: false }), NodeHttpServer.ListenError)
      }),
    TIMEOUT
  )

  it.live(
    "sessions per remote address are capped: the next initialize from 127.0.0.1 gets 429",
    () =>
      Effect.gen(function* () {
        const { server, url } = yield* listen({ maxSessionsPerClient: 2 })
        const http = yield* nodeHttp
        assert.strictEqual((yield* raw(http, url, initialize)).status, 200)
        assert.strictEqual((yield* raw(http, url, initialize)).status, 200)
        const refused = yield* raw(http, url, initialize)
        assert.strictEqual(refused.status, 429)
        assert.include(refused.text, "at most 2 sessions per client")
        assert.strictEqual(server.sessionCount(), 2)
      }),
    TIMEOUT
  )

  it.live(
    "an oversize body gets 413 and the server keeps serving",
    () =>
      Effect.gen(function* () {
        const { url } = yield* listen({ maxBodyBytes: 64 * 1024 })
        const http = yield* nodeHttp
        const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(1024 * 1024) } })
        assert.strictEqual((yield* raw(http, url, big)).status, 413)
        for (let i = 0; i < 3; i++) assert.strictEqual((yield* raw(http, url, initialize)).status, 200)
      }),
    TIMEOUT
  )

  it.live(
    "a chunked body without Content-Length that outgrows the limit gets 413 once read; the server keeps serving",
    () =>
      Effect.gen(function* () {
        const { url } = yield* listen({ maxBodyBytes: 64 * 1024 })
        const http = yield* nodeHttp
        const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(256 * 1024) } })
        const chunks = Array.from({ length: 16 }, (_, i) =>
          new TextEncoder().encode(big.slice((i * big.length) / 16, ((i + 1) * big.length) / 16))
        )
        const response = yield* http
          .execute(
            HttpClientRequest.post(url).pipe(
              HttpClientRequest.bodyStream(Stream.fromIterable(chunks), { contentType: "application/json" }),
              HttpClientRequest.setHeaders({ accept: "application/json, text/event-stream" })
            )
          )
          .pipe(Effect.orDie)
        assert.isUndefined(response.request.headers["content-length"])
        assert.strictEqual(response.status, 413)
        assert.match(yield* Effect.orDie(response.text), /Payload Too Large/)
        for (let i = 0; i < 3; i++) assert.strictEqual((yield* raw(http, url, initialize)).status, 200)
      }),
    TIMEOUT
  )

  it.live(
    "legacy HTTP+SSE, reached through the Streamable HTTP client's fallback",
    () =>
      Effect.gen(function* () {
        const legacy = yield* SseServer.make({
          session: ServerSession.make({
            serverInfo,
            capabilities: { tools: {} },
            handlers,
            supportedVersions: ["2024-11-05"]
          })
        })
        const context = yield* Layer.build(
          NodeHttpServer.layer(
            HttpRouter.addAll([
              HttpRouter.route("GET", "/sse", legacy.sse),
              HttpRouter.route("POST", "/messages", legacy.messages)
            ])
          )
        )
        const base = yield* NodeHttpServer.url.pipe(Effect.provideContext(context))
        const { session, transport } = yield* connect(`${base}/sse`, ["2024-11-05", "2025-11-25"], yield* nodeHttp)
        assert.strictEqual(transport.mode(), "sse")
        assert.strictEqual(session.state.revision?.version, "2024-11-05")
        const result = yield* session.request("tools/call", { name: "echo", arguments: { text: "old" } })
        assert.deepStrictEqual(result, { content: [{ type: "text", text: "echo:old" }] })
        assert.strictEqual(legacy.sessionCount(), 1)
      }),
    TIMEOUT
  )

  it.live(
    "the official SDK client (StreamableHTTPClientTransport) talks to the server",
    () =>
      Effect.gen(function* () {
        const { server, url } = yield* listen()
        const client = new Client({ name: "sdk-client", version: "1.0.0" })
        const transport = new StreamableHTTPClientTransport(new globalThis.URL(url))
        yield* Effect.acquireRelease(
          Effect.promise(() => client.connect(transport)),
          () => Effect.promise(() => client.close())
        )
        assert.strictEqual(client.getServerVersion()?.name, "node-http-test")
        assert.strictEqual(server.sessionCount(), 1)
        const tools = yield* Effect.promise(() => client.listTools())
        assert.deepStrictEqual(
          tools.tools.map((t) => t.name),
          ["echo"]
        )
        const result = yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { text: "sdk" } }))
        assert.deepStrictEqual(result.content, [{ type: "text", text: "echo:sdk" }])
        yield* Effect.promise(() => transport.terminateSession())
        assert.strictEqual(server.sessionCount(), 0)
      }),
    TIMEOUT
  )
})
