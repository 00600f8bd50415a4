/**
 * The SQL event store on a real PostgreSQL (Debian packages, started on
 * 127.0.0.1 by test/support/postgres.ts): the EventStore contract, the
 * schema created once when several stores start together, and retention.
 * Skipped, with the reason in its name, only where PostgreSQL cannot be started.
 */
import { assert, describe, it } from "@effect/vitest"
import * as SqlDatabase from "@effect-mcp/sql/SqlDatabase"
import * as SqlEventStore from "@effect-mcp/sql/SqlEventStore"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { eventStoreContract } from "../../packages/sql/test/eventStoreContract.ts"
import * as Postgres from "../support/postgres.ts"

Postgres.describePostgres("PostgreSQL", (server) => {
  const database = () => SqlDatabase.layer(server().url)
  // A connection of its own for each store, as each process has its own.
  const storeOn = (table: string) => Effect.suspend(() => SqlDatabase.use(server().url, SqlEventStore.make({ table })))
  let tables = 0

  describe("EventStore contract", () => {
    eventStoreContract(
      (maxEventsPerStream) => SqlEventStore.make({ maxEventsPerStream, table: `contract_${tables++}` }),
      (effect) => Effect.provide(effect, database())
    )
  })

  it.live("stores started together on one database create the schema once and share the events", () =>
    Effect.gen(function* () {
      const stores = yield* Effect.all(
        Array.from({ length: 4 }, () => storeOn("shared_events")),
        { concurrency: "unbounded" }
      )
      const first = yield* stores[0]!.append("s_get", "")
      const missed = [yield* stores[1]!.append("s_get", "a"), yield* stores[2]!.append("s_get", "b")]
      assert.deepStrictEqual(
        (yield* stores[3]!.replayAfter(first))?.events.map((event) => event.id),
        missed
      )
      const sql = yield* SqlDatabase.use(
        server().url,
        Effect.gen(function* () {
          return yield* SqlClient.SqlClient
        })
      )
      const migrations = yield* sql`SELECT name FROM shared_events_migrations`
      assert.strictEqual(migrations.length, 3)
    })
  )

  it.live("bigint row numbers come back as ids the store resumes after", () =>
    Effect.gen(function* () {
      const store = yield* storeOn("ids_events")
      const id = yield* store.append("s_0", "x")
      assert.match(id, /^s_0_[0-9]+$/)
      assert.deepStrictEqual(yield* store.replayAfter(id), { streamId: "s_0", events: [] })
    })
  )

  it.live("a session's streams are found by an index when it ends (forgetSession), not by a scan", () =>
    Effect.gen(function* () {
      const store = yield* storeOn("session_events")
      const kept = yield* store.append("other_0", "x")
      yield* store.append("s_0", "x")
      yield* store.forgetSession!("s")
      assert.isDefined(yield* store.replayAfter(kept))
      // The plan PostgreSQL would use on a table large enough that a scan costs more than the index.
      const plan = yield* SqlDatabase.use(
        server().url,
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          return yield* sql.withTransaction(
            Effect.andThen(
              sql`SET LOCAL enable_seqscan = off`,
              sql<{ readonly "QUERY PLAN": string }>`EXPLAIN DELETE FROM session_events
                WHERE (stream_id COLLATE "C") > ${"s_"} AND (stream_id COLLATE "C") < ${"s`"}
                AND strpos(substr(stream_id, ${3}), '_') = 0`
            )
          )
        })
      )
      assert.match(plan.map((row) => row["QUERY PLAN"]).join("\n"), /session_events_session/)
    })
  )
})
