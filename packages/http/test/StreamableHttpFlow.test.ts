/**
 * Flow control of the Streamable HTTP transport: the server's bounded SSE
 * buffers (send suspends, waiters go out in arrival order, an interrupted
 * waiter leaves nothing behind) and the acceptance signal that keeps the
 * client's POSTs in order (the reply starts before its result; a server that
 * holds it back gets `acceptTimeout` after the upload).
 */
import { assert, describe, it } from "@effect/vitest"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import { forkIdle } from "../../engine/test/fixtures.ts"
import {
  inMemoryClient,
  openEvents,
  openSession,
  postHeaders,
  rawRequest,
  serverOptions,
  sseData,
  URL_MCP
} from "./StreamableHttpFixtures.ts"

const session = (id: string, version = "2025-11-25") => ({ "mcp-session-id": id, "mcp-protocol-version": version })

const notifications = (texts: ReadonlyArray<string>) =>
  texts.map((data) => ({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data } }))

describe("Streamable HTTP server: bounded SSE buffers", () => {
  it.effect("send suspends on a full GET stream; waiters go out in arrival order, an interrupted one never", () =>
    Effect.gen(function* () {
      const sessions: Array<Session.SessionShape> = []
      const server = yield* StreamableHttpServer.make({
        session: ServerSession.make(serverOptions()).pipe(Effect.tap((s) => Effect.sync(() => sessions.push(s)))),
        eventStore: false,
        maxBufferedMessages: 2
      })
      const http = inMemoryClient(server.handler)
      const id = yield* openSession(http)
      // Opened, not read yet: nothing leaves the buffer.
      const get = yield* rawRequest(http, "GET", { ...session(id), accept: "text/event-stream" })
      const notify = (data: string) => sessions[0]!.peer.notify("notifications/message", { level: "info", data })
      yield* notify("m0")
      yield* notify("m1")
      const m2 = yield* forkIdle(notify("m2"))
      const m3 = yield* forkIdle(notify("m3"))
      const m4 = yield* forkIdle(notify("m4"))
      assert.isUndefined(m2.pollUnsafe(), "a send on a full stream suspends")
      assert.isUndefined(m4.pollUnsafe(), "a later send waits behind the suspended ones")
      yield* Fiber.interrupt(m3)
      const events = yield* openEvents(get)
      const received: Array<unknown> = []
      for (let i = 0; i < 4; i++) received.push(JSON.parse((yield* events.next).data))
      assert.deepStrictEqual(received, notifications(["m0", "m1", "m2", "m4"]))
      yield* Fiber.join(m2)
      yield* Fiber.join(m4)
      // The stream goes on after the interrupt.
      yield* notify("m5")
      assert.deepStrictEqual(JSON.parse((yield* events.next).data), notifications(["m5"])[0])
      yield* Fiber.interrupt(events.fiber)
    })
  )

  it.effect("an interrupted waiter is never stored: a resumed stream replays only what was sent", () =>
    Effect.gen(function* () {
      const sessions: Array<Session.SessionShape> = []
      const server = yield* StreamableHttpServer.make({
        session: ServerSession.make(serverOptions()).pipe(Effect.tap((s) => Effect.sync(() => sessions.push(s)))),
        maxBufferedMessages: 2
      })
      const http = inMemoryClient(server.handler)
      const id = yield* openSession(http)
      const first = yield* openEvents(yield* rawRequest(http, "GET", { ...session(id), accept: "text/event-stream" }))
      const priming = yield* first.next
      // The reader stops: the buffer fills behind it.
      yield* Fiber.interrupt(first.fiber)
      const get = yield* rawRequest(http, "GET", {
        ...session(id),
        accept: "text/event-stream",
        "last-event-id": priming.id!
      })
      const notify = (data: string) => sessions[0]!.peer.notify("notifications/message", { level: "info", data })
      yield* notify("a")
      yield* notify("b")
      const blocked = yield* forkIdle(notify("lost"))
      assert.isUndefined(blocked.pollUnsafe(), "a send on a full stream suspends")
      yield* Fiber.interrupt(blocked)
      const events = yield* openEvents(get)
      const a = yield* events.next
      const b = yield* events.next
      yield* notify("c")
      const c = yield* events.next
      assert.deepStrictEqual(
        [a, b, c].map((event) => JSON.parse(event.data).params.data),
        ["a", "b", "c"]
      )
      yield* Fiber.interrupt(events.fiber)
      // Resuming after `a` replays `b` and `c`: the interrupted frame never became an event.
      const resumed = yield* openEvents(
        yield* rawRequest(http, "GET", { ...session(id), accept: "text/event-stream", "last-event-id": a.id! })
      )
      const replayed = [yield* resumed.next, yield* resumed.next].map((event) => JSON.parse(event.data).params.data)
      assert.deepStrictEqual(replayed, ["b", "c"])
      yield* Fiber.interrupt(resumed.fiber)
    })
  )
})

describe("Streamable HTTP: a POST is accepted before its result", () => {
  it.effect("a JSON reply's status and headers come before the result; the body is the result", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const slow: Session.Handler = () => Effect.as(Deferred.await(gate), { content: [{ type: "text", text: "done" }] })
      const server = yield* StreamableHttpServer.make({
        session: ServerSession.make(serverOptions(new Map([["tools/call", slow]]))),
        responseMode: "json"
      })
      const http = inMemoryClient(server.handler)
      const id = yield* openSession(http)
      const response = yield* Effect.orDie(
        http.execute(
          HttpClientRequest.post(URL_MCP).pipe(
            HttpClientRequest.bodyText(
              JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "slow" } }),
              "application/json"
            ),
            HttpClientRequest.setHeaders({ ...postHeaders, ...session(id) })
          )
        )
      )
      // The status line and headers arrived while the handler still waits.
      assert.strictEqual(response.status, 200)
      assert.strictEqual(response.headers["content-type"], "application/json")
      const body = yield* forkIdle(Effect.orDie(response.text))
      assert.isUndefined(body.pollUnsafe(), "the body waits for the result")
      yield* Deferred.succeed(gate, undefined)
      assert.deepStrictEqual(JSON.parse(yield* Fiber.join(body)), {
        jsonrpc: "2.0",
        id: 7,
        result: { content: [{ type: "text", text: "done" }] }
      })
    })
  )

  it.effect("an SSE reply without a priming event opens with a comment, before any event", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const slow: Session.Handler = () => Effect.as(Deferred.await(gate), { content: [] })
      const server = yield* StreamableHttpServer.make({
        session: ServerSession.make(serverOptions(new Map([["tools/call", slow]])))
      })
      const http = inMemoryClient(server.handler)
      // 2025-06-18 clients are sent no priming event.
      const id = yield* openSession(http, "2025-06-18")
      const response = yield* Effect.orDie(
        http.execute(
          HttpClientRequest.post(URL_MCP).pipe(
            HttpClientRequest.bodyText(
              JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "slow" } }),
              "application/json"
            ),
            HttpClientRequest.setHeaders({ ...postHeaders, ...session(id, "2025-06-18") })
          )
        )
      )
      assert.strictEqual(response.status, 200)
      const chunks = yield* forkIdle(response.stream.pipe(Stream.decodeText, Stream.runCollect, Effect.orDie))
      assert.isUndefined(chunks.pollUnsafe(), "the reply is still open")
      yield* Deferred.succeed(gate, undefined)
      const text = (yield* Fiber.join(chunks)).join("")
      assert.isTrue(text.startsWith(":\n\nevent: message\n"), `the reply opens with a comment: ${JSON.stringify(text)}`)
      assert.deepStrictEqual(sseData(text), [{ jsonrpc: "2.0", id: 7, result: { content: [] } }])
    })
  )
})

describe("Streamable HTTP client: acceptance of a request's POST", () => {
  it.effect("a message after a request waits until the server takes the request; a later request does not", () =>
    Effect.gen(function* () {
      const held = yield* Deferred.make<void>()
      const bodies: Array<{ readonly id?: number; readonly method?: string }> = []
      // A server that holds each reply's headers back until its result.
      const app = Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const message = JSON.parse(yield* Effect.orDie(request.text)) as {
          readonly id?: number
          readonly method?: string
        }
        bodies.push(message)
        if (message.id === undefined) return HttpServerResponse.empty({ status: 202 })
        yield* Deferred.await(held)
        return HttpServerResponse.text(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: {} }), {
          contentType: "application/json"
        })
      })
      const transport = yield* StreamableHttpClient.make({ url: URL_MCP, acceptTimeout: "1 second" }).pipe(
        Effect.provideService(HttpClient.HttpClient, inMemoryClient(app))
      )
      // A request's send returns once its body is uploaded; another request follows at once.
      yield* transport.send(JsonRpc.request(1, "tools/call", { name: "slow" }))
      yield* transport.send(JsonRpc.request(2, "tools/call", { name: "slow" }))
      assert.deepStrictEqual(
        bodies.map((body) => body.id),
        [1, 2]
      )
      // A notification must not overtake them: it waits for their replies to start, or for acceptTimeout.
      const next = yield* forkIdle(transport.send(JsonRpc.notification("notifications/progress")))
      assert.strictEqual(bodies.length, 2, "the notification waits for the requests' acceptance")
      assert.isUndefined(next.pollUnsafe())
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(next)
      assert.deepStrictEqual(
        bodies.map((body) => body.method),
        ["tools/call", "tools/call", "notifications/progress"]
      )
      yield* Deferred.succeed(held, undefined)
      const replies = yield* transport.incoming.pipe(Stream.take(2), Stream.runCollect)
      assert.strictEqual(replies.length, 2)
    })
  )

  it.effect("with a server that starts its reply at once, the next message goes as soon as the request is taken", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const slow: Session.Handler = () => Effect.as(Deferred.await(gate), { content: [] })
      const server = yield* StreamableHttpServer.make({
        session: ServerSession.make(serverOptions(new Map([["tools/call", slow]]))),
        responseMode: "json"
      })
      const transport = yield* StreamableHttpClient.make({ url: URL_MCP, acceptTimeout: "1 hour" }).pipe(
        Effect.provideService(HttpClient.HttpClient, inMemoryClient(server.handler))
      )
      yield* transport.send(
        JsonRpc.request(0, "initialize", {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "flow", version: "1" }
        })
      )
      yield* transport.send(JsonRpc.notification("notifications/initialized"))
      yield* transport.send(JsonRpc.request(1, "tools/call", { name: "slow" }))
      // The JSON reply's headers came before the result: nothing waits for acceptTimeout.
      const next = yield* forkIdle(transport.send(JsonRpc.notification("notifications/roots/list_changed")))
      assert.isDefined(next.pollUnsafe(), "the notification went while the request is still running")
      yield* Deferred.succeed(gate, undefined)
      const replies = yield* transport.incoming.pipe(Stream.take(2), Stream.runCollect)
      assert.deepStrictEqual(
        replies.map((frame) =>
          frame._tag === "Success" ? (frame.success as { readonly id?: unknown }).id : undefined
        ),
        [0, 1]
      )
    })
  )
})
