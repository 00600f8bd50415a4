/**
 * The database of the durable stores, named by one URL so a command line or
 * an environment variable can choose it: `sqlite:<path>` (or `sqlite::memory:`)
 * for the embedded default, `postgres://` / `postgresql://` for PostgreSQL.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import * as NodeSqlite from "./NodeSqlite.ts"
import * as OptionalPeer from "./internal/optionalPeer.ts"

/**
 * A database URL this package cannot open: one it does not read, or a
 * `postgres://` URL while the optional `@effect/sql-pg` is not installed (the
 * message says to install it).
 */
export class DatabaseUrlError extends Data.TaggedError("DatabaseUrlError")<{ readonly message: string }> {}

/** What a database URL names. */
export type Target =
  | { readonly _tag: "Sqlite"; readonly filename: string }
  | { readonly _tag: "Postgres"; readonly url: Redacted.Redacted<string> }

/** Reads a database URL; the PostgreSQL URL (it may carry a password) is kept redacted. */
export const parse = (url: string): Target | DatabaseUrlError => {
  if (url.startsWith("sqlite:")) {
    const filename = url.slice("sqlite:".length).replace(/^\/\/(?=\/)/, "")
    return filename === ""
      ? new DatabaseUrlError({ message: "sqlite: needs a file name" })
      : { _tag: "Sqlite", filename }
  }
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) {
    return { _tag: "Postgres", url: Redacted.make(url) }
  }
  return new DatabaseUrlError({ message: "a database URL starts with sqlite: or postgres://" })
}

/** Provides `SqlClient` on the database a URL names (see `parse`). */
export const layer = (url: string): Layer.Layer<SqlClient.SqlClient, SqlError | DatabaseUrlError> =>
  Layer.unwrap(
    Effect.suspend(() => {
      const target = parse(url)
      if (target instanceof DatabaseUrlError) return Effect.fail(target)
      if (target._tag === "Sqlite") return Effect.succeed(NodeSqlite.layer({ filename: target.filename }))
      // Loaded only when asked for: `@effect/sql-pg` is an optional peer dependency, so its absence is a
      // failure that says to install it (a rejected import would be a defect: a stack trace, or nothing at all,
      // where the person running the program needs the one command that fixes it).
      return OptionalPeer.importOptional({
        name: "@effect/sql-pg",
        neededBy: "PostgreSQL",
        load: () => import("@effect/sql-pg/PgClient"),
        onError: (message) => new DatabaseUrlError({ message })
      }).pipe(Effect.map((Pg): Layer.Layer<SqlClient.SqlClient, SqlError> => Pg.layer({ url: target.url })))
    })
  )

/**
 * Runs `effect` (a store's `make`, say) on the database a URL names, its
 * connection open for the current scope: each store made this way has a
 * connection of its own.
 */
export const use = <A, E, R>(
  url: string,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | SqlError | DatabaseUrlError, Exclude<R, SqlClient.SqlClient> | Scope.Scope> =>
  Effect.flatMap(Layer.build(layer(url)), (context) => Effect.provideContext(effect, context))
