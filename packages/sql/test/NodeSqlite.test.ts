/**
 * NodeSqlite's errors are classified by SQLite's result code (node:sqlite
 * gives it as `errcode`): a database another connection holds is a
 * LockTimeoutError, and opening a file while another process switches it to
 * WAL (or holds it) is retried on the TestClock until it is free, rather than
 * failing at once ("database is locked", seen when two processes shared a new
 * file under load).
 */
import { assert, describe, it } from "@effect/vitest"
import * as NodeSqlite from "@effect-mcp/sql/NodeSqlite"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as TestClock from "effect/testing/TestClock"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"

/** A database file in a temporary directory of the test's scope, held by another connection in an exclusive transaction. */
const heldFile = Effect.gen(function* () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-mcp-sqlite-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
  const filename = path.join(dir, "held.db")
  const other = new DatabaseSync(filename)
  yield* Effect.addFinalizer(() => Effect.sync(() => other.isOpen && other.close()))
  other.exec("CREATE TABLE t (x INTEGER)")
  other.exec("BEGIN EXCLUSIVE")
  return { filename, release: () => other.exec("COMMIT") }
})

describe("NodeSqlite", () => {
  it.effect("opening a file another connection holds is retried until it is free", () =>
    Effect.gen(function* () {
      const held = yield* heldFile
      // No busy wait of SQLite's own: each attempt fails at once while the file is held.
      const opening = yield* NodeSqlite.make({ filename: held.filename, busyTimeoutMs: 0 }).pipe(
        Effect.provide(Reactivity.layer),
        Effect.forkChild
      )
      yield* TestClock.adjust("200 millis")
      assert.isUndefined(opening.pollUnsafe(), "the open gave up while the file was held")
      held.release()
      yield* TestClock.adjust("50 millis")
      const client = yield* Fiber.join(opening)
      assert.deepStrictEqual(yield* client`SELECT count(*) AS n FROM t`, [{ n: 0 }])
    })
  )

  it.effect("a statement on a database another connection holds fails as a LockTimeoutError", () =>
    Effect.gen(function* () {
      const held = yield* heldFile
      held.release()
      const client = yield* NodeSqlite.make({ filename: held.filename, busyTimeoutMs: 0, wal: false }).pipe(
        Effect.provide(Reactivity.layer)
      )
      const other = new DatabaseSync(held.filename)
      yield* Effect.addFinalizer(() => Effect.sync(() => other.close()))
      other.exec("BEGIN EXCLUSIVE")
      const error = yield* Effect.flip(client`INSERT INTO t (x) VALUES (1)`)
      other.exec("COMMIT")
      assert.strictEqual(error.reason._tag, "LockTimeoutError")
    })
  )
})
