/**
 * List changes and resource updates fanned out across the processes of a
 * cluster. Each process's McpServer announces a change to its own sessions
 * and `subscriptions/listen` streams; this feed publishes it (McpServer's
 * `onChange` hook) to a table of the cluster's SQL database, and every other
 * process reads the table and announces it to its own (McpServer's
 * `deliver`). A session is held by one process at a time (its owner) and a
 * `subscriptions/listen` stream by the process serving it, so each hears a
 * change exactly once, whichever process made it.
 *
 * The table is polled, as effect/cluster polls its own message storage: a
 * change reaches the other processes within `pollInterval`. On PostgreSQL a
 * writer also sends a `NOTIFY` on a channel named after the table once its
 * rows are committed, and every process `LISTEN`s to it and reads the table
 * at once: a change crosses in a few milliseconds, and the poll stays as the
 * safety net (a notification lost with its connection, a listener being
 * reconnected). Rows are read again for a few seconds (writers' commits may
 * land out of order on PostgreSQL) and remembered by id, so none is delivered
 * twice; they are deleted after `retention`.
 *
 * While the database is down, its reads, writes and LISTEN fail on every
 * process: each kind is logged once per outage, as one line (the error's
 * messages; the whole error only at debug level), and once more when it
 * works again ("recovered after N s, M failed reads"). A failed read is
 * tried again after `pollInterval`, then twice as long each time up to 5
 * seconds, and LISTEN likewise from a second; once a read works, the poll
 * runs every `pollInterval` again.
 *
 * Task statuses travel here too (`TaskStatus`, the task's id only: the
 * process that wants it reads the record from the shared task store), and
 * the input a process received for a task another runs (`TaskInput`, the
 * `tasks/update` answers, kept in the table for `retention` like any change).
 */
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import * as Outage from "./internal/outage.ts"

/** Settings of the change feed. */
export interface Options {
  /** Name of the table. Default `mcp_cluster_changes`. */
  readonly table?: string | undefined
  /** How often a process reads the changes the others made. Default 200 milliseconds. */
  readonly pollInterval?: Duration.Input | undefined
  /** How long a change stays in the table. Default 1 minute. */
  readonly retention?: Duration.Input | undefined
}

/** How far back (ms) each read looks past the newest change seen: commits may land out of order. */
const LOOKBACK_MS = 5_000

/**
 * The longest wait between two attempts while the database fails (reads wait
 * `pollInterval` after a first failure, LISTEN a second, then twice as long
 * each time up to this): a change made once it is back is read within it.
 */
const MAX_BACKOFF = Duration.seconds(5)

/** What `@effect/sql-pg`'s client adds to `SqlClient` (read by shape: SQLite users never load `pg`). */
interface Notifying {
  readonly listen: (
    channel: string
  ) => Effect.Effect<Queue.Dequeue<{ readonly payload: string }, SqlError>, SqlError, Scope.Scope>
  readonly notify: (channel: string, payload: string) => Effect.Effect<void, SqlError>
}

const notifying = (sql: SqlClient.SqlClient): Notifying | undefined => {
  const client = sql as unknown as Partial<Notifying>
  return sql.onDialectOrElse({
    pg: () =>
      typeof client.listen === "function" && typeof client.notify === "function" ? (client as Notifying) : undefined,
    orElse: () => undefined
  })
}

interface Row {
  readonly id: string
  readonly origin: string
  readonly change: string
  readonly at: number | bigint | string
}

/** A change as its row stores it: `McpServer.Change`, checked field by field when read back. */
const Change: Schema.Codec<McpServer.Change> = Schema.Union([
  Schema.TaggedStruct("ListChanged", { kind: Schema.Literals(["tools", "resources", "prompts"]) }),
  Schema.TaggedStruct("ResourceUpdated", { uri: Schema.String }),
  Schema.TaggedStruct("TaskStatus", { taskId: Schema.String }),
  Schema.TaggedStruct("TaskInput", { taskId: Schema.String, responses: Schema.Record(Schema.String, Schema.Unknown) })
])

/** A change as the JSON text of its row. */
const ChangeJson = Schema.fromJsonString(Change)

/** The text of a change's row; none for a change JSON cannot hold (a task input with a BigInt...). */
const encode = (change: McpServer.Change): string | undefined =>
  Option.getOrUndefined(Schema.encodeOption(ChangeJson)(change))

/** The change a row holds, or undefined when it holds none (written by another version, say). */
const decode = (text: string): McpServer.Change | undefined =>
  Option.getOrUndefined(Schema.decodeUnknownOption(ChangeJson)(text))

/**
 * Connects the McpServer of this process to the cluster's change table,
 * until the scope closes: its changes are published, the others' delivered.
 */
export const make = Effect.fnUntraced(function* (
  options?: Options
): Effect.fn.Return<void, SqlError, McpServer.McpServer | SqlClient.SqlClient | Scope.Scope> {
  const server = yield* McpServer.McpServer
  const sql = yield* SqlClient.SqlClient
  const name = options?.table ?? "mcp_cluster_changes"
  const table = sql(name)
  const pollEvery = Duration.fromInputUnsafe(options?.pollInterval ?? Duration.millis(200))
  const retentionMs = Duration.toMillis(Duration.fromInputUnsafe(options?.retention ?? Duration.minutes(1)))
  // PostgreSQL may refuse one of two runners creating the same table at once (a duplicate type): tried again.
  yield* Effect.retry(
    Effect.andThen(
      sql`CREATE TABLE IF NOT EXISTS ${table} (
        id VARCHAR(64) PRIMARY KEY,
        origin VARCHAR(64) NOT NULL,
        change TEXT NOT NULL,
        at BIGINT NOT NULL
      )`,
      sql`CREATE INDEX IF NOT EXISTS ${sql(`${name}_at`)} ON ${table} (at)`
    ),
    { schedule: Schedule.spaced("100 millis"), times: 5 }
  )

  const origin = crypto.randomUUID()
  let sequence = 0
  const pg = notifying(sql)
  // While the database is down each of these fails again and again: logged once per outage (internal/outage.ts).
  const publishing = new Outage.Outage({
    failed: "cluster changes not published",
    recovered: "cluster changes published again",
    attempt: "write"
  })
  const reading = new Outage.Outage({
    failed: "cluster changes not read",
    recovered: "cluster changes read again",
    attempt: "read"
  })
  const listening = new Outage.Outage({
    failed: "cluster changes: LISTEN lost",
    recovered: "cluster changes: listening again",
    attempt: "LISTEN"
  })
  const outbox = yield* Queue.unbounded<McpServer.Change>()
  // Announcing never waits for the database: the change is written by the fiber below.
  yield* server.onChange((change) => Effect.sync(() => void Queue.offerUnsafe(outbox, change)))
  const write = Effect.gen(function* () {
    const changes = yield* Queue.takeAll(outbox)
    const at = yield* Clock.currentTimeMillis
    const rows: Array<Record<string, unknown>> = []
    for (const change of changes) {
      const text = encode(change)
      if (text === undefined) {
        yield* Effect.logWarning("a cluster change cannot be written as JSON: not published", change)
        continue
      }
      rows.push({ id: `${origin}:${String(sequence++).padStart(12, "0")}`, origin, change: text, at })
    }
    if (!Arr.isArrayNonEmpty(rows)) return
    yield* publishing.attempt(
      // Committed: the others read the table now rather than on their next poll.
      Effect.andThen(
        sql`INSERT INTO ${table} ${sql.insert(rows)}`,
        pg === undefined ? Effect.void : pg.notify(name, origin)
      )
    )
  })
  yield* Effect.forkScoped(Effect.forever(write))

  // Ids seen, with when they were written; forgotten once older than the window read.
  const seen = new Map<string, number>()
  let newest: number | undefined
  let reads = 0
  const read = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const since = (newest ?? now) - LOOKBACK_MS
    const rows = yield* sql<Row>`SELECT id, origin, change, at FROM ${table} WHERE at >= ${since} ORDER BY at, id`
    const first = newest === undefined
    const fresh: Array<McpServer.Change> = []
    for (const row of rows) {
      const at = Number(row.at)
      if (seen.has(row.id)) continue
      seen.set(row.id, at)
      if (newest === undefined || at > newest) newest = at
      // The first read only learns what is there already: those changes were announced before this process served anyone.
      if (first || row.origin === origin) continue
      const change = decode(row.change)
      if (change !== undefined) fresh.push(change)
    }
    newest ??= now
    for (const [id, at] of seen) if (at < since) seen.delete(id)
    for (const change of fresh) yield* server.deliver(change)
    if (reads++ % 50 === 0) yield* sql`DELETE FROM ${table} WHERE at < ${now - retentionMs}`
  })
  yield* reading.attempt(read)
  // A read follows a wake-up (NOTIFY) or `pollEvery` without one; wake-ups during a read make one more read.
  // A read that fails is tried again after `pollEvery`, then twice as long each time (up to MAX_BACKOFF) until
  // one succeeds; the next read is `pollEvery` after it.
  const readBackoff = Outage.backoff(pollEvery, Duration.max(pollEvery, MAX_BACKOFF))
  const wake = yield* Queue.dropping<void>(1)
  const poll = Effect.andThen(
    Effect.timeoutOption(Queue.take(wake), pollEvery),
    Outage.retrying(read, reading, readBackoff)
  )
  yield* Effect.forkScoped(Effect.forever(poll))
  if (pg !== undefined) {
    // Listens until the connection is lost (LISTEN itself tried again with backoff); the error that lost it.
    const listen = Effect.gen(function* () {
      const notifications = yield* Outage.retrying(pg.listen(name), listening, Outage.backoff("1 second", MAX_BACKOFF))
      // Changes made while not listening are read by the poll; a process's own need no read.
      return yield* Effect.flip(
        Effect.forever(
          Effect.flatMap(Queue.take(notifications), (notification) =>
            notification.payload === origin ? Effect.void : Queue.offer(wake, undefined)
          )
        )
      )
    }).pipe(Effect.scoped)
    // Listening again a second after a loss, with a fresh backoff: a loss after a healthy spell waits no longer.
    yield* Effect.forkScoped(
      Effect.forever(Effect.flatMap(listen, (lost) => Effect.andThen(listening.failed(lost), Effect.sleep("1 second"))))
    )
  }
})

/** Connects the server to the cluster's change table while the Layer is alive. */
export const layer = (options?: Options): Layer.Layer<never, SqlError, McpServer.McpServer | SqlClient.SqlClient> =>
  Layer.effectDiscard(make(options))
