/**
 * What the receiving process reads of an exchange to answer for a lost owner:
 * the ids of a POST's requests, which of them an SSE reply answered (lines
 * split across chunks), and the error answers it writes for the rest. Then
 * the owner's side of `Send` and `Rest` through effect/cluster's in-memory
 * entity client: a reply whole in one answer (naming the owner's direct hop),
 * a streamed body kept for one pull, and dropped (its finalizers run) when
 * nobody pulls it; a lost probe answered without running anything.
 */
import * as SseEvent from "@effect-mcp/http/SseEvent"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import { assert, describe, it } from "@effect/vitest"
import * as Entity from "effect/cluster/Entity"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as DirectHop from "../src/DirectHop.ts"
import * as Forward from "../src/internal/forward.ts"
import * as LostAnswers from "../src/internal/lostAnswers.ts"

describe("forwarded exchanges", () => {
  it("reads the ids of the requests of a POST body (notifications and responses have none)", () => {
    assert.deepStrictEqual(LostAnswers.requestsOf(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call" })), {
      ids: [7],
      batch: false
    })
    assert.deepStrictEqual(
      LostAnswers.requestsOf(
        JSON.stringify([
          { jsonrpc: "2.0", id: "a", method: "ping" },
          { jsonrpc: "2.0", method: "notifications/initialized" },
          { jsonrpc: "2.0", id: 3, result: {} },
          { id: 4, method: "not JSON-RPC" }
        ])
      ),
      { ids: ["a"], batch: true }
    )
    assert.deepStrictEqual(LostAnswers.requestsOf("not json"), { ids: [], batch: false })
  })

  it("answers a lost POST with JSON: one error per request, a batch for a batch", () => {
    assert.isUndefined(LostAnswers.lostJson({ ids: [], batch: true }))
    const single = JSON.parse(LostAnswers.lostJson({ ids: [7], batch: false })!)
    assert.deepStrictEqual([single.id, single.error.code], [7, -32603])
    const batch = JSON.parse(LostAnswers.lostJson({ ids: [1, "b"], batch: true })!)
    assert.deepStrictEqual(
      batch.map((answer: { id: unknown }) => answer.id),
      [1, "b"]
    )
  })

  it("follows an SSE reply across chunk boundaries: only responses answer a request", () => {
    const answered = new LostAnswers.AnsweredIds([1, 2])
    answered.see(
      'id: e1\nretry: 1000\ndata: \n\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress",'
    )
    answered.see('"params":{}}\n\nevent: message\ndata: {"jsonrpc":"2.0","id":1,"res')
    assert.deepStrictEqual([...answered.pending], [1, 2])
    answered.see('ult":{}}\n\n')
    assert.deepStrictEqual([...answered.pending], [2])
    assert.strictEqual(answered.end(), "")
  })

  it("ends the event a cut reply stopped in before answering: a complete data line answers its request", () => {
    const line = new LostAnswers.AnsweredIds([1, 2])
    line.see('event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n')
    assert.strictEqual(line.end(), "\n")
    assert.deepStrictEqual([...line.pending], [2])
    const cut = new LostAnswers.AnsweredIds([1])
    cut.see('event: message\ndata: {"jsonrpc":"2.0","id":1,"res')
    assert.strictEqual(cut.end(), "\n\n")
    assert.deepStrictEqual([...cut.pending], [1])
  })

  it("answers each request still pending with an InternalError event", () => {
    const events = SseEvent.parse(LostAnswers.lostEvents([2, "x"]))
    assert.deepStrictEqual(
      events.map((event) => event.event),
      ["message", "message"]
    )
    const answers = events.map((event) => {
      const decoded = JsonRpcCodec.decode(event.data)
      assert.isTrue(decoded._tag === "Success")
      return (decoded as { readonly success: { id: unknown; error: { code: number; message: string } } }).success
    })
    assert.deepStrictEqual(
      answers.map((answer) => [answer.id, answer.error.code]),
      [
        [2, -32603],
        ["x", -32603]
      ]
    )
    assert.match(answers[0]!.error.message, /lost/)
  })
})

const exchange = (url: string, body = ""): Forward.Exchange => ({
  method: "POST",
  url,
  headers: { "content-type": "application/json", "mcp-session-id": "s1" },
  body
})

/** An owner whose replies depend on the path: whole JSON, a streamed SSE body, or refused. */
const owner = (ended: { count: number }, seen: Array<string>, via?: string) =>
  Forward.McpSession.toLayer(
    Effect.succeed(
      Forward.serveExchange(
        (request) =>
          Effect.gen(function* () {
            seen.push(yield* Effect.orDie(Forward.toRequest(request).text))
            if (request.url === "/whole") {
              return HttpServerResponse.text('{"jsonrpc":"2.0","id":1,"result":{}}', {
                contentType: "application/json",
                headers: { "mcp-session-id": "s1" }
              })
            }
            if (request.url === "/refused") return undefined
            return HttpServerResponse.stream(
              Stream.make("event: message\n", "data: {}\n\n").pipe(
                Stream.encodeText,
                Stream.ensuring(Effect.sync(() => ended.count++))
              ),
              { contentType: "text/event-stream" }
            )
          }),
        via
      )
    )
  )

describe("the owner's side of a forwarded exchange", () => {
  it.effect("answers a reply known whole in one Send, with its head", () =>
    Effect.gen(function* () {
      const seen: Array<string> = []
      const client = yield* (yield* Entity.makeTestClient(Forward.McpSession, owner({ count: 0 }, seen)))("s1")
      const reply = yield* client.Send(exchange("/whole", '{"jsonrpc":"2.0","id":1,"method":"ping"}'))
      assert.strictEqual(reply.status, 200)
      assert.strictEqual(reply.contentType, "application/json")
      assert.strictEqual(reply.headers["mcp-session-id"], "s1")
      assert.strictEqual(reply.body, '{"jsonrpc":"2.0","id":1,"result":{}}')
      assert.isUndefined(reply.rest)
      assert.isFalse(reply.lost)
      // The owner's server read the POST body as it was sent.
      assert.deepStrictEqual(seen, ['{"jsonrpc":"2.0","id":1,"method":"ping"}'])
      const refused = yield* client.Send(exchange("/refused"))
      assert.isTrue(refused.lost)
    }).pipe(Effect.scoped, Effect.provide(ShardingConfig.layer()))
  )

  it.effect("names the owner's direct hop in its replies; a lost probe is answered lost without running anything", () =>
    Effect.gen(function* () {
      const seen: Array<string> = []
      const client = yield* (yield* Entity.makeTestClient(
        Forward.McpSession,
        owner({ count: 0 }, seen, "k http://h:1")
      ))("s1")
      const reply = yield* client.Send(exchange("/whole", "{}"))
      assert.strictEqual(reply.via, "k http://h:1")
      const probe = exchange("/whole", "{}")
      const probed = yield* client.Send({ ...probe, headers: { ...probe.headers, [Forward.HEADER_LOST_PROBE]: "1" } })
      assert.isTrue(probed.lost)
      assert.deepStrictEqual(seen, ["{}"])
    }).pipe(Effect.scoped, Effect.provide(ShardingConfig.layer()))
  )

  it("never carries the headers one runner sets for another from a client's request", () => {
    const request = HttpServerRequest.fromWeb(
      new Request("http://h/mcp", {
        method: "POST",
        headers: {
          "mcp-session-id": "s1",
          [Forward.HEADER_NEW_SESSION]: "chosen",
          [Forward.HEADER_CLIENT]: "10.0.0.1",
          [Forward.HEADER_SENT_AT]: "0",
          [Forward.HEADER_LOST_PROBE]: "1",
          [DirectHop.HEADER_SECRET]: "guess"
        }
      })
    )
    const headers = Forward.toExchange(request, "", { [Forward.HEADER_SENT_AT]: "5" }).headers
    assert.deepStrictEqual(
      Object.keys(headers).filter((name) => name.startsWith("x-effect-mcp")),
      [Forward.HEADER_SENT_AT]
    )
    assert.strictEqual(headers[Forward.HEADER_SENT_AT], "5")
    assert.strictEqual(headers["mcp-session-id"], "s1")
  })

  it.effect("keeps a streamed body for one Rest; a second pull, or an unknown name, reads as lost", () =>
    Effect.gen(function* () {
      const ended = { count: 0 }
      const client = yield* (yield* Entity.makeTestClient(Forward.McpSession, owner(ended, [])))("s1")
      const reply = yield* client.Send(exchange("/stream"))
      assert.strictEqual(reply.contentType, "text/event-stream")
      assert.strictEqual(reply.body, "")
      assert.isDefined(reply.rest)
      const body = yield* Stream.runCollect(client.Rest({ name: reply.rest! }))
      assert.strictEqual(body.join(""), "event: message\ndata: {}\n\n")
      assert.strictEqual(ended.count, 1)
      assert.deepStrictEqual(yield* Stream.runCollect(client.Rest({ name: reply.rest! })), [Forward.LOST])
      assert.deepStrictEqual(yield* Stream.runCollect(client.Rest({ name: "unknown" })), [Forward.LOST])
    }).pipe(Effect.scoped, Effect.provide(ShardingConfig.layer()))
  )

  it.effect("streams a GET's reply as a typed head, then its body's text; a refused exchange as Lost", () =>
    Effect.gen(function* () {
      const client = yield* (yield* Entity.makeTestClient(Forward.McpSession, owner({ count: 0 }, [])))("s1")
      const whole = yield* Stream.runCollect(client.Http(exchange("/whole")))
      assert.deepStrictEqual(whole, [
        {
          _tag: "Head",
          status: 200,
          contentType: "application/json",
          headers: { "content-type": "application/json", "mcp-session-id": "s1" },
          whole: true
        },
        '{"jsonrpc":"2.0","id":1,"result":{}}'
      ])
      const streamed = yield* Stream.runCollect(client.Http(exchange("/stream")))
      assert.isTrue(Forward.isHead(streamed[0]!) && !streamed[0].whole)
      assert.strictEqual(streamed.slice(1).join(""), "event: message\ndata: {}\n\n")
      assert.deepStrictEqual(yield* Stream.runCollect(client.Http(exchange("/refused"))), [Forward.LOST])
    }).pipe(Effect.scoped, Effect.provide(ShardingConfig.layer()))
  )

  it.effect("drops a streamed body nobody pulled, ending its exchange", () =>
    Effect.gen(function* () {
      const ended = { count: 0 }
      const client = yield* (yield* Entity.makeTestClient(Forward.McpSession, owner(ended, [])))("s1")
      const reply = yield* client.Send(exchange("/stream"))
      yield* TestClock.adjust("29 seconds")
      assert.strictEqual(ended.count, 0)
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(ended.count, 1)
      assert.deepStrictEqual(yield* Stream.runCollect(client.Rest({ name: reply.rest! })), [Forward.LOST])
    }).pipe(Effect.scoped, Effect.provide(ShardingConfig.layer()))
  )
})
