/**
 * Resuming streams (found under attack, item 8: a resumed stream that drops
 * again lost its messages, because a stream was forgotten once written out in
 * full and a second resume from the same Last-Event-ID got 400). Events stay
 * replayable for their retention window however many times a client resumes;
 * the in-memory store bounds that window by bytes as well as by count. A
 * session reopened from a shared store answers, on their streams, the
 * requests it still owed where it was (once), never one its client
 * cancelled, and a store that is not shared is told nothing of what
 * streams owe.
 */
import { assert, describe, it } from "@effect/vitest"
import * as EventStore from "@effect-mcp/http/EventStore"
import type * as Session from "@effect-mcp/engine/Session"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as TestClock from "effect/testing/TestClock"
import { runIdle } from "../../engine/test/fixtures.ts"
import { openSession, rawPost, rawRequest, readAll, serve, serverOptions, sseData } from "./StreamableHttpFixtures.ts"

const session = (id: string) => ({ "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" })

const call = (id: number, name: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: {} }
})

describe("Streamable HTTP: resuming a stream again", () => {
  it.effect("a stream delivered in full is replayed again from the same Last-Event-ID, as often as asked", () =>
    Effect.gen(function* () {
      const release = yield* Deferred.make<void>()
      const reconnecting: Session.Handler = () =>
        StreamableHttpServer.closeRequestStream.pipe(
          Effect.andThen(Deferred.await(release)),
          Effect.as({ content: [{ type: "text", text: "reconnected" }] })
        )
      const { http } = yield* serve({ server: serverOptions(new Map([["tools/call", reconnecting]])) })
      const id = yield* openSession(http)
      const reply = yield* rawPost(http, call(7, "test_reconnection"), session(id))
      const primingId = /id: (\S+)/.exec(reply.text)![1]!
      // Returns once the released handler, and the answer it stores, have come to rest.
      yield* runIdle(Deferred.succeed(release, undefined))
      const expected = [{ jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "reconnected" }] } }]
      // Each resume reads the stream to its end; the client may still have lost it and come back.
      for (let round = 0; round < 3; round++) {
        const resumed = yield* readAll(
          yield* rawRequest(http, "GET", { ...session(id), accept: "text/event-stream", "last-event-id": primingId })
        )
        assert.strictEqual(resumed.status, 200, `resume ${round}`)
        assert.deepStrictEqual(sseData(resumed.text), expected)
      }
      // A stream answered at once (one plain body) is resumable too.
      const quick = yield* rawPost(http, call(8, "echo"), session(id))
      const quickPriming = /id: (\S+)/.exec(quick.text)![1]!
      for (let round = 0; round < 2; round++) {
        const resumed = yield* readAll(
          yield* rawRequest(http, "GET", { ...session(id), accept: "text/event-stream", "last-event-id": quickPriming })
        )
        assert.strictEqual(resumed.status, 200)
        assert.strictEqual(sseData(resumed.text).length, 1)
      }
      // Another session still cannot resume it.
      const other = yield* openSession(http)
      const foreign = yield* rawRequest(http, "GET", {
        ...session(other),
        accept: "text/event-stream",
        "last-event-id": primingId
      })
      assert.strictEqual(foreign.status, 400)
    })
  )
})

describe("Streamable HTTP: a session reopened from a shared event store", () => {
  // Ends its stream's connection (the client would resume it), then runs until its session ends.
  const inFlight: Session.Handler = () => Effect.andThen(StreamableHttpServer.closeRequestStream, Effect.never)
  const options = (eventStore: EventStore.EventStoreShape) => ({
    eventStore,
    server: serverOptions(new Map([["tools/call", inFlight]]))
  })
  const resume = (http: HttpClient.HttpClient, id: string, lastEventId: string) =>
    Effect.flatMap(
      rawRequest(http, "GET", { ...session(id), accept: "text/event-stream", "last-event-id": lastEventId }),
      readAll
    )
  const lost = {
    jsonrpc: "2.0",
    id: 7,
    error: {
      code: -32603,
      message: "the process serving this session was lost before the request completed; it may not have run"
    }
  }

  it.effect("a request in flight where it was is answered with -32603 on its stream, once however often it moves", () =>
    Effect.gen(function* () {
      const store: EventStore.EventStoreShape = { ...EventStore.makeMemory(), shared: true }
      const first = yield* serve(options(store))
      const id = yield* openSession(first.http)
      const dropped = yield* rawPost(first.http, call(7, "slow"), session(id))
      const primingId = /id: (\S+)/.exec(dropped.text)![1]!
      assert.deepStrictEqual(
        (yield* store.owed!(id)).map((owed) => owed.ids),
        [[7]]
      )
      const snapshot = first.server.snapshot(id)!
      // Its process lets it go with the call in flight (as a lost one would): the shared store keeps its events.
      yield* first.server.closeSession(id, "Released")
      yield* TestClock.adjust("1 second")
      const second = yield* serve(options(store))
      assert.isTrue(yield* second.server.restoreSession(id, snapshot))
      const resumed = yield* resume(second.http, id, primingId)
      assert.strictEqual(resumed.status, 200)
      assert.deepStrictEqual(sseData(resumed.text), [lost])
      assert.deepStrictEqual(yield* store.owed!(id), [])
      // Moved once more: nothing is owed any more, so nothing more is answered.
      yield* second.server.closeSession(id, "Released")
      yield* TestClock.adjust("1 second")
      const third = yield* serve(options(store))
      assert.isTrue(yield* third.server.restoreSession(id, snapshot))
      assert.deepStrictEqual(sseData((yield* resume(third.http, id, primingId)).text), [lost])
    })
  )

  it.effect("a request its client cancelled is no longer owed: only the others get -32603 where it moves", () =>
    Effect.gen(function* () {
      const store: EventStore.EventStoreShape = { ...EventStore.makeMemory(), shared: true }
      const first = yield* serve(options(store))
      const id = yield* openSession(first.http)
      const cancelledPriming = /id: (\S+)/.exec((yield* rawPost(first.http, call(7, "slow"), session(id))).text)![1]!
      const owedPriming = /id: (\S+)/.exec((yield* rawPost(first.http, call(8, "slow"), session(id))).text)![1]!
      const cancel = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7 } }
      assert.strictEqual((yield* rawPost(first.http, cancel, session(id))).status, 202)
      // Request 7 is never answered (its client cancelled it): its stream owes nothing more.
      assert.deepStrictEqual(
        (yield* store.owed!(id)).map((owed) => owed.ids),
        [[8]]
      )
      const snapshot = first.server.snapshot(id)!
      yield* first.server.closeSession(id, "Released")
      yield* TestClock.adjust("1 second")
      const second = yield* serve(options(store))
      assert.isTrue(yield* second.server.restoreSession(id, snapshot))
      // The cancelled request's stream holds no answer; the other one holds its -32603.
      const cancelled = yield* resume(second.http, id, cancelledPriming)
      assert.strictEqual(cancelled.status, 200)
      assert.deepStrictEqual(sseData(cancelled.text), [])
      assert.deepStrictEqual(sseData((yield* resume(second.http, id, owedPriming)).text), [{ ...lost, id: 8 }])
      assert.deepStrictEqual(yield* store.owed!(id), [])
    })
  )

  it.effect("a store that is not shared is told nothing of what streams owe", () =>
    Effect.gen(function* () {
      const store = EventStore.makeMemory()
      const { http } = yield* serve(options(store))
      const id = yield* openSession(http)
      yield* rawPost(http, call(7, "slow"), session(id))
      assert.deepStrictEqual(yield* store.owed!(id), [])
    })
  )
})

describe("EventStore (in memory): retention by bytes", () => {
  it.effect("the oldest events go first once the data kept exceeds maxBytes; the newest is always kept", () =>
    Effect.gen(function* () {
      const store = EventStore.makeMemory({ maxBytes: 10 })
      const a1 = yield* store.append("a", "aaaa")
      const a2 = yield* store.append("a", "bbbb")
      const b1 = yield* store.append("b", "cccc")
      // 12 > 10: a's oldest event went, so resuming after it is impossible; after a2 replays nothing.
      assert.isUndefined(yield* store.replayAfter(a1))
      assert.deepStrictEqual((yield* store.replayAfter(a2))?.events, [])
      const big = yield* store.append("c", "x".repeat(50))
      // Everything older went; the one event over the limit stays.
      assert.isUndefined(yield* store.replayAfter(a2))
      assert.isUndefined(yield* store.replayAfter(b1))
      assert.deepStrictEqual((yield* store.replayAfter(big))?.events, [])
      const next = yield* store.append("c", "y")
      assert.isUndefined(yield* store.replayAfter(big))
      assert.deepStrictEqual((yield* store.replayAfter(next))?.events, [])
    })
  )
})
