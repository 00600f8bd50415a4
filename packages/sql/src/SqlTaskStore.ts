/**
 * The server's `TaskStore` on effect/sql (SQLite or PostgreSQL): task
 * records and results survive a restart, and processes sharing the database
 * read each other's tasks. Each server process heartbeats its worker id in
 * a second table; a task left `working` by a worker that stopped
 * heartbeating (its process died) reads `failed`, never `working` forever.
 *
 * Results, errors and input requests are stored as JSON text. The tables are
 * created on start by effect's `Migrator`, with their own migrations table.
 */
import * as TaskStore from "@effect-mcp/server/TaskStore"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { immediately } from "./internal/immediate.ts"

/** How the store is laid out. */
export interface Options {
  /**
   * The tasks table; workers are in `<table>_workers` and migrations in
   * `<table>_migrations`. Default `effect_mcp_tasks`.
   */
  readonly table?: string | undefined
  /**
   * How long a worker's heartbeat row is kept after its last heartbeat;
   * `purgeExpired` deletes older ones. Every server process is a worker of
   * its own, so without this the workers table gains a row per process ever
   * started. A row older than the server's worker timeout already reads as
   * a dead worker, so deleting it changes no answer as long as this is
   * longer than that timeout (seconds by default). Default one day.
   */
  readonly workerRetentionMs?: number | undefined
}

const DAY_MS = 24 * 60 * 60 * 1000

interface TaskRow {
  readonly task_id: string
  readonly owner: string
  readonly method: string
  readonly status: string
  readonly status_message: string | null
  readonly created_at: number | string
  readonly last_updated_at: number | string
  readonly ttl_ms: number | string | null
  readonly poll_interval_ms: number | string
  readonly result: string | null
  readonly error: string | null
  readonly input_requests: string | null
  readonly worker: string
}

const storeError = (operation: string) => (cause: SqlError) =>
  new TaskStore.TaskStoreError({ message: `task store ${operation} failed: ${cause.message}`, cause })

const json = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value))

const fromRow = (row: TaskRow): TaskStore.TaskRecord => ({
  taskId: row.task_id,
  owner: row.owner,
  method: row.method,
  status: row.status as TaskStore.TaskRecord["status"],
  ...(row.status_message === null ? {} : { statusMessage: row.status_message }),
  createdAt: Number(row.created_at),
  lastUpdatedAt: Number(row.last_updated_at),
  ttlMs: row.ttl_ms === null ? null : Number(row.ttl_ms),
  pollIntervalMs: Number(row.poll_interval_ms),
  ...(row.result === null ? {} : { result: JSON.parse(row.result) as object }),
  ...(row.error === null ? {} : { error: JSON.parse(row.error) as TaskStore.TaskError }),
  ...(row.input_requests === null
    ? {}
    : { inputRequests: JSON.parse(row.input_requests) as TaskStore.TaskRecord["inputRequests"] }),
  worker: row.worker
})

const createTables = (table: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE IF NOT EXISTS ${sql(table)} (
      task_id TEXT PRIMARY KEY,
      owner TEXT NOT NULL,
      method TEXT NOT NULL,
      status TEXT NOT NULL,
      status_message TEXT,
      created_at BIGINT NOT NULL,
      last_updated_at BIGINT NOT NULL,
      ttl_ms BIGINT,
      poll_interval_ms INTEGER NOT NULL,
      result TEXT,
      error TEXT,
      input_requests TEXT,
      worker TEXT NOT NULL
    )`
    yield* sql`CREATE INDEX IF NOT EXISTS ${sql(`${table}_owner`)} ON ${sql(table)} (owner, created_at, task_id)`
    yield* sql`CREATE TABLE IF NOT EXISTS ${sql(`${table}_workers`)} (
      worker TEXT PRIMARY KEY,
      seen_at BIGINT NOT NULL
    )`
  })

/** Creates the tables when missing (run by `make`; exported for deployments that migrate ahead). */
export const migrate = (options?: Options) => {
  const table = options?.table ?? "effect_mcp_tasks"
  return immediately(
    Migrator.make({})({
      loader: Migrator.fromRecord({ "1_create_tasks": createTables(table) }),
      table: `${table}_migrations`
    })
  )
}

const active = ["working", "input_required"]

/** Builds the store on the current `SqlClient`, creating its tables. */
export const make = Effect.fnUntraced(function* (
  options?: Options
): Effect.fn.Return<TaskStore.TaskStoreShape, SqlError | Migrator.MigrationError, SqlClient.SqlClient> {
  const sql = yield* SqlClient.SqlClient
  const table = options?.table ?? "effect_mcp_tasks"
  const t = sql(table)
  const w = sql(`${table}_workers`)
  const workerRetentionMs = Math.max(0, options?.workerRetentionMs ?? DAY_MS)
  yield* migrate({ table })

  const get = (taskId: string) =>
    sql<TaskRow>`SELECT * FROM ${t} WHERE task_id = ${taskId}`.pipe(
      Effect.map((rows) => (rows[0] === undefined ? undefined : fromRow(rows[0]))),
      Effect.mapError(storeError("get"))
    )

  const store: TaskStore.TaskStoreShape = {
    create: (record) =>
      sql`INSERT INTO ${t} (task_id, owner, method, status, status_message, created_at, last_updated_at, ttl_ms,
          poll_interval_ms, result, error, input_requests, worker)
        VALUES (${record.taskId}, ${record.owner}, ${record.method}, ${record.status}, ${record.statusMessage ?? null},
          ${record.createdAt}, ${record.lastUpdatedAt}, ${record.ttlMs}, ${record.pollIntervalMs},
          ${json(record.result)}, ${json(record.error)}, ${json(record.inputRequests)}, ${record.worker})`.pipe(
        Effect.asVoid,
        Effect.mapError(storeError("create"))
      ),
    get,
    // One statement: a task some other process made terminal meanwhile stays as it is.
    update: (taskId, patch) =>
      sql<TaskRow>`UPDATE ${t} SET
          status = ${patch.status},
          status_message = COALESCE(${patch.statusMessage ?? null}, status_message),
          last_updated_at = ${patch.lastUpdatedAt},
          result = COALESCE(${json(patch.result)}, result),
          error = COALESCE(${json(patch.error)}, error),
          input_requests = ${json(patch.inputRequests)}
        WHERE task_id = ${taskId} AND ${sql.in("status", active)}
        RETURNING *`.pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : fromRow(rows[0]))),
        Effect.mapError(storeError("update"))
      ),
    list: (owner, { cursor, limit }) =>
      Effect.gen(function* () {
        const from = cursor === undefined ? undefined : TaskStore.decodeCursor(cursor)
        // The server reads an expired task as unknown (-32602), so it is not listed either.
        const now = yield* Clock.currentTimeMillis
        const rows =
          from === undefined
            ? yield* sql<TaskRow>`SELECT * FROM ${t} WHERE owner = ${owner}
                AND (ttl_ms IS NULL OR created_at + ttl_ms > ${now})
                ORDER BY created_at, task_id LIMIT ${limit + 1}`
            : yield* sql<TaskRow>`SELECT * FROM ${t} WHERE owner = ${owner}
                AND (ttl_ms IS NULL OR created_at + ttl_ms > ${now})
                AND (created_at > ${from.createdAt} OR (created_at = ${from.createdAt} AND task_id > ${from.taskId}))
                ORDER BY created_at, task_id LIMIT ${limit + 1}`
        const tasks = rows.slice(0, limit).map(fromRow)
        const last = tasks[tasks.length - 1]
        return rows.length > limit && last !== undefined
          ? { tasks, nextCursor: TaskStore.encodeCursor(last) }
          : { tasks }
      }).pipe(Effect.mapError(storeError("list"))),
    purgeExpired: (now) =>
      sql`DELETE FROM ${t} WHERE ttl_ms IS NOT NULL AND created_at + ttl_ms <= ${now}`.pipe(
        Effect.andThen(sql`DELETE FROM ${w} WHERE seen_at < ${now - workerRetentionMs}`),
        Effect.asVoid,
        Effect.mapError(storeError("purge"))
      ),
    heartbeat: (worker, now) =>
      sql`INSERT INTO ${w} (worker, seen_at) VALUES (${worker}, ${now})
        ON CONFLICT (worker) DO UPDATE SET seen_at = ${now}`.pipe(
        Effect.asVoid,
        Effect.mapError(storeError("heartbeat"))
      ),
    lastHeartbeat: (worker) =>
      sql<{ readonly seen_at: number | string }>`SELECT seen_at FROM ${w} WHERE worker = ${worker}`.pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : Number(rows[0].seen_at))),
        Effect.mapError(storeError("heartbeat read"))
      )
  }
  return store
})

/** Provides the server's `TaskStore` on the `SqlClient` given to it (give it to `McpServer.layer`). */
export const layer = (
  options?: Options
): Layer.Layer<TaskStore.TaskStore, SqlError | Migrator.MigrationError, SqlClient.SqlClient> =>
  Layer.effect(TaskStore.TaskStore, make(options))
