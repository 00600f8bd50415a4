/**
 * An effect/sql `SqlClient` on Node's built-in `node:sqlite` (Node 22.5+, no
 * native build): the embedded database of the durable stores. One
 * connection shared through a semaphore, as SQLite allows one writer.
 *
 * `@effect/sql-sqlite-node`'s published 4.0 betas import effect's former
 * `effect/unstable/*` paths, which effect 4.1 no longer has; this client is
 * built on effect 4.1's own SQLite pieces (`SqlClient.makeSqliteAcquirers`,
 * `Statement.makeCompilerSqlite`, `SqlError.classifySqliteError`) instead.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import * as SqlClient from "effect/sql/SqlClient"
import type * as SqlConnection from "effect/sql/SqlConnection"
import { classifySqliteError, SqlError } from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite"

/** Where the database lives and how it is opened. */
export interface Options {
  /** The database file, or `":memory:"` for a private in-memory database. */
  readonly filename: string
  /**
   * Write-ahead logging (readers do not block the writer; several processes
   * may share the file), with `synchronous = NORMAL`. Default true.
   */
  readonly wal?: boolean | undefined
  /** How long a statement waits for another process's lock before failing, in milliseconds. Default 5,000. */
  readonly busyTimeoutMs?: number | undefined
}

const toSqlError = (cause: unknown, operation: string): SqlError => {
  // node:sqlite's `code` is always "ERR_SQLITE_ERROR"; SQLite's own result code is its `errcode`, which effect's
  // classifier reads from `errno`. Without it every error was an UnknownError: a busy database (SQLITE_BUSY, 5)
  // was not the LockTimeoutError the open retries, and two processes opening one new file failed at once.
  if (typeof cause === "object" && cause !== null) {
    const error = cause as { errcode?: unknown; errno?: unknown }
    if (typeof error.errcode === "number" && error.errno === undefined) error.errno = error.errcode
  }
  return new SqlError({
    reason: classifySqliteError(cause, {
      message: `SQLite ${operation} failed${cause instanceof Error ? `: ${cause.message}` : ""}`,
      operation
    })
  })
}

// node:sqlite binds null, numbers, bigints, strings and bytes only.
const bind = (params: ReadonlyArray<unknown>): Array<SQLInputValue> =>
  params.map((value) =>
    value === undefined
      ? null
      : typeof value === "boolean"
        ? value
          ? 1
          : 0
        : value instanceof Date
          ? value.toISOString()
          : (value as SQLInputValue)
  )

/** Opens the database in the current scope (closed with it) and builds its `SqlClient`. */
export const make = (
  options: Options
): Effect.Effect<SqlClient.SqlClient, SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function* () {
    const db = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          const db = new DatabaseSync(options.filename, { timeout: options.busyTimeoutMs ?? 5_000 })
          // WAL with synchronous=NORMAL: a commit is durable across a crash of the process without an fsync
          // each (the last commits may be lost on a power failure), the usual setting for WAL.
          if (options.wal !== false && options.filename !== ":memory:") {
            try {
              db.exec("PRAGMA journal_mode = WAL")
              db.exec("PRAGMA synchronous = NORMAL")
            } catch (cause) {
              db.close()
              throw cause
            }
          }
          return db
        },
        catch: (cause) => toSqlError(cause, "open")
      }),
      (db) => Effect.sync(() => db.close())
    ).pipe(
      // Processes opening a new file together contend for the switch to WAL: retried a bounded while.
      Effect.retry({
        schedule: Schedule.spaced("50 millis"),
        times: 40,
        while: (error) => error.reason._tag === "LockTimeoutError"
      })
    )
    const prepared = new Map<string, StatementSync>()
    const prepare = (sql: string): StatementSync => {
      let statement = prepared.get(sql)
      if (statement === undefined) {
        statement = db.prepare(sql)
        // A store issues a handful of distinct statements; the bound only guards against misuse.
        if (prepared.size >= 256) prepared.clear()
        prepared.set(sql, statement)
      }
      return statement
    }
    const run = (sql: string, params: ReadonlyArray<unknown>, arrays: boolean, cache: boolean) =>
      Effect.try({
        try: () => {
          const statement = cache ? prepare(sql) : db.prepare(sql)
          if (!statement.columns().length) {
            statement.run(...bind(params))
            return [] as ReadonlyArray<never>
          }
          statement.setReturnArrays(arrays)
          return statement.all(...bind(params)) as unknown as ReadonlyArray<never>
        },
        catch: (cause) => toSqlError(cause, "execute")
      })
    const connection: SqlConnection.Connection = {
      execute: (sql, params, transformRows) =>
        transformRows === undefined
          ? run(sql, params, false, true)
          : Effect.map(run(sql, params, false, true), transformRows),
      executeRaw: (sql, params) => run(sql, params, false, true),
      executeStream: (sql, params, transformRows) =>
        Stream.fromIterableEffect(
          transformRows === undefined
            ? run(sql, params, false, true)
            : Effect.map(run(sql, params, false, true), transformRows)
        ),
      executeValues: (sql, params) => run(sql, params, true, true),
      executeValuesUnprepared: (sql, params) => run(sql, params, true, false),
      executeUnprepared: (sql, params, transformRows) =>
        transformRows === undefined
          ? run(sql, params, false, false)
          : Effect.map(run(sql, params, false, false), transformRows)
    }
    const acquirers = SqlClient.makeSqliteAcquirers({
      connection: Effect.succeed(connection),
      semaphore: Semaphore.makeUnsafe(1),
      isTransaction: () => db.isTransaction
    })
    return yield* SqlClient.make({
      ...acquirers,
      // A deferred BEGIN that reads, then writes after another process committed, fails at once
      // with SQLITE_BUSY (its snapshot is stale; the busy timeout does not apply): effect's Migrator
      // does that when runners start together on a new file. IMMEDIATE takes the write lock first,
      // waiting for it up to the busy timeout.
      beginTransaction: "BEGIN IMMEDIATE",
      compiler: Statement.makeCompilerSqlite(),
      driver: "node:sqlite",
      spanAttributes: [["db.system.name", "sqlite"]]
    })
  })

/** Provides `SqlClient` on a `node:sqlite` database. */
export const layer = (options: Options): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  Layer.effect(SqlClient.SqlClient, make(options)).pipe(Layer.provide(Reactivity.layer))
