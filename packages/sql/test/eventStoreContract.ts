/**
 * What every `EventStore` does, whatever keeps the events: run on the
 * engine's in-memory store, on SQLite and on PostgreSQL (test/cluster). Each
 * case gets a fresh store bounded to 3 events per stream.
 */
import { assert, it } from "@effect/vitest"
import type * as EventStore from "@effect-mcp/http/EventStore"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/** Makes a fresh, empty store keeping at most `maxEventsPerStream` events per stream. */
export type MakeStore<E, R> = (
  maxEventsPerStream: number
) => Effect.Effect<EventStore.EventStoreShape, E, R | Scope.Scope>

const datas = (replay: EventStore.Replay | undefined) => replay?.events.map((event) => event.data)

/** Registers the contract's cases (inside a `describe`); `run` provides what the store needs. */
export const eventStoreContract = <E, R>(
  make: MakeStore<E, R>,
  run: <A, E2>(effect: Effect.Effect<A, E2, R | Scope.Scope>) => Effect.Effect<A, unknown, Scope.Scope> = (effect) =>
    effect as never
) => {
  const test = (name: string, body: (store: EventStore.EventStoreShape) => Effect.Effect<void, unknown, Scope.Scope>) =>
    it.effect(name, () => run(Effect.flatMap(make(3), body)))

  test("ids are distinct visible ASCII across streams; a replay is what followed, oldest first", (store) =>
    Effect.gen(function* () {
      const a0 = yield* store.append("s-a_0", "")
      const a1 = yield* store.append("s-a_0", "one")
      const b0 = yield* store.append("s-b_get", "other")
      const a2 = yield* store.append("s-a_0", "two")
      assert.strictEqual(new Set([a0, a1, b0, a2]).size, 4)
      for (const id of [a0, a1, b0, a2]) assert.match(id, /^[\x21-\x7e]+$/)
      assert.deepStrictEqual(yield* store.replayAfter(a0), {
        streamId: "s-a_0",
        events: [
          { id: a1, data: "one" },
          { id: a2, data: "two" }
        ]
      })
      assert.deepStrictEqual(yield* store.replayAfter(b0), { streamId: "s-b_get", events: [] })
      // Resuming is repeatable: a replay consumes nothing.
      assert.deepStrictEqual(datas(yield* store.replayAfter(a1)), ["two"])
      assert.deepStrictEqual(datas(yield* store.replayAfter(a1)), ["two"])
    }))

  test("an id never issued, malformed, or naming another stream's event is unknown", (store) =>
    Effect.gen(function* () {
      yield* store.append("s-a_0", "w")
      const a = yield* store.append("s-a_0", "x")
      yield* store.append("s-b_0", "y")
      assert.isUndefined(yield* store.replayAfter("nope"))
      assert.isUndefined(yield* store.replayAfter(""))
      assert.isUndefined(yield* store.replayAfter(`${a}9999`))
      // The same position under another stream's name is not that stream's event.
      assert.isUndefined(yield* store.replayAfter(a.replace("s-a_0", "s-b_0")))
    }))

  test("a stream keeps its newest events: resuming after an evicted one is impossible", (store) =>
    Effect.gen(function* () {
      const ids: Array<string> = []
      for (const data of ["1", "2", "3", "4"]) ids.push(yield* store.append("s_0", data))
      const other = yield* store.append("t_0", "kept")
      assert.isUndefined(yield* store.replayAfter(ids[0]!))
      assert.deepStrictEqual(datas(yield* store.replayAfter(ids[1]!)), ["3", "4"])
      // One stream's bound does not touch another's events.
      assert.deepStrictEqual(datas(yield* store.replayAfter(other)), [])
    }))

  test("forget drops a stream's events only", (store) =>
    Effect.gen(function* () {
      const a = yield* store.append("s-a_0", "x")
      const b = yield* store.append("s-b_0", "y")
      yield* store.forget("s-a_0")
      assert.isUndefined(yield* store.replayAfter(a))
      assert.deepStrictEqual(datas(yield* store.replayAfter(b)), [])
      // Forgetting an unknown stream is harmless.
      yield* store.forget("never")
    }))

  test("event data round-trips exactly (JSON, unicode, newlines, 100 KB)", (store) =>
    Effect.gen(function* () {
      const data = [
        JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { data: "é ✓ 🙂 'q' \"d\"" } }),
        "line one\nline two"
      ]
      const first = yield* store.append("s_0", "")
      for (const item of data) yield* store.append("s_0", item)
      assert.deepStrictEqual(datas(yield* store.replayAfter(first)), data)
      const big = "x".repeat(100_000)
      const before = yield* store.append("t_0", "")
      yield* store.append("t_0", big)
      assert.deepStrictEqual(datas(yield* store.replayAfter(before)), [big])
    }))

  test("owed: what the last event of each stream of a session left unanswered, until answers leave none", (store) =>
    Effect.gen(function* () {
      const owed = (sessionId: string) =>
        Effect.map(store.owed!(sessionId), (streams) => [...streams].sort((a, b) => (a.streamId < b.streamId ? -1 : 1)))
      // A request in flight: its priming event and a progress event say it is owed.
      yield* store.append("s-a_0", "", { pending: [1, "x"] })
      const progress = yield* store.append("s-a_0", "progress", { pending: [1, "x"] })
      // A stream whose last event answered its request owes nothing, nor does a GET stream.
      yield* store.append("s-a_1", "", { pending: [2] })
      yield* store.append("s-a_1", "answer", { pending: [] })
      yield* store.append("s-a_get", "note")
      // Another session's streams, one of them named with this session's id as prefix.
      yield* store.append("s-b_0", "", { pending: [3] })
      yield* store.append("s-ab_0", "", { pending: [4] })
      assert.deepStrictEqual(yield* owed("s-a"), [{ streamId: "s-a_0", ids: [1, "x"] }])
      assert.deepStrictEqual(yield* owed("s-b"), [{ streamId: "s-b_0", ids: [3] }])
      assert.deepStrictEqual(yield* owed("s"), [])
      assert.deepStrictEqual(yield* owed("nobody"), [])
      // An answer per owed request, each saying what is left: then nothing is owed, and a resume gets them.
      yield* store.append("s-a_0", "lost 1", { pending: ["x"] })
      assert.deepStrictEqual(yield* owed("s-a"), [{ streamId: "s-a_0", ids: ["x"] }])
      yield* store.append("s-a_0", "lost x", { pending: [] })
      assert.deepStrictEqual(yield* owed("s-a"), [])
      assert.deepStrictEqual(datas(yield* store.replayAfter(progress)), ["lost 1", "lost x"])
      assert.deepStrictEqual(yield* owed("s-b"), [{ streamId: "s-b_0", ids: [3] }])
      // A forgotten stream owes nothing any more.
      yield* store.forget("s-b_0")
      assert.deepStrictEqual(yield* owed("s-b"), [])
    }))

  test("forgetSession drops every stream of that session (delivered ones too), and no other's", (store) =>
    Effect.gen(function* () {
      assert.isDefined(store.forgetSession, "a store the server can tell that a session ended")
      const own = [
        yield* store.append("s-a_0", ""),
        yield* store.append("s-a_0", "result"),
        yield* store.append("s-a_get", "note"),
        yield* store.append("s-a_1700000000000", "after a move")
      ]
      // Sessions whose ids begin like this one's, or sort right next to its streams, and an id of no session.
      const others = [
        yield* store.append("s-a_b_0", "a session named s-a_b"),
        yield* store.append("s-ab_0", "s-ab"),
        yield* store.append("s-a`_0", "s-a`"),
        yield* store.append("s-a", "no session"),
        yield* store.append("s-b_0", "s-b")
      ]
      yield* store.forgetSession!("s-a")
      for (const id of own) assert.isUndefined(yield* store.replayAfter(id), id)
      for (const id of others) assert.isDefined(yield* store.replayAfter(id), id)
      assert.deepStrictEqual(yield* store.owed!("s-a"), [])
      // A session of that id later starts anew; forgetting a session with no streams is harmless.
      const again = yield* store.append("s-a_0", "")
      assert.isDefined(yield* store.replayAfter(again))
      yield* store.forgetSession!("nobody")
      yield* store.forgetSession!("s-a")
      assert.isUndefined(yield* store.replayAfter(again))
    }))
}
