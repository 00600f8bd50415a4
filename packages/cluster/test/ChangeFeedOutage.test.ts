/**
 * The change feed through an outage of the cluster's database, on the
 * TestClock: two servers sharing one SQLite file, whose change table is
 * dropped (every read fails, as with the database down: "no such table") and
 * made again 30 s later. The reading server logs the first failure as one
 * line (the whole error only at debug level), no more until its reads work
 * again, then one line saying how long and how many; it tries again after
 * `pollInterval`, then twice as long each time up to 5 s (before: a
 * multi-line warning per poll, every 200 ms, 150 in 30 s); once the table is
 * back, a change crosses on the next poll again.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ChangeFeed from "@effect-mcp/cluster/ChangeFeed"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Resource from "@effect-mcp/server/Resource"
import * as NodeSqlite from "@effect-mcp/sql/NodeSqlite"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"
import * as Queue from "effect/Queue"
import * as References from "effect/References"
import * as SqlClient from "effect/sql/SqlClient"
import { TestClock } from "effect/testing"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { backoff, messageOf, Outage, retrying } from "../src/internal/outage.ts"

const watched = Resource.make({ uri: "test://watched", name: "watched", read: Effect.succeed("w") })
const server = Layer.provideMerge(Resource.layer(watched), McpServer.layer({ name: "feed", version: "1.0.0" }))

const tempFile = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "mcp-change-outage-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => join(dir, "cluster.db")))

interface Line {
  readonly level: LogLevel.LogLevel
  /** The parts logged: one string for a line, more (an error object) for what the logger prints on many. */
  readonly parts: ReadonlyArray<unknown>
}

/** A logger keeping what it is given, down to debug level. */
const capture = () => {
  const lines: Array<Line> = []
  const logger = Logger.make((options) => {
    lines.push({ level: options.logLevel, parts: Array.isArray(options.message) ? options.message : [options.message] })
  })
  const provide = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    effect.pipe(
      Effect.provideService(Logger.CurrentLoggers, new Set([logger])),
      Effect.provideService(References.MinimumLogLevel, "Debug")
    )
  return { lines, provide }
}

/** A server with its feed on its own connection to `file` (its logs kept in `lines`), and a listen stream on it. */
const process = (file: string, provide: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const connection = yield* McpTest.connectRaw(server, { revision: "2026-07-28" })
    const sql = yield* Layer.build(NodeSqlite.layer({ filename: file }))
    yield* ChangeFeed.make().pipe(
      Effect.provideService(McpServer.McpServer, connection.server),
      Effect.provideContext(sql),
      provide
    )
    yield* connection.session
      .request("subscriptions/listen", { notifications: { resourceSubscriptions: ["test://watched"] } })
      .pipe(Effect.forkChild)
    assert.strictEqual((yield* Queue.take(connection.notifications)).method, "notifications/subscriptions/acknowledged")
    return connection
  })

const text = (line: Line) => line.parts.map(String).join(" ")

describe("ChangeFeed: the database down", () => {
  it.effect("one line when reads start failing, none while they fail, one when they work again; reads back off", () =>
    Effect.gen(function* () {
      const file = yield* tempFile
      const quiet = capture()
      const logs = capture()
      const a = yield* process(file, quiet.provide)
      const b = yield* process(file, logs.provide)
      const admin = yield* Layer.build(NodeSqlite.layer({ filename: file }))
      const run = <A>(statement: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
        Effect.gen(function* () {
          return yield* statement(yield* SqlClient.SqlClient)
        }).pipe(Effect.provideContext(admin), Effect.orDie)

      // Down at 0 s (B's next read is at 200 ms), back at 30 s.
      yield* run((sql) => sql`DROP TABLE mcp_cluster_changes`)
      yield* TestClock.adjust("30 seconds")
      const failed = logs.lines.filter((line) => line.level === "Debug" && text(line).includes("not read"))
      const warned = logs.lines.filter((line) => line.level === "Warn")
      // Reads at 0.2 s, then 0.2, 0.4, 0.8, 1.6, 3.2 s apart, then every 5 s: 0.4, 0.8, 1.6, 3.2, 6.4, 11.4,
      // 16.4, 21.4, 26.4 s. Every 200 ms, as before, would have been 150 reads and 150 warnings.
      assert.strictEqual(warned.length, 1)
      assert.strictEqual(failed.length, 10)
      assert.strictEqual(warned[0]!.parts.length, 1, "the message alone: no error object, no stack")
      const warning = String(warned[0]!.parts[0])
      assert.notInclude(warning, "\n")
      assert.strictEqual(
        warning,
        "cluster changes not read: SQLite execute failed: no such table: mcp_cluster_changes (retried; logged again once it recovers)"
      )

      yield* run(
        (sql) => sql`CREATE TABLE mcp_cluster_changes (
          id VARCHAR(64) PRIMARY KEY, origin VARCHAR(64) NOT NULL, change TEXT NOT NULL, at BIGINT NOT NULL
        )`
      )
      // The next read, at 31.4 s, works.
      yield* TestClock.adjust("1400 millis")
      const recovered = logs.lines.filter((line) => line.level === "Info")
      assert.deepStrictEqual(
        recovered.map((line) => line.parts),
        [["cluster changes read again: recovered after 31.2 s, 10 failed reads"]]
      )
      assert.strictEqual(logs.lines.filter((line) => line.level === "Warn").length, 1)

      // Back to a read every 200 ms: a change made on A reaches B on its next one.
      yield* a.server.resourceUpdated("test://watched")
      yield* TestClock.adjust("200 millis")
      assert.deepStrictEqual(
        (yield* b.drain).map((notification) => notification.method),
        ["notifications/resources/updated"]
      )
      assert.strictEqual(logs.lines.filter((line) => line.level !== "Debug").length, 2)
    }).pipe(Effect.scoped)
  )
})

describe("Outage", () => {
  it.effect("logs the first failure and each new message once (three at most), and the recovery once", () =>
    Effect.gen(function* () {
      const logs = capture()
      const outage = new Outage({ failed: "x not done", recovered: "x done again", attempt: "attempt" })
      let calls = 0
      // Fails eight times (two messages, then a third and a fourth), then works.
      const messages = ["down", "down", "refused", "down", "refused", "reset", "gone", "down"]
      const flaky = Effect.suspend(() => {
        const message = messages[calls++]
        return message === undefined ? Effect.succeed("ok") : Effect.fail(new Error(message))
      })
      const done = yield* Effect.forkChild(logs.provide(retrying(flaky, outage, backoff("100 millis", "1 second"))))
      yield* TestClock.adjust("1 minute")
      assert.strictEqual((yield* Fiber.await(done))._tag, "Success")
      assert.strictEqual(calls, 9)
      assert.deepStrictEqual(
        logs.lines.filter((line) => line.level !== "Debug").map((line) => line.parts),
        [
          ["x not done: down (retried; logged again once it recovers)"],
          ["x not done: refused"],
          ["x not done: reset"],
          // 100 ms, then twice as long each time up to 1 s: 0.1 + 0.2 + 0.4 + 0.8 + 4 x 1 s.
          ["x done again: recovered after 5.5 s, 8 failed attempts"]
        ]
      )
    })
  )

  it("messageOf: an error and its causes on one line, each message once", () => {
    const driver = new Error("connect ECONNREFUSED\n127.0.0.1:5432")
    const reason = { message: "PgConnection: Failed to connect", cause: driver }
    assert.strictEqual(
      messageOf({ message: "PgConnection: Failed to connect", cause: reason }),
      "PgConnection: Failed to connect: connect ECONNREFUSED 127.0.0.1:5432"
    )
    assert.strictEqual(messageOf("plain"), "plain")
  })
})
