/**
 * The Streamable HTTP `EventStore` on effect/sql (SQLite or PostgreSQL), so
 * that a stream dropped on one server process can be resumed with
 * `Last-Event-ID` on any process sharing the database.
 *
 * Retention is bounded: a stream keeps its newest `maxEventsPerStream`
 * events, and an event older than `maxAge` (on the `Clock`) can no longer be
 * resumed after and is deleted by a sweep. The table is created on start by
 * effect's `Migrator`, with its own migrations table (other stores of this
 * package keep theirs), so several processes may start on one database.
 *
 * A session that ends (deleted, expired) takes its streams' events with it
 * (`forgetSession`): no process sharing the database replays them after.
 *
 * Each event also keeps the requests its stream still owes after it
 * (`pending`, NULL when none), so that `owed` tells a session's next process
 * what its lost one left unanswered.
 */
import * as EventStore from "@effect-mcp/http/EventStore"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { immediately } from "./internal/immediate.ts"

/** How the store is laid out and what it keeps. */
export interface Options {
  /** The events table; its migrations are recorded in `<table>_migrations`. Default `effect_mcp_events`. */
  readonly table?: string | undefined
  /** Events kept per stream; older ones are deleted (and can no longer be resumed after). Default 1,024. */
  readonly maxEventsPerStream?: number | undefined
  /** How long an event stays resumable; older ones are deleted by the sweep. Default 1 hour. */
  readonly maxAge?: Duration.Input | undefined
  /** How often expired events are deleted. Default 1 minute. */
  readonly sweepInterval?: Duration.Input | undefined
}

interface AnchorRow {
  readonly stream_id: string
  readonly created_at: number | string
}

interface OwedRow {
  readonly stream_id: string
  readonly pending: string
}

interface EventRow {
  readonly seq: number | string
  readonly data: string
}

const storeError = (operation: string) => (cause: SqlError) =>
  new EventStore.EventStoreError({ message: `event store ${operation} failed: ${cause.message}`, cause })

// An event id is its stream id and its row number: resuming checks both, so an id names one event only.
const parseId = (eventId: string): { readonly streamId: string; readonly seq: number } | undefined => {
  const at = eventId.lastIndexOf("_")
  if (at <= 0) return undefined
  const seq = eventId.slice(at + 1)
  return /^[0-9]{1,15}$/.test(seq) ? { streamId: eventId.slice(0, at), seq: Number(seq) } : undefined
}

const createTable = (table: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const t = sql(table)
    yield* sql.onDialectOrElse({
      pg: () =>
        sql`CREATE TABLE IF NOT EXISTS ${t} (
          seq BIGSERIAL PRIMARY KEY,
          stream_id TEXT NOT NULL,
          data TEXT NOT NULL,
          created_at BIGINT NOT NULL
        )`,
      orElse: () =>
        sql`CREATE TABLE IF NOT EXISTS ${t} (
          seq INTEGER PRIMARY KEY AUTOINCREMENT,
          stream_id TEXT NOT NULL,
          data TEXT NOT NULL,
          created_at INTEGER NOT NULL
        )`
    })
    yield* sql`CREATE INDEX IF NOT EXISTS ${sql(`${table}_stream`)} ON ${t} (stream_id, seq)`
    yield* sql`CREATE INDEX IF NOT EXISTS ${sql(`${table}_created`)} ON ${t} (created_at)`
  })

// The requests a stream still owes after an event (JSON ids), kept only while it owes some (`owed`).
const addPending = (table: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE ${sql(table)} ADD COLUMN pending TEXT`
  })

// A session's streams are a range of stream ids byte by byte (`forgetSession`): SQLite's stream index already
// orders them so; PostgreSQL's may not (its collation), so it gets an index in the "C" collation.
const indexSessions = (table: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql.onDialectOrElse({
      pg: () => sql`CREATE INDEX IF NOT EXISTS ${sql(`${table}_session`)} ON ${sql(table)} ((stream_id COLLATE "C"))`,
      orElse: () => Effect.void
    })
  })

/** Creates the events table when it is missing (run by `make`; exported for deployments that migrate ahead). */
export const migrate = (options?: Pick<Options, "table">) => {
  const table = options?.table ?? "effect_mcp_events"
  return immediately(
    Migrator.make({})({
      loader: Migrator.fromRecord({
        "1_create_events": createTable(table),
        "2_pending": addPending(table),
        "3_session_index": indexSessions(table)
      }),
      table: `${table}_migrations`
    })
  )
}

/** Builds the store on the current `SqlClient`, creating its table; the sweep lives in the current scope. */
export const make = Effect.fnUntraced(function* (
  options?: Options
): Effect.fn.Return<EventStore.EventStoreShape, SqlError | Migrator.MigrationError, SqlClient.SqlClient | Scope.Scope> {
  const sql = yield* SqlClient.SqlClient
  const table = options?.table ?? "effect_mcp_events"
  const t = sql(table)
  const maxEvents = Math.max(1, options?.maxEventsPerStream ?? 1024)
  const maxAgeMs = Duration.toMillis(Duration.fromInputUnsafe(options?.maxAge ?? Duration.hours(1)))
  const sweepEvery = Duration.fromInputUnsafe(options?.sweepInterval ?? Duration.minutes(1))
  yield* migrate({ table })

  const cutoff = Effect.map(Clock.currentTimeMillis, (now) => now - maxAgeMs)

  // The stream's newest `maxEvents` stay; the row at that offset and older ones go.
  const trim = (streamId: string, offset: number) =>
    sql`DELETE FROM ${t} WHERE stream_id = ${streamId} AND seq <= (
      SELECT seq FROM ${t} WHERE stream_id = ${streamId} ORDER BY seq DESC LIMIT 1 OFFSET ${offset}
    )`
  const insert = (streamId: string, data: string, now: number, pending: string | null) =>
    sql<{ readonly seq: number | string }>`INSERT INTO ${t} (stream_id, data, created_at, pending)
      VALUES (${streamId}, ${data}, ${now}, ${pending}) RETURNING seq`
  // One commit (a sync to disk) and, on PostgreSQL, one round trip per event: the trim runs in the same
  // statement there (it sees the table before the insert, hence one less), in the same transaction on SQLite.
  const store: (
    streamId: string,
    data: string,
    now: number,
    pending: string | null
  ) => Effect.Effect<ReadonlyArray<{ readonly seq: number | string }>, SqlError> = sql.onDialectOrElse({
    pg: () => (streamId: string, data: string, now: number, pending: string | null) =>
      sql<{ readonly seq: number | string }>`WITH inserted AS (${insert(streamId, data, now, pending)}),
        trimmed AS (${trim(streamId, maxEvents - 1)}) SELECT seq FROM inserted`,
    orElse: () => (streamId: string, data: string, now: number, pending: string | null) =>
      sql.withTransaction(Effect.tap(insert(streamId, data, now, pending), () => trim(streamId, maxEvents)))
  })

  const append = (streamId: string, data: string, options?: EventStore.AppendOptions) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      store(
        streamId,
        data,
        now,
        options?.pending !== undefined && options.pending.length > 0 ? JSON.stringify(options.pending) : null
      )
    ).pipe(
      Effect.map((rows) => `${streamId}_${rows[0]!.seq}`),
      Effect.mapError(storeError("append"))
    )

  const replayAfter = (eventId: string) =>
    Effect.gen(function* () {
      const parsed = parseId(eventId)
      if (parsed === undefined) return undefined
      const since = yield* cutoff
      const anchor = yield* sql<AnchorRow>`SELECT stream_id, created_at FROM ${t} WHERE seq = ${parsed.seq}`
      const row = anchor[0]
      if (row === undefined || row.stream_id !== parsed.streamId || Number(row.created_at) < since) return undefined
      const rows = yield* sql<EventRow>`SELECT seq, data FROM ${t}
        WHERE stream_id = ${parsed.streamId} AND seq > ${parsed.seq} AND created_at >= ${since} ORDER BY seq`
      return {
        streamId: parsed.streamId,
        events: rows.map((event) => ({ id: `${parsed.streamId}_${event.seq}`, data: event.data }))
      } satisfies EventStore.Replay
    }).pipe(Effect.mapError(storeError("replay")))

  const forget = (streamId: string) =>
    sql`DELETE FROM ${t} WHERE stream_id = ${streamId}`.pipe(Effect.asVoid, Effect.mapError(storeError("forget")))

  // The last event of each stream of a session, when it left requests unanswered and is still resumable. SQLite
  // compares text byte by byte, so a session's stream ids are a range of the stream index; PostgreSQL's collation
  // may not order them so, and compares the prefix (a scan, run once per session that moved).
  const owedRows: (sessionId: string, since: number) => Effect.Effect<ReadonlyArray<OwedRow>, SqlError> =
    sql.onDialectOrElse({
      pg: () => (sessionId: string, since: number) =>
        sql<OwedRow>`SELECT stream_id, pending FROM ${t} WHERE seq IN (
          SELECT MAX(seq) FROM ${t} WHERE substr(stream_id, 1, ${sessionId.length + 1}) = ${`${sessionId}_`}
          GROUP BY stream_id
        ) AND pending IS NOT NULL AND created_at >= ${since}`,
      orElse: () => (sessionId: string, since: number) =>
        sql<OwedRow>`SELECT stream_id, pending FROM ${t} WHERE seq IN (
          SELECT MAX(seq) FROM ${t} WHERE stream_id > ${`${sessionId}_`} AND stream_id < ${`${sessionId}\``}
          GROUP BY stream_id
        ) AND pending IS NOT NULL AND created_at >= ${since}`
    })

  // Every stream of a session: its id, an underscore and a suffix without one (a session `a` is not `a_b`'s),
  // found as the range of ids from `<id>_` to `<id>\`` (the character after the underscore), byte by byte. Session
  // ids are visible ASCII, so the suffix starts at the same character in SQL as in JavaScript.
  const forgetSessionRows: (sessionId: string) => Effect.Effect<unknown, SqlError> = sql.onDialectOrElse({
    pg: () => (sessionId: string) =>
      sql`DELETE FROM ${t} WHERE (stream_id COLLATE "C") > ${`${sessionId}_`}
        AND (stream_id COLLATE "C") < ${`${sessionId}\``}
        AND strpos(substr(stream_id, ${sessionId.length + 2}), '_') = 0`,
    orElse: () => (sessionId: string) =>
      sql`DELETE FROM ${t} WHERE stream_id > ${`${sessionId}_`} AND stream_id < ${`${sessionId}\``}
        AND instr(substr(stream_id, ${sessionId.length + 2}), '_') = 0`
  })

  const forgetSession = (sessionId: string) =>
    forgetSessionRows(sessionId).pipe(Effect.asVoid, Effect.mapError(storeError("forget session")))

  const owed = (sessionId: string) =>
    Effect.flatMap(cutoff, (since) => owedRows(sessionId, since)).pipe(
      Effect.map((rows) =>
        rows.map(
          (row): EventStore.Owed => ({
            streamId: row.stream_id,
            ids: JSON.parse(row.pending) as ReadonlyArray<string | number>
          })
        )
      ),
      Effect.mapError(storeError("owed"))
    )

  const sweep = Effect.flatMap(cutoff, (since) => sql`DELETE FROM ${t} WHERE created_at < ${since}`).pipe(
    Effect.catch((error) => Effect.logWarning(`event store sweep failed: ${error.message}`))
  )
  yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced(sweepEvery)))

  // Other processes may hold the sessions whose events this database keeps; a session that ended has none.
  return { append, replayAfter, forget, forgetSession, owed, shared: true } satisfies EventStore.EventStoreShape
})

/** Provides the engine's `EventStore` on the `SqlClient` given to it. */
export const layer = (
  options?: Options
): Layer.Layer<EventStore.EventStore, SqlError | Migrator.MigrationError, SqlClient.SqlClient> =>
  Layer.effect(EventStore.EventStore, make(options))
