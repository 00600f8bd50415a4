/**
 * Processes starting together on a new SQLite file (issue 17: runners must
 * not fail with "database is locked"). A deferred transaction that reads,
 * then writes after another process committed, fails at once on SQLite
 * whatever the busy timeout; NodeSqlite begins transactions IMMEDIATE, and
 * retries opening the file a bounded while.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { node, spawnChild } from "../support/ServerProcess.ts"
import { session } from "./sse.ts"
import { startRunners } from "./support.ts"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "mcp-sqlite-start-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const contender = fileURLToPath(new URL("./sqliteContender.ts", import.meta.url))

describe("SQLite: processes starting together", () => {
  it.live(
    "transactions that read then write, in three processes at once, all commit",
    () =>
      Effect.gen(function* () {
        const file = join(yield* tempDir, "contended.db")
        const children = yield* Effect.all(Array.from({ length: 3 }, () => spawnChild(node, [contender, file, "150"])))
        for (const child of children) {
          const [, failures] = yield* child.waitForStderr(/failures (\S+)/, 60_000)
          assert.strictEqual(failures, "0", child.stderr())
        }
      }).pipe(Effect.scoped),
    90_000
  )

  it.live(
    "three runners started at the same moment on a new file all serve",
    () =>
      Effect.gen(function* () {
        const storage = `sqlite:${join(yield* tempDir, "cluster.db")}`
        const runners = yield* startRunners(3, storage, [], { together: true })
        for (const runner of runners) {
          assert.notInclude(runner.stderr(), "database is locked")
          const s = yield* session(runner.url)
          const echo = yield* s.request(runner.url, "tools/call", { name: "test_simple_text", arguments: {} })
          assert.include(echo.result.content[0].text, "simple text response")
        }
      }).pipe(Effect.scoped),
    120_000
  )
})
