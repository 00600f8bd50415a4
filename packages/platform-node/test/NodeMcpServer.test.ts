import { assert, describe, it } from "@effect/vitest"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as SseClient from "@effect-mcp/http/SseClient"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as Transport from "@effect-mcp/engine/Transport"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Schema from "effect/Schema"
import * as Http from "node:http"
import * as Net from "node:net"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

const TIMEOUT = 20_000
const clientInfo = { name: "node-mcp-server-test", version: "1.0.0" }

const Echo = Tool.make("echo", {
  description: "Echoes its text",
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed({ content: [{ type: "text" as const, text: `echo:${text}` }] })
})
const Server = Tool.layer(Echo).pipe(Layer.provideMerge(McpServer.layer({ name: "echo", version: "1.0.0" })))

/** The server listening for the test's scope; returns its base URL. */
const listen = (options?: NodeMcpServer.HttpOptions) =>
  Effect.flatMap(Layer.build(NodeMcpServer.layerHttp(Server, options)), (context) =>
    NodeMcpServer.url.pipe(Effect.provideContext(context))
  )

const nodeHttp = Effect.map(Layer.build(NodeHttpClient.layer), (context) => Context.get(context, HttpClient.HttpClient))

const echo = (transport: Transport.TransportShape) =>
  Effect.gen(function* () {
    const session = yield* ClientSession.make({ clientInfo, capabilities: {} }).pipe(
      Effect.provideService(Transport.Transport, transport)
    )
    return yield* session.request("tools/call", { name: "echo", arguments: { text: "hi" } })
  })

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo }
})

const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  Effect.gen(function* () {
    const http = yield* nodeHttp
    const response = yield* http.execute(
      HttpClientRequest.post(url).pipe(
        HttpClientRequest.bodyText(body, "application/json"),
        HttpClientRequest.setHeaders({ accept: "application/json, text/event-stream", ...headers })
      )
    )
    return response.status
  }).pipe(Effect.orDie)

describe("NodeMcpServer", () => {
  it.live(
    "layerHttp with no options: 127.0.0.1, Streamable HTTP at /mcp, no legacy SSE",
    () =>
      Effect.gen(function* () {
        const base = yield* listen()
        assert.match(base, /^http:\/\/127\.0\.0\.1:\d+$/)
        const transport = yield* StreamableHttpClient.make({ url: `${base}/mcp` }).pipe(
          Effect.provideService(HttpClient.HttpClient, yield* nodeHttp)
        )
        const result = (yield* echo(transport)) as { readonly content: ReadonlyArray<{ readonly text: string }> }
        assert.strictEqual(result.content[0]?.text, "echo:hi")
        assert.strictEqual(yield* post(`${base}/sse`, initialize), 404)
      }),
    TIMEOUT
  )

  it.live(
    "layerHttp passes the per-client session quota through: the third initialize from 127.0.0.1 gets 429",
    () =>
      Effect.gen(function* () {
        const url = `${yield* listen({ maxSessionsPerClient: 2, writeTimeout: "5 seconds", keepaliveInterval: "1 second" })}/mcp`
        assert.strictEqual(yield* post(url, initialize), 200)
        assert.strictEqual(yield* post(url, initialize), 200)
        assert.strictEqual(yield* post(url, initialize), 429)
      }),
    TIMEOUT
  )

  it.live(
    "Host and Origin are checked by default: foreign names get 403, loopback names 200",
    () =>
      Effect.gen(function* () {
        const base = yield* listen()
        const url = `${base}/mcp`
        const port = base.slice(base.lastIndexOf(":") + 1)
        assert.strictEqual(yield* post(url, initialize, { host: "evil.example.com" }), 403)
        assert.strictEqual(yield* post(url, initialize, { origin: "http://evil.example.com" }), 403)
        assert.strictEqual(yield* post(url, initialize, { host: `localhost:${port}` }), 200)
        assert.strictEqual(yield* post(url, initialize, { origin: `http://127.0.0.1:${port}` }), 200)
      }),
    TIMEOUT
  )

  it.live(
    "allowedHosts and allowedOrigins replace the default names; dnsRebindingProtection: false accepts any",
    () =>
      Effect.gen(function* () {
        const strict = `${yield* listen({ allowedHosts: ["mcp.example.com"], allowedOrigins: ["https://app.example.com"] })}/mcp`
        assert.strictEqual(yield* post(strict, initialize, { host: "mcp.example.com" }), 200)
        assert.strictEqual(
          yield* post(strict, initialize, { host: "mcp.example.com", origin: "https://app.example.com" }),
          200
        )
        assert.strictEqual(yield* post(strict, initialize, { host: "mcp.example.com", origin: "https://x.test" }), 403)
        assert.strictEqual(yield* post(strict, initialize), 403)
        const open = `${yield* listen({ dnsRebindingProtection: false })}/mcp`
        assert.strictEqual(yield* post(open, initialize, { host: "evil.example.com" }), 200)
      }),
    TIMEOUT
  )

  it.live(
    "a bind to a name of its own allows that name; a wildcard bind stays loopback-only and warns",
    () =>
      Effect.gen(function* () {
        const own = yield* listen({ host: "127.0.0.2" })
        assert.match(own, /^http:\/\/127\.0\.0\.2:\d+$/)
        const ownPort = own.slice(own.lastIndexOf(":") + 1)
        assert.strictEqual(yield* post(`${own}/mcp`, initialize, { host: `127.0.0.2:${ownPort}` }), 200)
        assert.strictEqual(yield* post(`${own}/mcp`, initialize, { host: "evil.example.com" }), 403)

        const warnings: Array<string> = []
        const capture = Logger.make((options) => {
          if (options.logLevel === "Warn") warnings.push(String(options.message))
        })
        const wildcard = yield* listen({ host: "0.0.0.0" }).pipe(
          Effect.provide(Logger.layer([capture], { mergeWithExisting: true }))
        )
        const port = wildcard.slice(wildcard.lastIndexOf(":") + 1)
        const url = `http://127.0.0.1:${port}/mcp`
        assert.strictEqual(yield* post(url, initialize), 200)
        assert.strictEqual(yield* post(url, initialize, { host: `192.0.2.1:${port}` }), 403)
        assert.strictEqual(warnings.length, 1)
        assert.match(warnings[0]!, /bound to 0\.0\.0\.0: only loopback names .* set allowedHosts/)
      }),
    TIMEOUT
  )

  it.live(
    "serveHttp on a port in use fails with the address and the OS error",
    () =>
      Effect.gen(function* () {
        const taken = yield* listen()
        const port = Number(taken.slice(taken.lastIndexOf(":") + 1))
        const error = yield* Effect.flip(NodeMcpServer.serveHttp(Server, { port }))
        assert.strictEqual(error._tag, "ServeError")
        assert.include(error.message, `127.0.0.1:${port}`)
        assert.include(error.message, "EADDRINUSE")
      }),
    TIMEOUT
  )

  it.live(
    "bodies above maxBodyBytes get 413; path and legacySse move and add endpoints",
    () =>
      Effect.gen(function* () {
        const base = yield* listen({ maxBodyBytes: 1024, path: "/rpc", legacySse: true })
        const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(4096) } })
        assert.strictEqual(yield* post(`${base}/rpc`, big), 413)
        assert.strictEqual(yield* post(`${base}/rpc`, initialize), 200)
        const transport = yield* SseClient.make({ url: `${base}/sse` }).pipe(
          Effect.provideService(HttpClient.HttpClient, yield* nodeHttp)
        )
        const result = (yield* echo(transport)) as { readonly content: ReadonlyArray<{ readonly text: string }> }
        assert.strictEqual(result.content[0]?.text, "echo:hi")
      }),
    TIMEOUT
  )
})

describe("NodeMcpServer: shutdown with streams open", () => {
  /** Closes `scope`; true when that finished within a second (the close itself is never cut short). */
  const closeWithin = (scope: Scope.Closeable) =>
    Effect.forkChild(Scope.close(scope, Exit.void)).pipe(
      Effect.flatMap((close) =>
        Fiber.join(close).pipe(
          Effect.timeoutOption("1 second"),
          Effect.flatMap((done) => (done._tag === "Some" ? Effect.succeed(true) : Effect.as(Fiber.join(close), false)))
        )
      )
    )

  /** Opens a Streamable HTTP session and its GET stream, and a legacy SSE stream; closes the server; true when within a second. */
  const closeWithStreamsOpen = Effect.gen(function* () {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(NodeMcpServer.layerHttp(Server, { legacySse: true }), scope)
    const base = yield* NodeMcpServer.url.pipe(Effect.provideContext(context))
    const http = yield* nodeHttp
    const opened = yield* http.execute(
      HttpClientRequest.post(`${base}/mcp`).pipe(
        HttpClientRequest.bodyText(initialize, "application/json"),
        HttpClientRequest.setHeaders({ accept: "application/json, text/event-stream" })
      )
    )
    const sessionId = opened.headers["mcp-session-id"]!
    yield* opened.text
    const get = yield* http.execute(
      HttpClientRequest.get(`${base}/mcp`).pipe(
        HttpClientRequest.setHeaders({
          accept: "text/event-stream",
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-11-25"
        })
      )
    )
    assert.strictEqual(get.status, 200)
    const legacy = yield* http.execute(
      HttpClientRequest.get(`${base}/sse`).pipe(HttpClientRequest.setHeaders({ accept: "text/event-stream" }))
    )
    assert.strictEqual(legacy.status, 200)
    // Both bodies are read, so the server's end of each stream is seen as the end of the body.
    const bodies = yield* Effect.forkChild(
      Effect.all([Stream.runDrain(get.stream), Stream.runDrain(legacy.stream)], { concurrency: 2 }).pipe(Effect.ignore)
    )
    const closed = yield* closeWithin(scope)
    yield* Fiber.join(bodies)
    return closed
  })

  it.live(
    "closing the server does not wait for a client that sends half a request",
    () =>
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(NodeMcpServer.layerHttp(Server), scope)
        const base = yield* NodeMcpServer.url.pipe(Effect.provideContext(context))
        const port = Number(base.slice(base.lastIndexOf(":") + 1))
        const socket = yield* Effect.callback<Net.Socket>((resume) => {
          const socket = Net.connect(port, "127.0.0.1", () => resume(Effect.succeed(socket)))
        })
        yield* Effect.addFinalizer(() => Effect.sync(() => socket.destroy()))
        // Headers never finished: the connection is neither idle nor serving a request.
        yield* Effect.callback<void>((resume) => {
          socket.write("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n", () => resume(Effect.void))
        })
        // A barrier: the server runs in this process and reads its ready sockets in one event-loop
        // pass, so once it has answered a request sent after those bytes were written, it has read them.
        yield* Effect.callback<void>((resume) => {
          const request = Http.get(`${base}/barrier`, { agent: false }, (response) => {
            response.resume()
            response.on("end", () => resume(Effect.void))
          })
          request.on("error", (error) => resume(Effect.die(error)))
        })
        assert.isTrue(yield* closeWithin(scope), "shutdown took over a second")
      }),
    TIMEOUT
  )

  it.live(
    "closing the server ends a GET stream and a running call's SSE stream: each chunked body finished, not cut",
    () =>
      Effect.gen(function* () {
        const started = yield* Deferred.make<void>()
        const Hanging = Tool.layer(
          Tool.make("hang", {
            input: Schema.Struct({}),
            handler: () => Effect.andThen(Deferred.succeed(started, undefined), Effect.never)
          })
        ).pipe(Layer.provideMerge(McpServer.layer({ name: "hanging", version: "1.0.0" })))
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(NodeMcpServer.layerHttp(Hanging), scope)
        const url = new URL(`${yield* NodeMcpServer.url.pipe(Effect.provideContext(context))}/mcp`)
        const opened = yield* (yield* nodeHttp).execute(
          HttpClientRequest.post(url).pipe(
            HttpClientRequest.bodyText(initialize, "application/json"),
            HttpClientRequest.setHeaders({ accept: "application/json, text/event-stream" })
          )
        )
        yield* opened.text
        const session = { "mcp-session-id": opened.headers["mcp-session-id"]!, "mcp-protocol-version": "2025-11-25" }
        assert.strictEqual(
          yield* post(url.href, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), session),
          202
        )
        /**
         * Sends a request on a connection of its own; once its response began, waits for that response's end:
         * "ended" when the whole body came (the chunked body's last chunk), "cut" when the connection was lost.
         */
        const streamed = (method: "GET" | "POST", body?: string) =>
          Effect.callback<Effect.Effect<"ended" | "cut">>((resume) => {
            const request = Http.request(url, {
              method,
              agent: false,
              headers: { accept: "application/json, text/event-stream", "content-type": "application/json", ...session }
            })
            request.on("error", (error) => resume(Effect.die(error)))
            request.on("response", (response) => {
              assert.strictEqual(response.statusCode, 200)
              // Listened to at once: the end may come before anything waits for it.
              const end = new Promise<"ended" | "cut">((done) => {
                response.on("end", () => done(response.complete ? "ended" : "cut"))
                response.on("error", () => done("cut"))
                response.on("close", () => done(response.complete ? "ended" : "cut"))
              })
              response.resume()
              resume(Effect.succeed(Effect.promise(() => end)))
            })
            request.end(body)
          })
        const get = yield* streamed("GET")
        const call = yield* streamed(
          "POST",
          JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "hang", arguments: {} } })
        )
        yield* Deferred.await(started)
        yield* Scope.close(scope, Exit.void)
        assert.deepStrictEqual(yield* Effect.all([get, call]), ["ended", "ended"])
      }),
    TIMEOUT
  )

  it.live(
    "closing the server ends open GET and legacy SSE streams and completes promptly",
    () =>
      Effect.gen(function* () {
        // Before: ~20 s, the listener waiting for streams only the sessions' close would end.
        assert.isTrue(yield* closeWithStreamsOpen, "shutdown took over a second")
      }),
    TIMEOUT
  )
})
