/**
 * A live handoff: a session's shard moves (a runner joined) while a long
 * call runs on its former owner, which is not lost. Its next owner reopens
 * the session and answers what its streams still owed (-32603); the former
 * owner, before its sweep lets the session go, finishes the call. The
 * stream, resumed anywhere, carries one answer for the call: the one stored
 * first. Before, the store kept both, and a client resuming the stream read
 * two responses to one request.
 *
 * Two owners on one session state store and one shared event store in this
 * process (in memory, and on SQLite as `NodeClusteredServer` keeps them), on the TestClock; the call's stream is closed by its handler
 * (the client would resume it), and the handler finishes when the test says.
 */
import { assert, describe, it } from "@effect/vitest"
import * as SessionState from "@effect-mcp/cluster/SessionState"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as EventStore from "@effect-mcp/http/EventStore"
import * as NodeSqlite from "@effect-mcp/sql/NodeSqlite"
import * as SqlEventStore from "@effect-mcp/sql/SqlEventStore"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { TestClock } from "effect/testing"
import { runIdle } from "../../engine/test/fixtures.ts"
import {
  inMemoryClient,
  openSession,
  rawPost,
  rawRequest,
  readAll,
  serverOptions,
  sseData
} from "../../http/test/StreamableHttpFixtures.ts"
import { oneAnswer } from "../src/internal/oneAnswer.ts"
import { Owner } from "../src/internal/owner.ts"

const on = (sessionId: string) => ({ "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" })
const call = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "long", arguments: {} } }
const finished = { jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "finished" }] } }
const lost = {
  jsonrpc: "2.0",
  id: 7,
  error: {
    code: -32603,
    message: "the process serving this session was lost before the request completed; it may not have run"
  }
}

/**
 * One runner's owner on `store` and `events` (given to its server as
 * `ClusteredHttpServer` gives them), with a client of its endpoint; its
 * calls close their stream, then finish once `release` is done.
 */
const runner = (
  store: SessionState.SessionStateShape,
  events: EventStore.EventStoreShape,
  self: string,
  release: Deferred.Deferred<void>
) =>
  Effect.gen(function* () {
    const long: Session.Handler = () =>
      StreamableHttpServer.closeRequestStream.pipe(
        Effect.andThen(Deferred.await(release)),
        Effect.as({ content: [{ type: "text", text: "finished" }] })
      )
    const server = yield* StreamableHttpServer.make({
      session: ServerSession.make(serverOptions(new Map([["tools/call", long]]))),
      eventStore: oneAnswer(events, store)
    })
    const clock = yield* Effect.clockWith(Effect.succeed)
    const owner = new Owner(server, store, { self, activityMs: 6_000, clock })
    yield* owner.run
    const handler = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      owner.serve(request, request.headers["mcp-session-id"])
    )
    return { server, http: inMemoryClient(handler) }
  })

const resume = (http: HttpClient.HttpClient, sessionId: string, lastEventId: string) =>
  Effect.flatMap(
    rawRequest(http, "GET", { ...on(sessionId), accept: "text/event-stream", "last-event-id": lastEventId }),
    readAll
  )

type Stores = Effect.Effect<
  { readonly store: SessionState.SessionStateShape; readonly events: EventStore.EventStoreShape },
  unknown,
  Scope.Scope
>

const inMemory: Stores = Effect.sync(() => ({
  store: SessionState.makeMemory(),
  events: { ...EventStore.makeMemory(), shared: true }
}))

const onSqlite: Stores = Effect.gen(function* () {
  const sql = yield* Layer.build(NodeSqlite.layer({ filename: ":memory:" }))
  return yield* Effect.all({ store: SessionState.makeSql(), events: SqlEventStore.make() }).pipe(
    Effect.provideContext(sql)
  )
})

/**
 * A session opened on runner a, call 7 started there (its stream closed, its
 * priming event's id kept); then runner b, sharing the stores, serves a
 * ping of the session (reopening it), and the call finishes on a: before
 * b's ping when `finishFirst`, after it otherwise. Returns what resuming the
 * call's stream through b replays, and what b's store still says is owed.
 */
const handoff = (finishFirst: boolean, stores: Stores) =>
  Effect.gen(function* () {
    const { store, events } = yield* stores
    const release = yield* Deferred.make<void>()
    const a = yield* runner(store, events, "a", release)
    const id = yield* openSession(a.http)
    const started = yield* rawPost(a.http, call, on(id))
    const priming = /^id: (\S+)$/m.exec(started.text)![1]!
    yield* TestClock.adjust(1_000)
    if (finishFirst) yield* runIdle(Deferred.succeed(release, undefined))
    const b = yield* runner(store, events, "b", yield* Deferred.make<void>())
    const ping = yield* rawPost(b.http, { jsonrpc: "2.0", id: 8, method: "ping" }, on(id))
    assert.strictEqual(ping.status, 200)
    assert.isTrue(b.server.hasSession(id))
    // The former owner still holds the session: its sweep has not run since the shard moved.
    assert.isTrue(a.server.hasSession(id))
    if (!finishFirst) yield* runIdle(Deferred.succeed(release, undefined))
    const resumed = yield* resume(b.http, id, priming)
    assert.strictEqual(resumed.status, 200)
    return { answers: sseData(resumed.text), owed: yield* Effect.orDie(events.owed!(id)) }
  })

describe.each([
  ["in memory", inMemory],
  ["on SQLite", onSqlite]
] as const)("clustered sessions: a call running on its former owner during a live handoff (%s)", (_, stores) => {
  it.effect("finished after the next owner answered it -32603: the stream carries that answer only", () =>
    Effect.gen(function* () {
      const { answers, owed } = yield* handoff(false, stores)
      assert.deepStrictEqual(answers, [lost])
      assert.deepStrictEqual(owed, [])
    })
  )

  it.effect("finished before the next owner reopened the session: the stream carries its result only", () =>
    Effect.gen(function* () {
      const { answers, owed } = yield* handoff(true, stores)
      assert.deepStrictEqual(answers, [finished])
      assert.deepStrictEqual(owed, [])
    })
  )
})
