/**
 * A process writing to a SQLite file in transactions that read, then write
 * (as effect's Migrator does when a runner starts), for SqliteStart.test.ts:
 * it writes `failures <n>` to stderr once its rounds are done.
 */
import * as NodeSqlite from "@effect-mcp/sql/NodeSqlite"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

const [file, rounds] = [process.argv[2]!, Number(process.argv[3] ?? "100")]

const program = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS contended (id INTEGER PRIMARY KEY, seen INTEGER NOT NULL)`
  let failures = 0
  for (let i = 0; i < rounds; i++) {
    const round = Effect.gen(function* () {
      const rows = yield* sql<{ readonly n: number }>`SELECT count(*) AS n FROM contended`
      yield* sql`INSERT INTO contended (seen) VALUES (${rows[0]!.n})`
    }).pipe(sql.withTransaction)
    const result = yield* Effect.result(round)
    if (result._tag === "Failure") {
      failures++
      process.stderr.write(`failed: ${String(result.failure)}\n`)
    }
  }
  process.stderr.write(`failures ${failures}\n`)
})

Effect.runPromise(Effect.scoped(Effect.provide(program, NodeSqlite.layer({ filename: file })))).catch((error) =>
  process.stderr.write(`failures opening: ${String(error)}\n`)
)
