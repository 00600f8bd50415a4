/**
 * Where a server keeps its tasks: the record of each task (status, the
 * result or error it came to, the input it waits for, who may read it, which
 * worker runs it) and the heartbeats of the workers running them.
 *
 * The server writes a task before it answers the request that made it (a
 * `tasks/get` right after always finds it), then on every status change. The
 * default store is in memory and bounded; `@effect-mcp/sql`'s `SqlTaskStore`
 * keeps tasks in SQLite or PostgreSQL so they survive a restart. A task
 * whose worker stopped heartbeating (its process died) reads `failed`, never
 * `working` forever: see `Options.tasks` of `McpServer`.
 *
 * Records hold plain JSON (times in epoch milliseconds) so a store can put
 * them in any database.
 */
import type * as InputRequired from "@effect-mcp/protocol/InputRequired"
import type * as Tasks from "@effect-mcp/protocol/Tasks"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Base64Url from "effect/encoding/Base64Url"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"

/** The JSON-RPC error a failed task came to. */
export interface TaskError {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

/** One task as stored. */
export interface TaskRecord {
  readonly taskId: string
  /** Who may read it: the authenticated principal's owner key, or "" when the id alone is the credential. */
  readonly owner: string
  /** The request it runs (`tools/call`). */
  readonly method: string
  readonly status: Tasks.TaskStatus
  readonly statusMessage?: string | undefined
  /** Epoch milliseconds. */
  readonly createdAt: number
  /** Epoch milliseconds. */
  readonly lastUpdatedAt: number
  /** Retention from creation in milliseconds; null for unlimited. */
  readonly ttlMs: number | null
  readonly pollIntervalMs: number
  /** The request's result, once `completed`. */
  readonly result?: object | undefined
  /** The request's JSON-RPC error, once `failed`. */
  readonly error?: TaskError | undefined
  /** The input the task waits for, while `input_required` (the extension's keys). */
  readonly inputRequests?: InputRequired.InputRequests | undefined
  /** The worker running it (a server instance; see `heartbeat`). */
  readonly worker: string
}

/** What `update` changes; `undefined` fields are left as they are, except `inputRequests` which is replaced. */
export interface TaskPatch {
  readonly status: Tasks.TaskStatus
  readonly statusMessage?: string | undefined
  readonly lastUpdatedAt: number
  readonly result?: object | undefined
  readonly error?: TaskError | undefined
  readonly inputRequests?: InputRequired.InputRequests | undefined
}

/** A page of `list`. */
export interface TaskPage {
  readonly tasks: ReadonlyArray<TaskRecord>
  readonly nextCursor?: string | undefined
}

/** A store could not be read or written. */
export class TaskStoreError extends Schema.TaggedError<TaskStoreError>()("TaskStoreError", {
  message: Schema.String,
  cause: Schema.optionalKey(Schema.Defect())
}) {}

/** What a task store does. */
export interface TaskStoreShape {
  /** Adds a task; done before the request that made it is answered. */
  readonly create: (record: TaskRecord) => Effect.Effect<void, TaskStoreError>
  /** The task under `taskId`, if stored. */
  readonly get: (taskId: string) => Effect.Effect<TaskRecord | undefined, TaskStoreError>
  /**
   * Applies `patch` to a task that is not terminal yet and returns the new
   * record; undefined when the task is unknown or already terminal (a
   * terminal task never changes again).
   */
  readonly update: (taskId: string, patch: TaskPatch) => Effect.Effect<TaskRecord | undefined, TaskStoreError>
  /**
   * `owner`'s tasks, oldest first, `limit` a page, from `cursor` (a previous
   * page's `nextCursor`); without the tasks whose `ttlMs` ran out by effect's
   * `Clock` (the server reads those as unknown: its list agrees with its reads).
   */
  readonly list: (
    owner: string,
    options: { readonly cursor?: string | undefined; readonly limit: number }
  ) => Effect.Effect<TaskPage, TaskStoreError>
  /** Drops the tasks whose `ttlMs` ran out by `now`. */
  readonly purgeExpired: (now: number) => Effect.Effect<void, TaskStoreError>
  /** Records that `worker` is alive at `now`. */
  readonly heartbeat: (worker: string, now: number) => Effect.Effect<void, TaskStoreError>
  /** When `worker` last heartbeat, if it ever did. */
  readonly lastHeartbeat: (worker: string) => Effect.Effect<number | undefined, TaskStoreError>
}

/** The task store of a server; without one in context, a server keeps tasks in memory (`makeMemory`). */
export class TaskStore extends Context.Service<TaskStore, TaskStoreShape>()("@effect-mcp/server/TaskStore") {}

/** Options of the in-memory store. */
export interface MemoryOptions {
  /**
   * Tasks kept at most (default 10,000). Beyond it the oldest terminal tasks
   * are dropped; when every task is still running, a new one is refused.
   */
  readonly maxTasks?: number | undefined
}

/** Encodes a keyset cursor (creation time, then id): stable while tasks come and go. */
export const encodeCursor = (record: Pick<TaskRecord, "createdAt" | "taskId">): string =>
  Base64Url.encode(`${record.createdAt}:${record.taskId}`)

/** Decodes a cursor from `encodeCursor`; undefined when it is not one. */
export const decodeCursor = (cursor: string): { readonly createdAt: number; readonly taskId: string } | undefined => {
  const decoded = Base64Url.decodeString(cursor)
  if (Result.isFailure(decoded)) return undefined
  const text = decoded.success
  const colon = text.indexOf(":")
  const createdAt = Number(text.slice(0, colon))
  return colon <= 0 || !Number.isSafeInteger(createdAt) ? undefined : { createdAt, taskId: text.slice(colon + 1) }
}

const after = (record: TaskRecord, cursor: { readonly createdAt: number; readonly taskId: string }): boolean =>
  record.createdAt > cursor.createdAt || (record.createdAt === cursor.createdAt && record.taskId > cursor.taskId)

/**
 * Whether a task's retention ran out by `now`: the server reads it as
 * unknown from then on, and leaves it out of `tasks/list` whatever a store's
 * `list` returns.
 */
export const isExpired = (record: TaskRecord, now: number): boolean =>
  record.ttlMs !== null && record.createdAt + record.ttlMs <= now

const isActive = (record: TaskRecord): boolean => record.status === "working" || record.status === "input_required"

/** Applies a patch to a record (shared by the stores). */
export const applyPatch = (record: TaskRecord, patch: TaskPatch): TaskRecord => ({
  ...record,
  status: patch.status,
  statusMessage: patch.statusMessage ?? record.statusMessage,
  lastUpdatedAt: patch.lastUpdatedAt,
  result: patch.result ?? record.result,
  error: patch.error ?? record.error,
  inputRequests: patch.inputRequests
})

/** A bounded in-memory store (the default): tasks live as long as the process. */
export const makeMemory = (options?: MemoryOptions): TaskStoreShape => {
  const maxTasks = Math.max(1, options?.maxTasks ?? 10_000)
  // Insertion order is creation order: the oldest tasks come first.
  const tasks = new Map<string, TaskRecord>()
  const workers = new Map<string, number>()
  const makeRoom = (): boolean => {
    if (tasks.size < maxTasks) return true
    for (const [id, record] of tasks) {
      if (!isActive(record)) {
        tasks.delete(id)
        return true
      }
    }
    return false
  }
  return {
    create: (record) =>
      Effect.suspend(() => {
        if (!makeRoom()) {
          return Effect.fail(new TaskStoreError({ message: `the task store is full (${maxTasks} running tasks)` }))
        }
        tasks.set(record.taskId, record)
        return Effect.void
      }),
    get: (taskId) => Effect.sync(() => tasks.get(taskId)),
    update: (taskId, patch) =>
      Effect.sync(() => {
        const record = tasks.get(taskId)
        if (record === undefined || !isActive(record)) return undefined
        const next = applyPatch(record, patch)
        tasks.set(taskId, next)
        return next
      }),
    list: (owner, { cursor, limit }) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const from = cursor === undefined ? undefined : decodeCursor(cursor)
        const mine: Array<TaskRecord> = []
        for (const record of tasks.values()) {
          if (record.owner === owner && (from === undefined || after(record, from)) && !isExpired(record, now)) {
            mine.push(record)
          }
        }
        mine.sort((a, b) => a.createdAt - b.createdAt || (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0))
        const page = mine.slice(0, limit)
        const last = page[page.length - 1]
        return mine.length > limit && last !== undefined
          ? { tasks: page, nextCursor: encodeCursor(last) }
          : { tasks: page }
      }),
    purgeExpired: (now) =>
      Effect.sync(() => {
        for (const [id, record] of tasks) {
          if (isExpired(record, now)) tasks.delete(id)
        }
      }),
    heartbeat: (worker, now) =>
      Effect.sync(() => {
        workers.set(worker, now)
      }),
    lastHeartbeat: (worker) => Effect.sync(() => workers.get(worker))
  }
}

/** The in-memory store as a Layer. */
export const layerMemory = (options?: MemoryOptions): Layer.Layer<TaskStore> =>
  Layer.sync(TaskStore, () => makeMemory(options))
