/**
 * What every `TaskStore` does (the in-memory default, SqlTaskStore on SQLite
 * and on PostgreSQL): records read back as written, a terminal task never
 * changes, pages by owner in creation order without expired tasks, expiry,
 * worker heartbeats.
 */
import { assert, it } from "@effect/vitest"
import type * as TaskStore from "@effect-mcp/server/TaskStore"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"

/** A `working` task of `owner` made at `createdAt` by worker `w1` (60 s retention). */
export const record = (taskId: string, owner: string, createdAt: number): TaskStore.TaskRecord => ({
  taskId,
  owner,
  method: "tools/call",
  status: "working",
  createdAt,
  lastUpdatedAt: createdAt,
  ttlMs: 60_000,
  pollIntervalMs: 500,
  worker: "w1"
})

/** Runs the contract on the store `make` builds (`provide` gives it what it needs). */
export const taskStoreContract = <E, R>(
  make: Effect.Effect<TaskStore.TaskStoreShape, E, R>,
  provide: <A, E2>(effect: Effect.Effect<A, E2, R>) => Effect.Effect<A, unknown> = (effect) =>
    effect as Effect.Effect<never>
) => {
  it.effect("a task reads back as written; updates apply until it is terminal", () =>
    provide(
      Effect.gen(function* () {
        const store = yield* make
        yield* store.create(record("t1", "p:alice", 1_000))
        assert.deepStrictEqual(yield* store.get("t1"), record("t1", "p:alice", 1_000))
        assert.isUndefined(yield* store.get("nope"))
        const waiting = yield* store.update("t1", {
          status: "input_required",
          lastUpdatedAt: 1_100,
          inputRequests: { "elicitation-0": { method: "elicitation/create", params: { message: "?" } } as never }
        })
        assert.strictEqual(waiting?.status, "input_required")
        assert.deepStrictEqual(Object.keys(waiting?.inputRequests ?? {}), ["elicitation-0"])
        const done = yield* store.update("t1", {
          status: "completed",
          lastUpdatedAt: 1_200,
          result: { content: [{ type: "text", text: "ok" }] }
        })
        assert.strictEqual(done?.status, "completed")
        assert.isUndefined(done?.inputRequests)
        assert.deepStrictEqual(done?.result, { content: [{ type: "text", text: "ok" }] })
        const late = yield* store.update("t1", {
          status: "failed",
          lastUpdatedAt: 1_300,
          error: { code: -1, message: "x" }
        })
        assert.isUndefined(late)
        const stored = yield* store.get("t1")
        assert.strictEqual(stored?.status, "completed")
        assert.strictEqual(stored?.lastUpdatedAt, 1_200)
        const failed = yield* store
          .create(record("t2", "", 1_000))
          .pipe(
            Effect.andThen(
              store.update("t2", { status: "failed", lastUpdatedAt: 2, error: { code: -32603, message: "boom" } })
            )
          )
        assert.deepStrictEqual(failed?.error, { code: -32603, message: "boom" })
      })
    )
  )

  it.effect("an owner's tasks page in creation order; others' are not listed", () =>
    provide(
      Effect.gen(function* () {
        const store = yield* make
        for (const [id, at] of [
          ["b", 2],
          ["a", 2],
          ["c", 1],
          ["d", 3]
        ] as const)
          yield* store.create(record(id, "s:1", at))
        yield* store.create(record("other", "s:2", 1))
        const first = yield* store.list("s:1", { limit: 2 })
        assert.deepStrictEqual(
          first.tasks.map((t) => t.taskId),
          ["c", "a"]
        )
        const second = yield* store.list("s:1", { limit: 2, cursor: first.nextCursor })
        assert.deepStrictEqual(
          second.tasks.map((t) => t.taskId),
          ["b", "d"]
        )
        assert.isUndefined(second.nextCursor)
      })
    )
  )

  it.effect("an owner's expired tasks are not listed (the server reads them as unknown), pages stay full", () =>
    provide(
      Effect.gen(function* () {
        const store = yield* make
        yield* store.create(record("old", "s:1", 0))
        yield* store.create(record("older", "s:1", 0))
        yield* store.create(record("young", "s:1", 30_000))
        yield* store.create({ ...record("forever", "s:1", 0), ttlMs: null })
        yield* TestClock.adjust("60 seconds")
        const first = yield* store.list("s:1", { limit: 1 })
        assert.deepStrictEqual(
          first.tasks.map((t) => t.taskId),
          ["forever"]
        )
        const second = yield* store.list("s:1", { limit: 1, cursor: first.nextCursor })
        assert.deepStrictEqual(
          second.tasks.map((t) => t.taskId),
          ["young"]
        )
        assert.isUndefined(second.nextCursor)
        // Listed until its last millisecond, as it reads.
        yield* TestClock.adjust("29999 millis")
        assert.deepStrictEqual(
          (yield* store.list("s:1", { limit: 10 })).tasks.map((t) => t.taskId),
          ["forever", "young"]
        )
        yield* TestClock.adjust("1 millis")
        assert.deepStrictEqual(
          (yield* store.list("s:1", { limit: 10 })).tasks.map((t) => t.taskId),
          ["forever"]
        )
      })
    )
  )

  it.effect("expired tasks are purged; heartbeats are kept per worker", () =>
    provide(
      Effect.gen(function* () {
        const store = yield* make
        yield* store.create(record("old", "", 0))
        yield* store.create({ ...record("forever", "", 0), ttlMs: null })
        yield* store.purgeExpired(60_000)
        assert.isUndefined(yield* store.get("old"))
        assert.isDefined(yield* store.get("forever"))
        assert.isUndefined(yield* store.lastHeartbeat("w9"))
        yield* store.heartbeat("w9", 10)
        yield* store.heartbeat("w9", 20)
        assert.strictEqual(yield* store.lastHeartbeat("w9"), 20)
      })
    )
  )
}
