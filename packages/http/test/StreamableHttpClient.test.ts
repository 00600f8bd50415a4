import { assert, describe, it } from "@effect/vitest"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import * as Tracer from "effect/Tracer"
import { advanceUntilDone, clientInfo, forkIdle } from "../../engine/test/fixtures.ts"
import { inMemoryClient, serverOptions, tools, URL_MCP } from "./StreamableHttpFixtures.ts"
import * as HttpClientService from "effect/http/HttpClient"

interface Seen {
  readonly method: string
  readonly headers: { readonly [key: string]: string | undefined }
}

const setup = (
  handlers: ReadonlyMap<string, Session.Handler>,
  options: Partial<StreamableHttpServer.Options<never, never>> = {},
  clientOptions: Partial<StreamableHttpClient.Options> = {},
  notifications?: Queue.Queue<unknown>
) =>
  Effect.gen(function* () {
    const sessions: Array<Session.SessionShape> = []
    const server = yield* StreamableHttpServer.make({
      session: ServerSession.make({ ...serverOptions(handlers), capabilities: { tools: {}, logging: {} } }).pipe(
        Effect.tap((s) => Effect.sync(() => sessions.push(s)))
      ),
      ...options
    })
    const seen: Array<Seen> = []
    const http: HttpClient.HttpClient = inMemoryClient(server.handler, (request: HttpClientRequest.HttpClientRequest) =>
      seen.push({ method: request.method, headers: request.headers })
    )
    const transport = yield* StreamableHttpClient.make({ url: URL_MCP, ...clientOptions }).pipe(
      Effect.provideService(HttpClientService.HttpClient, http)
    )
    const client = yield* ClientSession.make({
      clientInfo,
      capabilities: {},
      supportedVersions: ["2025-11-25"],
      ...(notifications === undefined
        ? {}
        : {
            notificationHandlers: new Map([
              ["notifications/message", (params: unknown) => Effect.asVoid(Queue.offer(notifications, params))]
            ])
          })
    }).pipe(Effect.provideService(Transport.Transport, transport))
    return { server, sessions, transport, client, seen }
  })

const echo = new Map([["tools/call", tools]])

describe("Streamable HTTP client", () => {
  it.effect("sends the session id and MCP-Protocol-Version after negotiation, and opens the GET stream", () =>
    Effect.gen(function* () {
      const { client, seen, transport } = yield* setup(echo)
      yield* client.request("tools/call", { name: "echo", arguments: {} })
      const [init, ...rest] = seen
      assert.strictEqual(init?.method, "POST")
      assert.strictEqual(init?.headers["accept"], "application/json, text/event-stream")
      assert.isUndefined(init?.headers["mcp-session-id"])
      for (const request of rest) {
        assert.strictEqual(request.headers["mcp-session-id"], transport.sessionId())
        assert.strictEqual(request.headers["mcp-protocol-version"], "2025-11-25")
      }
      assert.isTrue(rest.some((r) => r.method === "GET" && r.headers["accept"] === "text/event-stream"))
    })
  )

  it.effect(
    "the test_reconnection pattern: the server ends the stream mid-call, the client resumes with Last-Event-ID",
    () =>
      Effect.gen(function* () {
        const handler: Session.Handler = () =>
          StreamableHttpServer.closeRequestStream.pipe(
            Effect.andThen(Effect.sleep("300 millis")),
            Effect.as({ content: [{ type: "text", text: "after reconnect" }] })
          )
        const { client, seen } = yield* setup(new Map([["tools/call", handler]]))
        const fiber = yield* client
          .request("tools/call", { name: "test_reconnection", arguments: {} })
          .pipe(Effect.forkChild)
        const result = yield* advanceUntilDone(fiber, "100 millis")
        assert.deepStrictEqual(result, { content: [{ type: "text", text: "after reconnect" }] })
        const resumes = seen.filter((r) => r.method === "GET" && r.headers["last-event-id"] !== undefined)
        assert.strictEqual(resumes.length, 1)
      })
  )

  it.effect("honours the server's retry before reconnecting", () =>
    Effect.gen(function* () {
      const handler: Session.Handler = () => StreamableHttpServer.closeRequestStream.pipe(Effect.as({ content: [] }))
      const { client, seen } = yield* setup(new Map([["tools/call", handler]]), { retryInterval: "5 seconds" })
      const fiber = yield* client.request("tools/call", { name: "x", arguments: {} }).pipe(Effect.forkChild)
      const resumes = () => seen.filter((r) => r.headers["last-event-id"] !== undefined).length
      yield* TestClock.adjust("4900 millis")
      assert.strictEqual(resumes(), 0)
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("200 millis")
      assert.strictEqual(resumes(), 1)
      assert.deepStrictEqual(yield* Fiber.join(fiber), { content: [] })
    })
  )

  it.effect("the GET stream is re-opened with Last-Event-ID and messages sent meanwhile arrive", () =>
    Effect.gen(function* () {
      const closeGet: Session.Handler = () =>
        Effect.gen(function* () {
          const http = yield* Effect.serviceOption(StreamableHttpServer.CurrentHttpSession)
          if (Option.isSome(http)) yield* http.value.closeStandaloneStream
          return { content: [] }
        })
      const notifications = yield* Queue.unbounded<unknown>()
      const { client, sessions, seen } = yield* setup(new Map([["tools/call", closeGet]]), {}, {}, notifications)
      yield* client.request("tools/call", { name: "close-get", arguments: {} })
      yield* sessions[0]!.peer.notify("notifications/message", { level: "info", data: "while away" })
      const received = yield* Queue.take(notifications).pipe(Effect.forkChild)
      const params = yield* advanceUntilDone(received, "250 millis")
      assert.deepStrictEqual(params, { level: "info", data: "while away" })
      const gets = seen.filter((r) => r.method === "GET")
      assert.strictEqual(gets.length, 2)
      assert.isDefined(gets[1]!.headers["last-event-id"])
    })
  )

  it.effect("a server without a GET stream (405) is tolerated", () =>
    Effect.gen(function* () {
      const { client, seen } = yield* setup(echo, { standaloneStream: false })
      yield* TestClock.adjust("1 minute")
      const result = yield* client.request("tools/call", { name: "echo", arguments: { text: "ok" } })
      assert.deepStrictEqual(result, { content: [{ type: "text", text: "echo:ok" }] })
      assert.strictEqual(seen.filter((r) => r.method === "GET").length, 1)
    })
  )

  it.effect("404 for the session surfaces SessionExpired so the session layer can re-initialize", () =>
    Effect.gen(function* () {
      const { client, server, transport } = yield* setup(echo)
      const id = transport.sessionId()!
      assert.isTrue(yield* server.closeSession(id))
      // The refused POST's request is answered with the expiry itself (the server never took it),
      // then the transport ends with SessionExpired and the session closes.
      const error = yield* client.request("tools/call", { name: "echo", arguments: {} }).pipe(Effect.flip)
      assert.strictEqual(error._tag, "InternalError")
      const carried = (error as { readonly data?: { readonly transportError?: unknown } }).data?.transportError
      assert.isTrue(carried instanceof Transport.TransportError && StreamableHttpClient.isSessionExpired(carried))
      const expired = yield* transport.expired
      assert.strictEqual(expired.sessionId, id)
      const exit = yield* client.closed
      assert.isTrue(Exit.isFailure(exit))
      const cause = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : Option.none()
      assert.isTrue(
        Option.isSome(cause) &&
          cause.value._tag === "TransportError" &&
          StreamableHttpClient.isSessionExpired(cause.value)
      )
      // Later calls fail at once.
      const later = yield* client.request("tools/call", { name: "echo", arguments: {} }).pipe(Effect.flip)
      assert.strictEqual(later._tag, "SessionClosed")
    })
  )

  it.effect("after renew a new session starts: initialize goes without a session id, calls work again", () =>
    Effect.gen(function* () {
      const { server, transport, seen } = yield* setup(echo)
      const id = transport.sessionId()!
      yield* transport.renew
      assert.strictEqual(transport.sessionId(), id, "renew does nothing while the session lives")
      assert.isTrue(yield* server.closeSession(id))
      yield* transport.send(JsonRpc.notification("notifications/progress")).pipe(Effect.flip)
      yield* transport.expired
      yield* transport.renew
      assert.isUndefined(transport.sessionId())
      assert.isUndefined(transport.protocolVersion())
      const posts = seen.length
      const session = yield* ClientSession.make({
        clientInfo,
        capabilities: {},
        supportedVersions: ["2025-11-25"]
      }).pipe(Effect.provideService(Transport.Transport, transport))
      assert.isUndefined(seen[posts]?.headers["mcp-session-id"], "the new initialize carries no session id")
      const renewed = transport.sessionId()
      assert.isDefined(renewed)
      assert.notStrictEqual(renewed, id)
      const result = yield* session.request("tools/call", { name: "echo", arguments: { text: "again" } })
      assert.deepStrictEqual(result, { content: [{ type: "text", text: "echo:again" }] })
    })
  )

  it.effect("an HTTP refusal carrying a JSON-RPC error fails the call; the session keeps working", () =>
    Effect.gen(function* () {
      const { client } = yield* setup(echo, { maxBodyBytes: 2048 })
      const error = yield* client
        .request("tools/call", { name: "echo", arguments: { text: "x".repeat(4096) } })
        .pipe(Effect.flip)
      assert.strictEqual(error._tag, "JsonRpcError")
      assert.match(error.message, /Payload Too Large/)
      const result = yield* client.request("tools/call", { name: "echo", arguments: { text: "small" } })
      assert.deepStrictEqual(result, { content: [{ type: "text", text: "echo:small" }] })
    })
  )

  it.effect("the transport learns the revision from initialize; setProtocolVersion overrides it", () =>
    Effect.gen(function* () {
      const { transport, seen, client } = yield* setup(echo)
      assert.strictEqual(transport.protocolVersion(), "2025-11-25")
      transport.setProtocolVersion("2025-06-18")
      yield* client.request("tools/call", { name: "echo", arguments: {} })
      assert.strictEqual(seen[seen.length - 1]!.headers["mcp-protocol-version"], "2025-06-18")
      assert.strictEqual(transport.mode(), "streamable")
    })
  )

  for (const responseMode of ["sse", "json"] as const) {
    it.effect(
      `a server-to-client request made for a call reaches the client and its answer is routed back (${responseMode})`,
      () =>
        Effect.gen(function* () {
          const holder: { sessions?: ReadonlyArray<Session.SessionShape> } = {}
          const asking: Session.Handler = () =>
            Effect.gen(function* () {
              const current = yield* CurrentRequest.CurrentRequest
              const answer = yield* holder.sessions![0]!.peer.request("ping", undefined, {
                relatedRequestId: current.id
              })
              return { content: [{ type: "text", text: JSON.stringify(answer) }] }
            }).pipe(Effect.orDie)
          const { client, sessions, seen } = yield* setup(new Map([["tools/call", asking]]), { responseMode })
          holder.sessions = sessions
          const result = yield* client.request("tools/call", { name: "ask", arguments: {} })
          assert.deepStrictEqual(result, { content: [{ type: "text", text: "{}" }] })
          // The client's answer went back in a POST of its own.
          assert.isTrue(seen.filter((r) => r.method === "POST").length >= 4)
        })
    )
  }

  it.effect("a request timeout applies while a JSON reply is pending, and cancels the call on the server", () =>
    Effect.gen(function* () {
      const finalized = yield* Deferred.make<void>()
      const hang: Session.Handler = () =>
        Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(finalized, undefined)))
      const { client } = yield* setup(new Map([["tools/call", hang]]), { responseMode: "json" })
      const fiber = yield* client
        .request("tools/call", { name: "hang", arguments: {} }, { timeout: "5 seconds" })
        .pipe(Effect.flip, Effect.forkChild)
      yield* TestClock.adjust("5 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "RequestTimeout")
      yield* Deferred.await(finalized)
    })
  )

  it.effect("interrupting a call cancels it on the server; its stream ends and is not resumed", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const finalized = yield* Deferred.make<void>()
      const hang: Session.Handler = () =>
        Deferred.succeed(started, undefined).pipe(
          Effect.andThen(Effect.never),
          Effect.onInterrupt(() => Deferred.succeed(finalized, undefined))
        )
      const { client, seen } = yield* setup(new Map([["tools/call", hang]]))
      const fiber = yield* client.request("tools/call", { name: "hang", arguments: {} }).pipe(Effect.forkChild)
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      yield* Deferred.await(finalized)
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(seen.filter((r) => r.headers["last-event-id"] !== undefined).length, 0)
    })
  )

  it.effect("on the stateless revision, interrupting a call drops its connection and interrupts the handler", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const finalized = yield* Deferred.make<void>()
      const hang: Session.Handler = () =>
        Deferred.succeed(started, undefined).pipe(
          Effect.andThen(Effect.never),
          Effect.onInterrupt(() => Deferred.succeed(finalized, undefined))
        )
      const server = yield* StreamableHttpServer.make({
        session: ServerSession.make(serverOptions(new Map([["tools/call", hang]])))
      })
      const seen: Array<string> = []
      const http = inMemoryClient(server.handler, (request) => seen.push(request.headers["mcp-method"] ?? ""))
      const transport = yield* StreamableHttpClient.make({ url: URL_MCP }).pipe(
        Effect.provideService(HttpClientService.HttpClient, http)
      )
      const client = yield* ClientSession.make({
        clientInfo,
        capabilities: {},
        supportedVersions: ["2026-07-28"]
      }).pipe(Effect.provideService(Transport.Transport, transport))
      const fiber = yield* client.request("tools/call", { name: "hang", arguments: {} }).pipe(Effect.forkChild)
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      yield* Deferred.await(finalized)
      // No notifications/cancelled POST: there is no session to send it to.
      assert.deepStrictEqual(seen, ["server/discover", "tools/call"])
    })
  )

  it.effect("a stream that ends without resumption fails its pending requests instead of hanging", () =>
    Effect.gen(function* () {
      const stop = yield* Deferred.make<void>()
      const handler: Session.Handler = () => Effect.andThen(Deferred.await(stop), Effect.never)
      const { client, server, transport } = yield* setup(new Map([["tools/call", handler]]), { eventStore: false })
      // Returns once the request is in flight (its handler waiting).
      const fiber = yield* forkIdle(client.request("tools/call", { name: "x", arguments: {} }))
      // The session ends on the server: its streams end with no event id to resume from.
      yield* server.closeSession(transport.sessionId()!)
      const error = yield* Fiber.join(fiber).pipe(Effect.flip)
      assert.strictEqual(error._tag, "InternalError")
    })
  )

  it.effect("a request's POST reaches the server before send returns, so a later cancel cannot overtake it", () =>
    Effect.gen(function* () {
      const { transport, seen } = yield* setup(new Map([["tools/call", () => Effect.never]]))
      const posts = () => seen.filter((r) => r.method === "POST").length
      const before = posts()
      yield* transport.send(JsonRpc.request(99, "tools/call", { name: "hang", arguments: {} }))
      // Accepted by the server: its SSE reply's headers arrived.
      assert.strictEqual(posts(), before + 1)
      yield* transport.send(JsonRpc.notification("notifications/cancelled", { requestId: 99 }))
      assert.strictEqual(posts(), before + 2)
    })
  )

  it.effect("after the session expired, sends fail with Closed (SessionExpired), not with a refused POST", () =>
    Effect.gen(function* () {
      const { server, transport, seen } = yield* setup(echo)
      assert.isTrue(yield* server.closeSession(transport.sessionId()!))
      const first = yield* transport.send(JsonRpc.notification("notifications/progress")).pipe(Effect.flip)
      assert.strictEqual(first.reason, "Closed")
      const posts = seen.length
      const later = yield* transport.send(JsonRpc.notification("notifications/progress")).pipe(Effect.flip)
      assert.strictEqual(later.reason, "Closed")
      assert.isTrue(StreamableHttpClient.isSessionExpired(later))
      assert.strictEqual(seen.length, posts, "no POST after expiry")
    })
  )

  it.effect("an SSE event over maxEventBytes fails incoming with FrameTooLarge and is not resumed", () =>
    Effect.gen(function* () {
      const seen: Array<HttpClientRequest.HttpClientRequest> = []
      const app = Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
        request.method === "POST"
          ? HttpServerResponse.text(`id: 1\ndata: ${"x".repeat(200)}\n\n`, { contentType: "text/event-stream" })
          : HttpServerResponse.empty({ status: 405 })
      )
      const transport = yield* StreamableHttpClient.make({ url: URL_MCP, maxEventBytes: 64 }).pipe(
        Effect.provideService(
          HttpClientService.HttpClient,
          inMemoryClient(app, (request) => seen.push(request))
        )
      )
      yield* transport.send(JsonRpc.request(1, "initialize", {}))
      const error = yield* Stream.runDrain(transport.incoming).pipe(Effect.flip)
      assert.strictEqual(error.reason, "FrameTooLarge")
      yield* TestClock.adjust("1 minute")
      assert.deepStrictEqual(
        seen.map((r) => r.method),
        ["POST"]
      )
    })
  )
})

describe("Streamable HTTP client: request bodies and trace context", () => {
  const recordingServer = () => {
    const bodies: Array<number> = []
    const sent: Array<HttpClientRequest.HttpClientRequest> = []
    const app = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const text = yield* Effect.orDie(request.text)
      bodies.push(text.length)
      const message = JSON.parse(text) as { readonly id?: number }
      if (message.id === undefined) return HttpServerResponse.empty({ status: 202 })
      return HttpServerResponse.text(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: {} }), {
        contentType: "application/json"
      })
    })
    const http = inMemoryClient(app, (request) => sent.push(request))
    return { bodies, sent, http }
  }

  it.effect(
    "a small request goes as one buffer, a large one as a counted stream; each is taken before send returns",
    () =>
      Effect.gen(function* () {
        const { bodies, sent, http } = recordingServer()
        const transport = yield* StreamableHttpClient.make({ url: URL_MCP }).pipe(
          Effect.provideService(HttpClientService.HttpClient, http)
        )
        yield* transport.send(JsonRpc.request(1, "tools/call", { name: "echo", arguments: { text: "hi" } }))
        assert.strictEqual(bodies.length, 1, "the small body was read before send returned")
        assert.strictEqual(sent[0]!.body._tag, "Uint8Array")
        const large = "x".repeat(100 * 1024)
        yield* transport.send(JsonRpc.request(2, "tools/call", { name: "echo", arguments: { text: large } }))
        assert.strictEqual(bodies.length, 2, "the large body was read before send returned")
        const body = sent[1]!.body
        assert.strictEqual(body._tag, "Stream")
        assert.isTrue(body._tag === "Stream" && body.contentLength !== undefined && body.contentLength > large.length)
        const replies = yield* transport.incoming.pipe(Stream.take(2), Stream.runCollect)
        assert.strictEqual(replies.length, 2)
      })
  )

  it.effect("without a tracer a POST carries no trace context; with one it does", () =>
    Effect.gen(function* () {
      const { sent, http } = recordingServer()
      const transport = yield* StreamableHttpClient.make({ url: URL_MCP }).pipe(
        Effect.provideService(HttpClientService.HttpClient, http)
      )
      yield* transport.send(JsonRpc.notification("notifications/progress"))
      assert.isUndefined(sent[0]!.headers["traceparent"])
      assert.isUndefined(sent[0]!.headers["b3"])
      const spans: Array<string> = []
      const tracer = Tracer.make({
        span: (options) => {
          spans.push(options.name)
          return new Tracer.NativeSpan(options)
        }
      })
      yield* transport.send(JsonRpc.notification("notifications/progress")).pipe(Effect.withTracer(tracer))
      assert.isDefined(sent[1]!.headers["traceparent"])
      assert.isTrue(spans.length > 0, "the installed tracer saw the POST's span")
    })
  )
})

describe("Streamable HTTP client: SSE replies of known length", () => {
  it.effect("a short SSE reply with Content-Length is read whole (not streamed); an oversize event still fails", () =>
    Effect.gen(function* () {
      const result = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: [] } })
      const text = `id: s_1_0\nretry: 1000\ndata: \n\nevent: message\nid: s_1_1\ndata: ${result}\n\n`
      const app = Effect.succeed(
        HttpServerResponse.text(text, {
          contentType: "text/event-stream",
          headers: { "content-length": String(new TextEncoder().encode(text).length) }
        })
      )
      const inner = inMemoryClient(app)
      // Streaming this reply would die: only a whole read gets its events.
      const http = HttpClientService.make((request) =>
        Effect.map(inner.execute(request), (response) =>
          Object.create(response, { stream: { get: () => Stream.die("the reply was streamed") } })
        )
      )
      const transport = yield* StreamableHttpClient.make({ url: URL_MCP, standaloneStream: false }).pipe(
        Effect.provideService(HttpClientService.HttpClient, http)
      )
      yield* transport.send(JsonRpc.request(1, "tools/call", { name: "echo", arguments: {} }))
      const [reply] = yield* transport.incoming.pipe(Stream.take(1), Stream.runCollect)
      assert.deepStrictEqual(reply!._tag === "Success" ? reply!.success : undefined, JSON.parse(result))
      const small = yield* StreamableHttpClient.make({ url: URL_MCP, standaloneStream: false, maxEventBytes: 16 }).pipe(
        Effect.provideService(HttpClientService.HttpClient, http)
      )
      yield* small.send(JsonRpc.request(1, "tools/call", { name: "echo", arguments: {} }))
      const error = yield* Stream.runDrain(small.incoming).pipe(Effect.flip)
      assert.strictEqual(error.reason, "FrameTooLarge")
    })
  )
})
