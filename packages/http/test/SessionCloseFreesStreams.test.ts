/**
 * Closing a stateful Streamable HTTP session frees what it holds in the
 * event store: its finished streams too (a reply delivered in full is no
 * longer listed by the session, but its events stay stored for a client that
 * resumes it), whether the session ends by DELETE, idle expiry, `closeSession`
 * or the server's end. A shared store (several processes) forgets them too
 * when the session is deleted or expires, so no process replays an ended
 * session's events on `Last-Event-ID`; only a session let go to go on
 * elsewhere, or left by a stopping server, keeps them there. Checked on the store's observable state: every event
 * id the client was given stops being replayable. The heap itself is measured
 * by `apps/bench/src/SessionCloseHeap.ts` in a process of its own (a worker
 * has no `gc`), run by the last test here.
 */
import { assert, describe, it } from "@effect/vitest"
import * as EventStore from "@effect-mcp/http/EventStore"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as HttpClient from "effect/http/HttpClient"
import * as Scope from "effect/Scope"
import { TestClock } from "effect/testing"
import { fileURLToPath } from "node:url"
import * as HeapScript from "../../../apps/bench/src/HeapScript.ts"
import { openEvents, openSession, rawPost, rawRequest, readAll, serve } from "./StreamableHttpFixtures.ts"

const headers = (id: string) => ({ "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" })
const call = (id: number, text: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "echo", arguments: { text } }
})

/** The SSE event ids in a text. */
const idsOf = (text: string): Array<string> => [...text.matchAll(/^id: (\S+)$/gm)].map((match) => match[1]!)

/** Whether the store can still replay after any of `ids`. */
const anyKept = (store: EventStore.EventStoreShape, ids: ReadonlyArray<string>) =>
  Effect.map(
    Effect.forEach(ids, (id) => Effect.orDie(store.replayAfter(id))),
    (replays) => replays.some((replay) => replay !== undefined)
  )

/**
 * A session on `http` with finished streams in the store: three POST replies
 * read in full (no longer listed by the session), and its GET stream, whose
 * connection the client dropped. Returns its id and every event id the client saw.
 */
const withFinishedStreams = (http: HttpClient.HttpClient, store: EventStore.EventStoreShape) =>
  Effect.gen(function* () {
    const id = yield* openSession(http)
    const seen: Array<string> = []
    for (let i = 0; i < 3; i++) {
      const reply = yield* rawPost(http, call(10 + i, "x".repeat(1000)), headers(id))
      assert.strictEqual(reply.status, 200)
      seen.push(...idsOf(reply.text))
    }
    const events = yield* openEvents(yield* rawRequest(http, "GET", { ...headers(id), accept: "text/event-stream" }))
    const priming = yield* events.next
    seen.push(priming.id!)
    yield* Fiber.interrupt(events.fiber)
    // Each POST reply had a priming event and its result; the GET stream its priming event.
    assert.strictEqual(seen.length, 7)
    // Before the session ends, each reply can still be resumed after its priming event.
    assert.isDefined(yield* Effect.orDie(store.replayAfter(seen[0]!)))
    assert.isTrue(yield* anyKept(store, seen))
    return { id, seen }
  })

describe("Streamable HTTP: a closed session frees its streams in the event store", () => {
  it.effect("DELETE forgets every stream of the session, finished ones included", () =>
    Effect.gen(function* () {
      const store = EventStore.makeMemory()
      const { http } = yield* serve({ eventStore: store })
      const other = yield* withFinishedStreams(http, store)
      const { id, seen } = yield* withFinishedStreams(http, store)
      const deleted = yield* readAll(yield* rawRequest(http, "DELETE", headers(id)))
      assert.strictEqual(deleted.status, 200)
      assert.isFalse(yield* anyKept(store, seen))
      // Another session's streams are its own.
      assert.isTrue(yield* anyKept(store, other.seen))
    })
  )

  it.effect("idle expiry forgets every stream of the session", () =>
    Effect.gen(function* () {
      const store = EventStore.makeMemory()
      const { http, server } = yield* serve({ eventStore: store, sessionIdleTimeout: "1 minute" })
      const { seen } = yield* withFinishedStreams(http, store)
      yield* TestClock.adjust("2 minutes")
      assert.strictEqual(server.sessionCount(), 0)
      assert.isFalse(yield* anyKept(store, seen))
    })
  )

  it.effect("closeSession and the server's end forget every stream of their sessions", () =>
    Effect.gen(function* () {
      const store = EventStore.makeMemory()
      const scope = yield* Scope.make()
      const { http, server } = yield* serve({ eventStore: store }).pipe(Scope.provide(scope))
      const closed = yield* withFinishedStreams(http, store)
      const open = yield* withFinishedStreams(http, store)
      assert.isTrue(yield* server.closeSession(closed.id))
      assert.isFalse(yield* anyKept(store, closed.seen))
      assert.isTrue(yield* anyKept(store, open.seen))
      yield* Scope.close(scope, Exit.void)
      assert.isFalse(yield* anyKept(store, open.seen))
    })
  )

  it.effect(
    "a shared store forgets every stream of a session deleted or expired: another server replays it until then, and 404 after",
    () =>
      Effect.gen(function* () {
        const store: EventStore.EventStoreShape = { ...EventStore.makeMemory(), shared: true }
        // Two servers sharing the store, as two processes sharing a database do.
        const a = yield* serve({ eventStore: store, sessionIdleTimeout: "1 minute" })
        const b = yield* serve({ eventStore: store })
        const resume = (http: HttpClient.HttpClient, id: string, lastEventId: string) =>
          Effect.flatMap(
            rawRequest(http, "GET", { ...headers(id), accept: "text/event-stream", "last-event-id": lastEventId }),
            readAll
          )
        const deleted = yield* withFinishedStreams(a.http, store)
        const expired = yield* withFinishedStreams(a.http, store)
        const live = yield* withFinishedStreams(a.http, store)
        // While A holds the session, B (which does not) replays its stored events.
        const replayed = yield* resume(b.http, deleted.id, deleted.seen[0]!)
        assert.strictEqual(replayed.status, 200)
        assert.include(replayed.text, "echo:x")

        assert.strictEqual((yield* readAll(yield* rawRequest(a.http, "DELETE", headers(deleted.id)))).status, 200)
        for (const http of [b.http, a.http]) {
          const after = yield* resume(http, deleted.id, deleted.seen[0]!)
          assert.strictEqual(after.status, 404)
          assert.notInclude(after.text, "echo:x")
        }
        assert.isFalse(yield* anyKept(store, deleted.seen))

        // Idle past the timeout (the others are kept active).
        for (let i = 0; i < 4; i++) {
          yield* TestClock.adjust("20 seconds")
          assert.strictEqual((yield* rawPost(a.http, call(50 + i, "y"), headers(live.id))).status, 200)
        }
        assert.isFalse(a.server.hasSession(expired.id))
        assert.isFalse(yield* anyKept(store, expired.seen))
        assert.strictEqual((yield* resume(b.http, expired.id, expired.seen[0]!)).status, 404)
        // The live session's events are its own: still replayed on B.
        assert.strictEqual((yield* resume(b.http, live.id, live.seen[0]!)).status, 200)
      })
  )

  it.effect(
    "a session released to go on elsewhere, or left by a stopping server, keeps its events in a shared store",
    () =>
      Effect.gen(function* () {
        const store: EventStore.EventStoreShape = { ...EventStore.makeMemory(), shared: true }
        const scope = yield* Scope.make()
        const { http, server } = yield* serve({ eventStore: store }).pipe(Scope.provide(scope))
        const released = yield* withFinishedStreams(http, store)
        const left = yield* withFinishedStreams(http, store)
        assert.isTrue(yield* server.closeSession(released.id, "Released"))
        // Its next process resumes the same streams there: the GET stream too.
        assert.isDefined(yield* Effect.orDie(store.replayAfter(released.seen[6]!)))
        yield* Scope.close(scope, Exit.void)
        assert.isDefined(yield* Effect.orDie(store.replayAfter(left.seen[6]!)))
        // A store of this process alone frees them whatever the reason: nobody else reads it.
        const own = EventStore.makeMemory()
        const { http: ownHttp, server: ownServer } = yield* serve({ eventStore: own })
        const mine = yield* withFinishedStreams(ownHttp, own)
        assert.isTrue(yield* ownServer.closeSession(mine.id, "Released"))
        assert.isFalse(yield* anyKept(own, mine.seen))
      })
  )

  it.effect("the memory store's forgetSession drops that session's streams only", () =>
    Effect.gen(function* () {
      const store = EventStore.makeMemory()
      const append = (stream: string) => Effect.orDie(store.append(stream, "data"))
      const own = [yield* append("a_0"), yield* append("a_get"), yield* append("a_7")]
      // A session whose id begins like another's, and an id of no session.
      const others = [yield* append("a_b_0"), yield* append("ab_0"), yield* append("plain")]
      yield* Effect.orDie(store.forgetSession!("a"))
      assert.isFalse(yield* anyKept(store, own))
      for (const id of others) assert.isDefined(yield* Effect.orDie(store.replayAfter(id)))
      // A session reopened under the id starts anew; a session with no streams is no error.
      const again = yield* append("a_8")
      assert.isDefined(yield* Effect.orDie(store.replayAfter(again)))
      yield* Effect.orDie(store.forgetSession!("a"))
      assert.isUndefined(yield* Effect.orDie(store.replayAfter(again)))
      yield* Effect.orDie(store.forgetSession!("never"))
    })
  )
})

const heapScript = fileURLToPath(new URL("../../../apps/bench/src/SessionCloseHeap.ts", import.meta.url))

interface HeapReport {
  readonly before: number
  readonly held: number
  readonly after: number
  readonly stored: number
}

const measureHeap = HeapScript.run<HeapReport>(heapScript)

describe("Streamable HTTP: the heap after a session with 50 MiB of finished streams is deleted", () => {
  it.live(
    "is back within 2 MiB of before",
    () =>
      Effect.gen(function* () {
        const report = yield* measureHeap
        const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)
        const summary = `before ${mib(report.before)} MiB, held ${mib(report.held)} MiB, after ${mib(report.after)} MiB`
        // The streams were there to be freed: 50 MiB of events stored, and (most of it) held until the DELETE.
        assert.isAtLeast(report.stored, 50 * 1024 * 1024, summary)
        assert.isAtLeast(report.held - report.before, 45 * 1024 * 1024, summary)
        assert.isAtMost(report.after - report.before, 2 * 1024 * 1024, summary)
      }),
    30_000
  )
})
