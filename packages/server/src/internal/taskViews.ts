/**
 * What a stored task looks like on the wire: the 2025-11-25 `Task`, the
 * extension's flat task and its `DetailedTask` (status payload inlined).
 */
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Tasks from "@effect-mcp/protocol/Tasks"
import type * as TaskStore from "../TaskStore.ts"

const iso = (ms: number) => new Date(ms).toISOString()

/** The error of a task whose worker was lost (its process died, or it ended without an outcome). */
export const lost: TaskStore.TaskError = {
  code: McpError.Code.InternalError,
  message: "the worker running this task was lost"
}
/** What both forms of a task carry alike. */
const taskBase = (record: TaskStore.TaskRecord) => ({
  taskId: record.taskId,
  status: record.status,
  ...(record.statusMessage === undefined ? {} : { statusMessage: record.statusMessage }),
  createdAt: iso(record.createdAt),
  lastUpdatedAt: iso(record.lastUpdatedAt)
})

/** The 2025-11-25 `Task` of a record. */
export const coreTask = (record: TaskStore.TaskRecord): Tasks.Task => ({
  ...taskBase(record),
  ttl: record.ttlMs,
  pollInterval: record.pollIntervalMs
})

/** The extension's `Task` of a record (what `tools/call` answers, with `resultType: "task"`). */
export const extensionTask = (record: TaskStore.TaskRecord): Tasks.ExtensionTask => ({
  ...taskBase(record),
  ttlMs: record.ttlMs,
  pollIntervalMs: record.pollIntervalMs
})

/** The extension's `DetailedTask` of a record: what its status carries, inlined. */
export const detailedTask = (record: TaskStore.TaskRecord): Tasks.DetailedTask => {
  const task = extensionTask(record)
  switch (record.status) {
    case "input_required":
      return { ...task, inputRequests: record.inputRequests ?? {} }
    case "completed":
      return { ...task, result: (record.result ?? { content: [] }) as { readonly [key: string]: unknown } }
    case "failed":
      return { ...task, error: (record.error ?? lost) as unknown as { readonly [key: string]: unknown } }
    default:
      return task
  }
}
