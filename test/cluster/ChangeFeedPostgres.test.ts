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
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"
import * as Queue from "effect/Queue"
import * as References from "effect/References"
import * as Schedule from "effect/Schedule"
import * as SqlClient from "effect/sql/SqlClient"
import * as Postgres from "../support/postgres.ts"

const watched = Resource.make({ uri: "test://watched", name: "watched", read: Effect.succeed("w") })
const server = Layer.provideMerge(Resource.layer(watched), McpServer.layer({ name: "feed", version: "1.0.0" }))

/** A server with its feed on its own pool to `url`, and a listen stream on it. */
const process = (
  url: string,
  pollInterval: Duration.Input = "1 minute",
  logTo: ReadonlyArray<Logger.Logger<unknown, unknown>> = []
) =>
  Effect.gen(function* () {
    const connection = yield* McpTest.connectRaw(server, { revision: "2026-07-28" })
    const sql = yield* Layer.build(SqlDatabase.layer(url))
    const feed = ChangeFeed.make({ pollInterval }).pipe(
      Effect.provideService(McpServer.McpServer, connection.server),
      Effect.provideContext(sql)
    )
    yield* logTo.length === 0
      ? feed
      : feed.pipe(
          Effect.provideService(Logger.CurrentLoggers, new Set(logTo)),
          Effect.provideService(References.MinimumLogLevel, "Debug")
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

/** Waits until `done` holds, checking every 50 ms: the 30 s bound only fires on breakage. */
const until = (done: () => boolean, what: string) =>
  Effect.sync(done).pipe(
    Effect.repeat({ until: (ok) => ok, schedule: Schedule.spaced("50 millis") }),
    Effect.timeoutOrElse({
      duration: "30 seconds",
      orElse: () => Effect.die(new Error(`timed out waiting for ${what}`))
    })
  )

interface Line {
  readonly level: LogLevel.LogLevel
  readonly parts: ReadonlyArray<unknown>
}

let databases = 0
Postgres.describePostgres("ChangeFeed on PostgreSQL", (postgres) => {
  it.live(
    "its database refusing connections: reads and LISTEN fail quietly (one line each), back off, and recover",
    () =>
      Effect.gen(function* () {
        const name = `feed_${databases++}`
        const url = yield* postgres().createDatabase(name)
        const lines: Array<Line> = []
        const capture = Logger.make((options) => {
          lines.push({
            level: options.logLevel,
            parts: Array.isArray(options.message) ? options.message : [options.message]
          })
        })
        const a = yield* process(url, "200 millis")
        const b = yield* process(url, "200 millis", [capture])
        yield* listening(url, 2)
        const of = (level: LogLevel.LogLevel, start: string) =>
          lines.filter((line) => line.level === level && String(line.parts[0]).startsWith(start))
        // The outage: no connection to the feeds' database, and every one it had cut.
        const admin = (statement: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) =>
          SqlDatabase.use(
            postgres().url,
            Effect.gen(function* () {
              return yield* statement(yield* SqlClient.SqlClient)
            })
          )
        yield* admin((sql) => sql`ALTER DATABASE ${sql(name)} ALLOW_CONNECTIONS false`)
        yield* admin((sql) => sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${name}`)
        // Each failure is a debug line (and a warning, when it is logged at all): at least four of each kind.
        // Reads are tried again after 0.2, 0.4, 0.8 s...; LISTEN a second after its loss, then after 1, 2 s...
        const failures = (outage: string) => of("Debug", outage).length + of("Warn", outage).length
        yield* until(
          () => failures("cluster changes not read") >= 7 && failures("cluster changes: LISTEN lost") >= 7,
          "failed reads and LISTENs"
        )
        for (const outage of ["cluster changes not read", "cluster changes: LISTEN lost"]) {
          const warned = of("Warn", outage)
          // The first failure, and any saying something new (at most 3): never one line per attempt.
          assert.isAtMost(warned.length, 3, outage)
          assert.isAtLeast(warned.length, 1, outage)
          assert.isBelow(warned.length, of("Debug", outage).length, outage)
          for (const line of warned) {
            assert.strictEqual(line.parts.length, 1, "one line: the message, no error object")
            assert.notInclude(String(line.parts[0]), "\n")
          }
        }

        yield* admin((sql) => sql`ALTER DATABASE ${sql(name)} ALLOW_CONNECTIONS true`)
        yield* until(
          () =>
            of("Info", "cluster changes read again: recovered after").length === 1 &&
            of("Info", "cluster changes: listening again: recovered after").length === 1,
          "both to recover"
        )
        // Listening again: a change crosses by NOTIFY, not the next poll.
        yield* listening(url, 2)
        yield* a.server.resourceUpdated("test://watched")
        const heard = yield* Queue.take(b.notifications).pipe(Effect.timeoutOption("5 seconds"))
        assert.strictEqual(heard._tag === "Some" ? heard.value.method : "nothing", UPDATED)
      }).pipe(Effect.scoped),
    60_000
  )

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
