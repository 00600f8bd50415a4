/**
 * A session's stored events across owners: a session whose runner was lost
 * is resumed (`Last-Event-ID`) on its next owner, which reopens it and
 * replays what its stream missed; once it can no longer be reopened (idle
 * past the timeout, or its row gone), the events its lost runner left in the
 * shared event store are not replayed: 404, as any request naming it gets.
 * Two owners on one session state store and one shared event store in this
 * process, on the TestClock; the first one's scope closed stands for its
 * runner lost (its sessions' events stay in the store, as a stopping
 * server's do: they may go on elsewhere).
 */
import { assert, describe, it } from "@effect/vitest"
import * as SessionState from "@effect-mcp/cluster/SessionState"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import * as EventStore from "@effect-mcp/http/EventStore"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as Scope from "effect/Scope"
import { TestClock } from "effect/testing"
import {
  inMemoryClient,
  openSession,
  rawPost,
  rawRequest,
  readAll,
  serverOptions
} from "../../http/test/StreamableHttpFixtures.ts"
import { Owner } from "../src/internal/owner.ts"

/** The idle timeout, and the owners' activity period (its tenth, as `ClusteredHttpServer` makes it). */
const IDLE_MS = 60_000
const ACTIVITY_MS = 6_000

/** One runner's owner on `store` and `events`, in `scope`, with a client of its endpoint. */
const runner = (
  store: SessionState.SessionStateShape,
  events: EventStore.EventStoreShape,
  self: string,
  scope: Scope.Scope
) =>
  Effect.gen(function* () {
    const server = yield* StreamableHttpServer.make({
      session: ServerSession.make(serverOptions()),
      sessionIdleTimeout: IDLE_MS,
      eventStore: events
    })
    const clock = yield* Effect.clockWith(Effect.succeed)
    const owner = new Owner(server, store, { self, activityMs: ACTIVITY_MS, clock })
    yield* owner.run
    const handler = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      owner.serve(request, request.headers["mcp-session-id"])
    )
    return { owner, server, http: inMemoryClient(handler) }
  }).pipe(Scope.provide(scope))

const on = (sessionId: string) => ({ "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" })
const secret = { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { text: "secret" } } }

/**
 * A session opened on a first runner and called (its reply's events stored),
 * the first runner then lost; the session resumed from its reply's priming
 * event through a second runner `after` milliseconds later.
 */
const resumedAfter = (after: number, dropRow = false) =>
  Effect.gen(function* () {
    const store = SessionState.makeMemory()
    const events: EventStore.EventStoreShape = { ...EventStore.makeMemory(), shared: true }
    const lost = yield* Scope.make()
    const a = yield* runner(store, events, "a", lost)
    const id = yield* openSession(a.http)
    const reply = yield* rawPost(a.http, secret, on(id))
    assert.include(reply.text, "echo:secret")
    const priming = /^id: (\S+)$/m.exec(reply.text)![1]!
    yield* Scope.close(lost, Exit.void)
    // The lost runner's events stay: a session it was serving may go on elsewhere.
    assert.isDefined(yield* Effect.orDie(events.replayAfter(priming)))
    if (dropRow) yield* Effect.orDie(store.remove(id))
    const b = yield* runner(store, events, "b", yield* Effect.scope)
    yield* TestClock.adjust(after)
    const resumed = yield* readAll(
      yield* rawRequest(b.http, "GET", { ...on(id), accept: "text/event-stream", "last-event-id": priming })
    )
    return { resumed, reopened: b.server.hasSession(id) }
  })

describe("clustered sessions: a resumption on the next owner", () => {
  it.effect("of a session it reopens replays what its stream missed", () =>
    Effect.gen(function* () {
      const { resumed, reopened } = yield* resumedAfter(IDLE_MS / 2)
      assert.isTrue(reopened)
      assert.strictEqual(resumed.status, 200)
      assert.include(resumed.text, "echo:secret")
    })
  )

  it.effect("of a session idle past the timeout (not reopened) is 404, not its stored events", () =>
    Effect.gen(function* () {
      const { resumed, reopened } = yield* resumedAfter(IDLE_MS + 2 * ACTIVITY_MS + 1)
      assert.isFalse(reopened)
      assert.strictEqual(resumed.status, 404)
      assert.notInclude(resumed.text, "secret")
    })
  )

  it.effect("of a session whose row is gone (ended, or expired with its lost runner) is 404", () =>
    Effect.gen(function* () {
      const { resumed, reopened } = yield* resumedAfter(1_000, true)
      assert.isFalse(reopened)
      assert.strictEqual(resumed.status, 404)
      assert.notInclude(resumed.text, "secret")
    })
  )
})
