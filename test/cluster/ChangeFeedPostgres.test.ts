/**
 * The change feed on PostgreSQL wakes its readers with LISTEN/NOTIFY: two
 * servers, each with its own connection pool to one database (as two
 * processes would have), their feeds polling only once a minute. A change
 * made on one reaches the other's `subscriptions/listen` stream in well under
 * a second (the poll alone would take up to a minute), once; its own
 * changes never come back to it. Skipped, with the reason in its name, where
 * PostgreSQL cannot be started (test/support/postgres.ts).
 */
import { assert, it } from "@effect/vitest"
import * as ChangeFeed from "@effect-mcp/cluster/ChangeFeed"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Resource from "@effect-mcp/server/Resource"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as SqlDatabase from "@effect-mcp/sql/SqlDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as SqlClient from "effect/sql/SqlClient"
import * as Postgres from "../support/postgres.ts"

const watched = Resource.make({ uri: "test://watched", name: "watched", read: Effect.succeed("w") })
const server = Layer.provideMerge(Resource.layer(watched), McpServer.layer({ name: "feed", version: "1.0.0" }))

/** A server with its feed on its own pool to `url`, and a listen stream on it. */
const process = (url: string) =>
  Effect.gen(function* () {
    const connection = yield* McpTest.connectRaw(server, { revision: "2026-07-28" })
    const sql = yield* Layer.build(SqlDatabase.layer(url))
    yield* ChangeFeed.make({ pollInterval: "1 minute" }).pipe(
      Effect.provideService(McpServer.McpServer, connection.server),
      Effect.provideContext(sql)
    )
    yield* connection.session
      .request("subscriptions/listen", {
        notifications: { resourcesListChanged: true, resourceSubscriptions: ["test://watched"] }
      })
      .pipe(Effect.forkChild)
    assert.strictEqual((yield* Queue.take(connection.notifications)).method, "notifications/subscriptions/acknowledged")
    return connection
  })

const UPDATED = "notifications/resources/updated"
const LIST_CHANGED = "notifications/resources/list_changed"

/**
 * Waits until `count` sessions on the database of `url` have run LISTEN (their last statement, held
 * since). Nothing tells the test that a feed's LISTEN went out, so the server's view is read again
 * every 50 ms; the 30 s bound only fires on breakage.
 */
const listening = (url: string, count: number) =>
  SqlDatabase.use(
    url,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const listeners = Effect.map(
        sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND query ILIKE 'LISTEN%'`,
        (rows) => rows[0]?.n ?? 0
      )
      yield* listeners.pipe(
        Effect.repeat({ until: (n) => n >= count, schedule: Schedule.spaced("50 millis") }),
        Effect.timeout("30 seconds")
      )
    })
  )

let databases = 0
Postgres.describePostgres("ChangeFeed on PostgreSQL", (postgres) => {
  it.live(
    "a change reaches the other process at once (NOTIFY), not on its next poll, and once",
    () =>
      Effect.gen(function* () {
        const url = yield* postgres().createDatabase(`feed_${databases++}`)
        const a = yield* process(url)
        const b = yield* process(url)
        // LISTEN is registered in the background: the first change may be read by the poll only.
        yield* listening(url, 2)

        const latencies: Array<number> = []
        for (let i = 0; i < 10; i++) {
          const started = performance.now()
          yield* a.server.resourceUpdated("test://watched")
          const heard = yield* Queue.take(b.notifications).pipe(Effect.timeoutOption("5 seconds"))
          assert.isTrue(heard._tag === "Some", `change ${i} reached the other process before its poll`)
          latencies.push(performance.now() - started)
        }
        latencies.sort((x, y) => x - y)
        // The poll is a minute away: every change came through NOTIFY.
        assert.isBelow(latencies[latencies.length - 1]!, 5_000)
        console.info(
          `ChangeFeed on PostgreSQL: cross-pool latency median ${latencies[5]!.toFixed(1)} ms, max ${latencies[9]!.toFixed(1)} ms`
        )
        // Nothing arrives twice. The barrier: a later change of another kind, heard after any duplicate would be.
        yield* a.server.listChanged("resources")
        const next = yield* Queue.take(b.notifications).pipe(Effect.timeoutOption("5 seconds"))
        assert.strictEqual(next._tag === "Some" ? next.value.method : "nothing", LIST_CHANGED)
        assert.deepStrictEqual(yield* b.drain, [])
        // A heard each of its own changes once, at once.
        const own = yield* a.drain
        assert.deepStrictEqual(
          own.map((n) => n.method),
          [...Array.from({ length: 10 }, () => UPDATED), LIST_CHANGED]
        )
      }).pipe(Effect.scoped),
    60_000
  )
})
