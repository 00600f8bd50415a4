/**
 * The durable state of a clustered Streamable HTTP session: its snapshot
 * (`SessionSnapshot`), what its owner needs to reopen it in another process
 * without a new `initialize`, stored as the snapshot's JSON.
 *
 * The owner of a session is its only writer (its shard is held by one runner
 * at a time), so each change rewrites one row; a runner that takes the shard
 * over reads it once. Rows live in the cluster's own SQL database (SQLite or
 * PostgreSQL), next to effect/cluster's runner and message tables.
 */
import * as SessionSnapshot from "@effect-mcp/engine/SessionSnapshot"
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

/** Where clustered sessions keep their durable state. */
export interface SessionStateShape {
  /** The state of a session, or undefined when it is unknown (never opened, or ended). */
  readonly get: (sessionId: string) => Effect.Effect<State | undefined, SessionStateError>
  /** Writes a session's whole state. */
  readonly put: (sessionId: string, state: State) => Effect.Effect<void, SessionStateError>
  /** Forgets a session (it ended). */
  readonly remove: (sessionId: string) => Effect.Effect<void, SessionStateError>
  /** Marks sessions as still open (their rows do not expire while a runner holds them). */
  readonly touch: (sessionIds: ReadonlyArray<string>) => Effect.Effect<void, SessionStateError>
  /** Forgets the sessions not written or touched since `before` (epoch milliseconds): they expired. */
  readonly expire: (before: number) => Effect.Effect<number, SessionStateError>
}

/** The durable session state of a clustered server. */
export class SessionState extends Context.Service<SessionState, SessionStateShape>()(
  "@effect-mcp/cluster/SessionState"
) {}

/** Options of the SQL session state store. */
export interface SqlOptions {
  /** Name of the table. Default `mcp_cluster_sessions`. */
  readonly table?: string | undefined
}

const fail = (message: string) => (cause: unknown) => new SessionStateError({ message, cause })

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
    updated_at BIGINT NOT NULL
  )`.pipe(
    Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 5 }),
    Effect.mapError(fail("cannot create the session state table"))
  )
  return SessionState.of({
    get: (sessionId) =>
      sql<{ readonly state: string }>`SELECT state FROM ${table} WHERE id = ${sessionId}`.pipe(
        Effect.map((rows) => (rows.length === 0 ? undefined : SessionSnapshot.fromJson(rows[0]!.state))),
        Effect.mapError(fail("cannot read a session's state"))
      ),
    put: (sessionId, state) =>
      Clock.currentTimeMillis.pipe(
        Effect.flatMap(
          (
            now
          ) => sql`INSERT INTO ${table} (id, state, updated_at) VALUES (${sessionId}, ${SessionSnapshot.toJson(state)}, ${now})
        ON CONFLICT (id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`
        ),
        Effect.asVoid,
        Effect.mapError(fail("cannot write a session's state"))
      ),
    remove: (sessionId) =>
      sql`DELETE FROM ${table} WHERE id = ${sessionId}`.pipe(
        Effect.asVoid,
        Effect.mapError(fail("cannot forget a session"))
      ),
    touch: (sessionIds) =>
      Clock.currentTimeMillis.pipe(
        Effect.flatMap((now) =>
          Effect.forEach(
            chunks(sessionIds, 500),
            (ids) => sql`UPDATE ${table} SET updated_at = ${now} WHERE ${sql.in("id", ids)}`,
            { discard: true }
          )
        ),
        Effect.mapError(fail("cannot touch sessions"))
      ),
    expire: (before) =>
      sql<{ readonly id: string }>`DELETE FROM ${table} WHERE updated_at < ${before} RETURNING id`.pipe(
        Effect.map((rows) => rows.length),
        Effect.mapError(fail("cannot expire sessions"))
      )
  })
})

/** Provides the SQL session state store. */
export const layerSql = (options?: SqlOptions): Layer.Layer<SessionState, SessionStateError, SqlClient.SqlClient> =>
  Layer.effect(SessionState, makeSql(options))

/** An in-memory store, for one process or a test. */
export const makeMemory = (): SessionStateShape => {
  const rows = new Map<string, { readonly state: State; readonly at: number }>()
  return {
    get: (sessionId) => Effect.sync(() => rows.get(sessionId)?.state),
    put: (sessionId, state) => Effect.map(Clock.currentTimeMillis, (at) => void rows.set(sessionId, { state, at })),
    remove: (sessionId) => Effect.sync(() => void rows.delete(sessionId)),
    touch: (sessionIds) =>
      Effect.map(Clock.currentTimeMillis, (at) => {
        for (const id of sessionIds) {
          const row = rows.get(id)
          if (row !== undefined) rows.set(id, { state: row.state, at })
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
      })
  }
}
