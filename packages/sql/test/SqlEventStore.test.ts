/**
 * The SQL event store on SQLite (node:sqlite): the EventStore contract (also
 * run on the engine's in-memory store, so both behave alike), retention by
 * age on the TestClock, the schema created once by the Migrator, and a store
 * file shared by two stores as two processes would share it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as EventStore from "@effect-mcp/http/EventStore"
import * as NodeSqlite from "@effect-mcp/sql/NodeSqlite"
import * as SqlEventStore from "@effect-mcp/sql/SqlEventStore"
import * as Effect from "effect/Effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as SqlClient from "effect/sql/SqlClient"
import * as TestClock from "effect/testing/TestClock"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { eventStoreContract } from "./eventStoreContract.ts"

const memoryDb = NodeSqlite.layer({ filename: ":memory:" })

describe("EventStore contract: in memory", () => {
  eventStoreContract((maxEventsPerStream) => Effect.succeed(EventStore.makeMemory({ maxEventsPerStream })))
})

describe("EventStore contract: SQLite", () => {
  eventStoreContract(
    (maxEventsPerStream) => SqlEventStore.make({ maxEventsPerStream }),
    (effect) => Effect.provide(effect, memoryDb)
  )
})

describe("SqlEventStore", () => {
  it.effect("an event older than maxAge cannot be resumed after, and the sweep deletes it", () =>
    Effect.gen(function* () {
      const store = yield* SqlEventStore.make({ maxAge: "10 minutes", sweepInterval: "1 minute" })
      const sql = yield* SqlClient.SqlClient
      const old = yield* store.append("s_0", "old")
      yield* TestClock.adjust("6 minutes")
      const recent = yield* store.append("s_0", "recent")
      assert.deepStrictEqual(
        (yield* store.replayAfter(old))?.events.map((e) => e.data),
        ["recent"]
      )
      yield* TestClock.adjust("5 minutes")
      // 11 minutes old: past maxAge, whether or not the sweep ran yet.
      assert.isUndefined(yield* store.replayAfter(old))
      assert.deepStrictEqual((yield* store.replayAfter(recent))?.events, [])
      yield* TestClock.adjust("1 minute")
      const rows = yield* sql<{ readonly data: string }>`SELECT data FROM effect_mcp_events ORDER BY seq`
      assert.deepStrictEqual(
        rows.map((row) => row.data),
        ["recent"]
      )
    }).pipe(Effect.provide(memoryDb))
  )

  it.effect("the schema is created once (Migrator); a second store on the database keeps the events", () =>
    Effect.gen(function* () {
      const first = yield* SqlEventStore.make()
      const id = yield* first.append("s_0", "kept")
      const second = yield* SqlEventStore.make()
      const next = yield* second.append("s_0", "next")
      assert.deepStrictEqual(yield* first.replayAfter(id), { streamId: "s_0", events: [{ id: next, data: "next" }] })
      const sql = yield* SqlClient.SqlClient
      const migrations = yield* sql<{ readonly name: string }>`SELECT name FROM effect_mcp_events_migrations`
      assert.deepStrictEqual(
        migrations.map((row) => row.name),
        ["create_events", "pending", "session_index"]
      )
    }).pipe(Effect.provide(memoryDb))
  )

  it.effect("two connections to one database file (two processes) see each other's events", () =>
    Effect.gen(function* () {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-mcp-sql-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const filename = path.join(dir, "events.db")
      const open = Effect.flatMap(NodeSqlite.make({ filename }), (client) =>
        Effect.provideService(SqlEventStore.make(), SqlClient.SqlClient, client)
      ).pipe(Effect.provide(Reactivity.layer))
      const a = yield* open
      const b = yield* open
      const first = yield* a.append("s_get", "")
      const missed = [yield* a.append("s_get", "m1"), yield* a.append("s_get", "m2")]
      assert.deepStrictEqual(
        (yield* b.replayAfter(first))?.events.map((e) => e.id),
        missed
      )
    })
  )

  it.effect("a table name of its own, through the layer", () =>
    Effect.gen(function* () {
      const store = yield* Effect.provide(
        Effect.gen(function* () {
          return yield* EventStore.EventStore
        }),
        SqlEventStore.layer({ table: "other_events" })
      )
      yield* store.append("s_0", "x")
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ readonly n: number }>`SELECT count(*) AS n FROM other_events`
      assert.strictEqual(rows[0]?.n, 1)
    }).pipe(Effect.provide(memoryDb))
  )
})
