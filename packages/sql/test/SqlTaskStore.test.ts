/**
 * The SQL task store on SQLite (node:sqlite): the TaskStore contract (also
 * run on the server's in-memory store, so both behave alike), and a store
 * file reopened as a restarted process would reopen it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as TaskStore from "@effect-mcp/server/TaskStore"
import * as NodeSqlite from "@effect-mcp/sql/NodeSqlite"
import * as SqlTaskStore from "@effect-mcp/sql/SqlTaskStore"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { record, taskStoreContract } from "./taskStoreContract.ts"

describe("TaskStore contract: in memory", () => {
  taskStoreContract(Effect.sync(() => TaskStore.makeMemory()))
})

describe("TaskStore contract: SQLite", () => {
  taskStoreContract(SqlTaskStore.make(), (effect) => Effect.provide(effect, NodeSqlite.layer({ filename: ":memory:" })))
})

describe("SqlTaskStore", () => {
  it.effect("tasks written by one store are read by the next on the same file (a restart)", () =>
    Effect.gen(function* () {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-mcp-tasks-"))
      const db = NodeSqlite.layer({ filename: path.join(dir, "tasks.db") })
      yield* Effect.gen(function* () {
        const store = yield* SqlTaskStore.make()
        yield* store.create({ ...record("t", "", 1), ttlMs: null })
        yield* store.update("t", { status: "completed", lastUpdatedAt: 2, result: { content: [] } })
      }).pipe(Effect.provide(db))
      const reread = yield* Effect.flatMap(SqlTaskStore.make(), (reopened) => reopened.get("t")).pipe(
        Effect.provide(db)
      )
      assert.strictEqual(reread?.status, "completed")
      assert.deepStrictEqual(reread?.result, { content: [] })
      fs.rmSync(dir, { recursive: true, force: true })
    })
  )

  it.effect("purging drops the heartbeats of workers gone longer than the retention, and keeps the others", () =>
    Effect.gen(function* () {
      const hour = 60 * 60 * 1000
      const store = yield* SqlTaskStore.make({ workerRetentionMs: 24 * hour })
      yield* store.heartbeat("gone", 0)
      yield* store.heartbeat("recent", 2 * hour)
      yield* store.purgeExpired(24 * hour + 1)
      assert.strictEqual(yield* store.lastHeartbeat("gone"), undefined)
      assert.strictEqual(yield* store.lastHeartbeat("recent"), 2 * hour)
      // A worker whose row went heartbeats again as before.
      yield* store.heartbeat("gone", 25 * hour)
      assert.strictEqual(yield* store.lastHeartbeat("gone"), 25 * hour)
    }).pipe(Effect.provide(NodeSqlite.layer({ filename: ":memory:" })))
  )
})
