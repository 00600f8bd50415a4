/**
 * The durable state of a clustered Streamable HTTP session: its snapshot
 * (`SessionSnapshot`), what its owner needs to reopen it in another process
 * without a new `initialize`, stored as the snapshot's JSON.
 *
 * The owner of a session is its only writer (its shard is held by one runner
 * at a time), so each change rewrites one row; a runner that takes the shard
 * over reads it once. Each row also names the process that wrote it last (its
 * owner then), so that the next owner can ask whether that process still runs
 * (see internal/owner.ts). Rows live in the cluster's own SQL database (SQLite
 * or PostgreSQL), next to effect/cluster's runner and message tables.
 *
 * Beside them, the requests answered on each SSE stream (`claimAnswers`): a
 * session's next owner answers what its streams still owed (-32603) while its
 * former owner, not yet aware that it moved, may finish one of those requests;
 * whichever records the answer first stores it, so that a stream resumed
 * anywhere carries one answer per request (internal/oneAnswer.ts).
 */
import * as SessionSnapshot from "@effect-mcp/engine/SessionSnapshot"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"

/**
 * What a session's owner writes down so the session can continue elsewhere:
 * the engine's `SessionSnapshot` (negotiated revision, the client's
 * capabilities and info, whom it counts against, the principal it is bound
 * to, where its request ids go on, its log level and subscriptions).
 */
export type State = SessionSnapshot.SessionSnapshot

/** The session state store could not be read or written. */
export class SessionStateError extends Schema.TaggedError<SessionStateError>()("SessionStateError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {}

/** A session's durable state, and the process that last wrote it. */
export interface Stored {
  readonly state: State
  /** The process holding the session when the row was last written (an opaque name it gave), if it gave one. */
  readonly owner: string | undefined
}

/** Where clustered sessions keep their durable state. */
export interface SessionStateShape {
  /** The state of a session and its last owner, or undefined when it is unknown (never opened, or ended). */
  readonly get: (sessionId: string) => Effect.Effect<Stored | undefined, SessionStateError>
  /** Writes a session's whole state, held by `owner` (when given; else the row's owner is kept). */
  readonly put: (sessionId: string, state: State, owner?: string) => Effect.Effect<void, SessionStateError>
  /** Forgets a session (it ended). */
  readonly remove: (sessionId: string) => Effect.Effect<void, SessionStateError>
  /**
   * Marks sessions as still open (their rows do not expire while a runner
   * holds them), held by `owner` when given.
   */
  readonly touch: (sessionIds: ReadonlyArray<string>, owner?: string) => Effect.Effect<void, SessionStateError>
  /**
   * Rewrites the state of sessions `owner` holds (their activity moved on), in
   * one transaction: a row naming another process (the session moved on
   * before this one noticed) or none is left as it is.
   */
  readonly refresh: (
    sessions: ReadonlyArray<{ readonly sessionId: string; readonly state: State }>,
    owner: string
  ) => Effect.Effect<void, SessionStateError>
  /** Forgets the sessions not written or touched since `before` (epoch milliseconds): they expired. */
  readonly expire: (before: number) => Effect.Effect<number, SessionStateError>
  /**
   * Records that the requests `ids` of SSE stream `streamId` are answered,
   * unless any of them is already (then none is recorded): true when this
   * caller answers them, false when another process answered one first (its
   * answer is the one stored; this one is dropped). Atomic across processes.
   */
  readonly claimAnswers: (
    streamId: string,
    ids: ReadonlyArray<JsonRpc.RequestId>
  ) => Effect.Effect<boolean, SessionStateError>
  /**
   * Forgets the answers recorded before `before` (epoch milliseconds): they
   * matter only while a session's former and next owner may both answer.
   */
  readonly forgetAnswers: (before: number) => Effect.Effect<void, SessionStateError>
}

/** The durable session state of a clustered server. */
export class SessionState extends Context.Service<SessionState, SessionStateShape>()(
  "@effect-mcp/cluster/SessionState"
) {}

/** Options of the SQL session state store. */
export interface SqlOptions {
  /** Name of the table. Default `mcp_cluster_sessions`. */
  readonly table?: string | undefined
  /** Name of the table of the requests answered on each stream (`claimAnswers`). Default `mcp_cluster_answers`. */
  readonly answersTable?: string | undefined
}

const fail = (message: string) => (cause: unknown) => new SessionStateError({ message, cause })

/** A request id as a key: a number and a string of the same digits are different requests. */
const requestKey = (id: JsonRpc.RequestId): string => (typeof id === "number" ? `n${id}` : `s${id}`)

/** A claim that found one of its answers recorded already: its transaction is rolled back. */
const answeredBefore = Symbol.for("@effect-mcp/cluster/SessionState/answeredBefore")

const chunks = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/** The store on the `SqlClient` (SQLite or PostgreSQL); creates its table when absent. */
export const makeSql = Effect.fnUntraced(function* (options?: SqlOptions) {
  const sql = yield* SqlClient.SqlClient
  const table = sql(options?.table ?? "mcp_cluster_sessions")
  // PostgreSQL may refuse one of two runners creating the same table at once (a duplicate type): tried again.
  yield* sql`CREATE TABLE IF NOT EXISTS ${table} (
    id VARCHAR(255) PRIMARY KEY,
    state TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    owner TEXT
  )`.pipe(
    Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 5 }),
    Effect.mapError(fail("cannot create the session state table"))
  )
  // A table made before owners were written down gains the column (SQLite has no `IF NOT EXISTS` here:
  // its "duplicate column" error says the column is there already).
  yield* sql
    .onDialectOrElse({
      pg: () => sql`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS owner TEXT`,
      orElse: () => sql`ALTER TABLE ${table} ADD COLUMN owner TEXT`
    })
    .pipe(Effect.ignore)
  const answersName = options?.answersTable ?? "mcp_cluster_answers"
  const answers = sql(answersName)
  yield* Effect.andThen(
    sql`CREATE TABLE IF NOT EXISTS ${answers} (
    stream_id TEXT NOT NULL,
    request_id TEXT NOT NULL,
    answered_at BIGINT NOT NULL,
    PRIMARY KEY (stream_id, request_id)
  )`,
    sql`CREATE INDEX IF NOT EXISTS ${sql(`${answersName}_at`)} ON ${answers} (answered_at)`
  ).pipe(
    Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 5 }),
    Effect.mapError(fail("cannot create the answers table"))
  )
  // One statement: inserted (returned) unless the row is there, whichever process inserts it first.
  const claimOne = (streamId: string, id: JsonRpc.RequestId, now: number) =>
    Effect.map(
      sql<{ readonly stream_id: string }>`INSERT INTO ${answers} (stream_id, request_id, answered_at)
        VALUES (${streamId}, ${requestKey(id)}, ${now}) ON CONFLICT DO NOTHING RETURNING stream_id`,
      (rows) => rows.length === 1
    )
  return SessionState.of({
    get: (sessionId) =>
      sql<{
        readonly state: string
        readonly owner: string | null
      }>`SELECT state, owner FROM ${table} WHERE id = ${sessionId}`.pipe(
        Effect.map((rows) => {
          // A row that no longer decodes is a session that cannot continue: unknown, as an ended one.
          const state = rows.length === 0 ? undefined : SessionSnapshot.fromJson(rows[0]!.state)
          return state === undefined ? undefined : { state, owner: rows[0]!.owner ?? undefined }
        }),
        Effect.mapError(fail("cannot read a session's state"))
      ),
    put: (sessionId, state, owner) =>
      Clock.currentTimeMillis.pipe(
        Effect.flatMap((now) => {
          const json = SessionSnapshot.toJson(state)
          return owner === undefined
            ? sql`INSERT INTO ${table} (id, state, updated_at) VALUES (${sessionId}, ${json}, ${now})
        ON CONFLICT (id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`
            : sql`INSERT INTO ${table} (id, state, updated_at, owner) VALUES (${sessionId}, ${json}, ${now}, ${owner})
        ON CONFLICT (id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at, owner = excluded.owner`
        }),
        Effect.asVoid,
        Effect.mapError(fail("cannot write a session's state"))
      ),
    remove: (sessionId) =>
      sql`DELETE FROM ${table} WHERE id = ${sessionId}`.pipe(
        Effect.asVoid,
        Effect.mapError(fail("cannot forget a session"))
      ),
    touch: (sessionIds, owner) =>
      Clock.currentTimeMillis.pipe(
        Effect.flatMap((now) =>
          Effect.forEach(
            chunks(sessionIds, 500),
            (ids) =>
              owner === undefined
                ? sql`UPDATE ${table} SET updated_at = ${now} WHERE ${sql.in("id", ids)}`
                : sql`UPDATE ${table} SET updated_at = ${now}, owner = ${owner} WHERE ${sql.in("id", ids)}`,
            { discard: true }
          )
        ),
        Effect.mapError(fail("cannot touch sessions"))
      ),
    refresh: (sessions, owner) =>
      Clock.currentTimeMillis.pipe(
        Effect.flatMap((now) =>
          sql.withTransaction(
            Effect.forEach(
              sessions,
              ({ sessionId, state }) =>
                sql`UPDATE ${table} SET state = ${SessionSnapshot.toJson(state)}, updated_at = ${now}
        WHERE id = ${sessionId} AND owner = ${owner}`,
              { discard: true }
            )
          )
        ),
        Effect.mapError(fail("cannot refresh sessions"))
      ),
    expire: (before) =>
      sql<{ readonly id: string }>`DELETE FROM ${table} WHERE updated_at < ${before} RETURNING id`.pipe(
        Effect.map((rows) => rows.length),
        Effect.mapError(fail("cannot expire sessions"))
      ),
    claimAnswers: (streamId, ids) =>
      Clock.currentTimeMillis.pipe(
        Effect.flatMap((now) => {
          if (ids.length === 1) return claimOne(streamId, ids[0]!, now)
          // A batch answers all its requests or none: one already answered rolls the others back.
          return sql
            .withTransaction(
              Effect.forEach(ids, (id) =>
                Effect.flatMap(claimOne(streamId, id, now), (claimed) =>
                  claimed ? Effect.void : Effect.fail(answeredBefore)
                )
              )
            )
            .pipe(
              Effect.as(true),
              Effect.catch((error) => (error === answeredBefore ? Effect.succeed(false) : Effect.fail(error)))
            )
        }),
        Effect.mapError(fail("cannot record an answer"))
      ),
    forgetAnswers: (before) =>
      sql`DELETE FROM ${answers} WHERE answered_at < ${before}`.pipe(
        Effect.asVoid,
        Effect.mapError(fail("cannot forget answers"))
      )
  })
})

/** Provides the SQL session state store. */
export const layerSql = (options?: SqlOptions): Layer.Layer<SessionState, SessionStateError, SqlClient.SqlClient> =>
  Layer.effect(SessionState, makeSql(options))

/** An in-memory store, for one process or a test. */
export const makeMemory = (): SessionStateShape => {
  const rows = new Map<string, { readonly state: State; readonly owner: string | undefined; readonly at: number }>()
  // Each answered request, keyed by its stream and id, with when it was recorded.
  const answered = new Map<string, number>()
  const answerKey = (streamId: string, id: JsonRpc.RequestId) => `${streamId}\u0000${requestKey(id)}`
  return {
    get: (sessionId) =>
      Effect.sync(() => {
        const row = rows.get(sessionId)
        return row === undefined ? undefined : { state: row.state, owner: row.owner }
      }),
    put: (sessionId, state, owner) =>
      Effect.map(Clock.currentTimeMillis, (at) => {
        rows.set(sessionId, { state, owner: owner ?? rows.get(sessionId)?.owner, at })
      }),
    remove: (sessionId) => Effect.sync(() => void rows.delete(sessionId)),
    touch: (sessionIds, owner) =>
      Effect.map(Clock.currentTimeMillis, (at) => {
        for (const id of sessionIds) {
          const row = rows.get(id)
          if (row !== undefined) rows.set(id, { state: row.state, owner: owner ?? row.owner, at })
        }
      }),
    refresh: (sessions, owner) =>
      Effect.map(Clock.currentTimeMillis, (at) => {
        for (const { sessionId, state } of sessions) {
          if (rows.get(sessionId)?.owner === owner) rows.set(sessionId, { state, owner, at })
        }
      }),
    expire: (before) =>
      Effect.sync(() => {
        let n = 0
        for (const [id, row] of rows) {
          if (row.at < before) {
            rows.delete(id)
            n++
          }
        }
        return n
      }),
    claimAnswers: (streamId, ids) =>
      Effect.map(Clock.currentTimeMillis, (at) => {
        const keys = ids.map((id) => answerKey(streamId, id))
        if (keys.some((key) => answered.has(key))) return false
        for (const key of keys) answered.set(key, at)
        return true
      }),
    forgetAnswers: (before) =>
      Effect.sync(() => {
        for (const [key, at] of answered) if (at < before) answered.delete(key)
      })
  }
}
