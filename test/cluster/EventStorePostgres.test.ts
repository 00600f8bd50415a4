/**
 * The SQL event store on a real PostgreSQL (Debian packages, started on
 * 127.0.0.1 by test/support/postgres.ts): the EventStore contract, the
 * schema created once when several stores start together, and retention.
 * Skipped, with the reason in its name, only where PostgreSQL cannot be started.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as SqlDatabase from "@effect-mcp/sql/SqlDatabase"
import * as SqlEventStore from "@effect-mcp/sql/SqlEventStore"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as SqlClient from "effect/sql/SqlClient"
import { eventStoreContract } from "../../packages/sql/test/eventStoreContract.ts"
import * as Postgres from "../support/postgres.ts"

const title = Postgres.unavailable === undefined ? "PostgreSQL" : `PostgreSQL (skipped: ${Postgres.unavailable})`

describe.skipIf(Postgres.unavailable !== undefined)(title, () => {
  const scope = Effect.runSync(Scope.make())
  let server: Postgres.Postgres | undefined
  beforeAll(async () => {
    server = await Effect.runPromise(Scope.provide(Postgres.start, scope))
  }, 120_000)
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

  const database = () => SqlDatabase.layer(server!.url)
  // A client of its own, open for the test (as each process has its own).
  const client = Effect.suspend(() =>
    Effect.map(Layer.build(database()), (context) => Context.get(context, SqlClient.SqlClient))
  )
  const storeOn = (table: string) =>
    Effect.flatMap(client, (sql) => Effect.provideService(SqlEventStore.make({ table }), SqlClient.SqlClient, sql))
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
      const sql = yield* client
      const migrations = yield* sql`SELECT name FROM shared_events_migrations`
      assert.strictEqual(migrations.length, 1)
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
})
