/**
 * A store's migration, run so that processes sharing one SQLite file can
 * start together: on SQLite its transaction takes the write lock when it
 * starts (`BEGIN IMMEDIATE`, which waits for another process that holds it,
 * up to the busy timeout) rather than on its first write, where SQLite fails
 * at once when another process migrates meanwhile (it cannot wait there
 * without risking a deadlock). Other dialects run it as it is.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export const immediately = <A, E, R>(migration: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.onDialectOrElse({
      sqlite: () => Effect.provideService(migration, SqlClient.BeginTransaction, "BEGIN IMMEDIATE"),
      orElse: () => migration
    })
  )
