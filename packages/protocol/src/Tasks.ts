/**
 * Tasks in their two forms.
 *
 * The experimental core feature of 2025-11-25: a request augmented with `task` runs
 * in the background and answers at once with a {@link CreateTaskResult}; the
 * requester then polls `tasks/get`, fetches the payload with `tasks/result`,
 * lists with `tasks/list` and cancels with `tasks/cancel`. The receiver may
 * push `notifications/tasks/status`.
 *
 * Augmentable requests: `tools/call` (server side, gated by
 * `tasks.requests.tools.call`), `sampling/createMessage` and
 * `elicitation/create` (client side, gated by `tasks.requests.sampling.createMessage`
 * / `tasks.requests.elicitation.create`). Tool-level opt-in is `Tool.execution.taskSupport`.
 *
 * The Tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`) on
 * 2026-07-28: the client declares the extension in its per-request
 * capabilities and the server alone decides to answer `tools/call` with a
 * flat {@link ExtensionCreateTaskResult} (`resultType: "task"`). The client
 * polls `tasks/get`, whose {@link DetailedTask} inlines the result, the
 * JSON-RPC error or the pending `inputRequests`; it answers those with
 * `tasks/update` and cancels with `tasks/cancel` (both acknowledged with an
 * empty result). There is no `tasks/result` and no `tasks/list`; durations are
 * `ttlMs` and `pollIntervalMs`.
 *
 * Only the data shapes live here.
 */
import * as Schema from "effect/Schema"
import { openStruct } from "./internal/open.ts"
import { resultStruct } from "./internal/result.ts"
import { NotificationMeta, RequestMeta } from "./Meta.ts"
import { PaginatedParams, paginatedResultFields } from "./Pagination.ts"

/** The status of a task. */
export const TaskStatus = Schema.Literals(["working", "input_required", "completed", "failed", "cancelled"]).annotate({
  identifier: "TaskStatus"
})
/** Decoded `TaskStatus`. */
export type TaskStatus = typeof TaskStatus.Type

/** Statuses after which a task never changes again. */
export const terminalStatuses: ReadonlyArray<TaskStatus> = ["completed", "failed", "cancelled"]

/** Whether a task in this status never changes again. */
export const isTerminal = (status: TaskStatus): boolean =>
  status === "completed" || status === "failed" || status === "cancelled"

/** The `task` field of an augmented request: asks for task execution. */
export const TaskMetadata = Schema.Struct({
  /** Requested retention, in milliseconds from creation. */
  ttl: Schema.optionalKey(Schema.Int)
}).annotate({ identifier: "TaskMetadata" })
export type TaskMetadata = typeof TaskMetadata.Type

/** Associates a message with a task (the spec's `RelatedTaskMetadata`). */
export const RelatedTaskMetadata = Schema.Struct({ taskId: Schema.String }).annotate({
  identifier: "RelatedTaskMetadata"
})
export type RelatedTaskMetadata = typeof RelatedTaskMetadata.Type

const taskFields = {
  taskId: Schema.String,
  status: TaskStatus,
  statusMessage: Schema.optionalKey(Schema.String),
  /** ISO 8601. */
  createdAt: Schema.String,
  /** ISO 8601. */
  lastUpdatedAt: Schema.String,
  /** Retention in milliseconds from creation; `null` for unlimited. */
  ttl: Schema.NullOr(Schema.Int),
  /** Suggested polling interval in milliseconds. */
  pollInterval: Schema.optionalKey(Schema.Int)
}

/** A task (experimental, 2025-11-25). */
export const Task = Schema.Struct(taskFields).annotate({ identifier: "Task" })
/** Decoded `Task`. */
export type Task = typeof Task.Type

/** The immediate answer to a task-augmented request. */
export const CreateTaskResult = resultStruct({ task: Task }).annotate({ identifier: "CreateTaskResult" })
export type CreateTaskResult = typeof CreateTaskResult.Type

/** Params of `tasks/get`, `tasks/result` and `tasks/cancel`. */
export const TaskIdParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  taskId: Schema.String
}).annotate({ identifier: "TaskIdParams" })
export type TaskIdParams = typeof TaskIdParams.Type

/** Params of `tasks/get`. */
export const GetTaskParams = TaskIdParams
/** Decoded `GetTaskParams`. */
export type GetTaskParams = TaskIdParams

/** The result of `tasks/get`. */
export const GetTaskResult = resultStruct(taskFields).annotate({ identifier: "GetTaskResult" })
/** Decoded `GetTaskResult`. */
export type GetTaskResult = typeof GetTaskResult.Type

/** Params of `tasks/result`. */
export const GetTaskPayloadParams = TaskIdParams
/** Decoded `GetTaskPayloadParams`. */
export type GetTaskPayloadParams = TaskIdParams

/** The result of `tasks/result`: the augmented request's own result, whatever its shape. */
export const GetTaskPayloadResult = resultStruct({}).annotate({ identifier: "GetTaskPayloadResult" })
export type GetTaskPayloadResult = typeof GetTaskPayloadResult.Type

/** Params of `tasks/list`. */
export const ListTasksParams = PaginatedParams
/** Decoded `ListTasksParams`. */
export type ListTasksParams = PaginatedParams

/** The result of `tasks/list`. */
export const ListTasksResult = resultStruct({
  tasks: Schema.Array(Task),
  ...paginatedResultFields
}).annotate({ identifier: "ListTasksResult" })
/** Decoded `ListTasksResult`. */
export type ListTasksResult = typeof ListTasksResult.Type

/** Params of `tasks/cancel`. */
export const CancelTaskParams = TaskIdParams
/** Decoded `CancelTaskParams`. */
export type CancelTaskParams = TaskIdParams

/** The result of `tasks/cancel`. */
export const CancelTaskResult = resultStruct(taskFields).annotate({ identifier: "CancelTaskResult" })
/** Decoded `CancelTaskResult`. */
export type CancelTaskResult = typeof CancelTaskResult.Type

/** Params of `notifications/tasks/status`. */
export const TaskStatusParams = Schema.Struct({
  _meta: Schema.optionalKey(NotificationMeta),
  ...taskFields
}).annotate({ identifier: "TaskStatusParams" })
export type TaskStatusParams = typeof TaskStatusParams.Type

/** The identifier of the Tasks extension (SEP-2663) in `capabilities.extensions`. */
export const extensionId = "io.modelcontextprotocol/tasks"

/** The `_meta` key of {@link RelatedTaskMetadata} (2025-11-25). */
export const relatedTaskKey = "io.modelcontextprotocol/related-task"

// The extension renames the durations (the unit in the name); the other fields are the 2025-11-25 ones.
const { ttl: _ttl, pollInterval: _pollInterval, ...sharedTaskFields } = taskFields
const extensionTaskFields = {
  ...sharedTaskFields,
  /** Retention in integer milliseconds from creation; `null` for unlimited. */
  ttlMs: Schema.NullOr(Schema.Int),
  /** Suggested polling interval in integer milliseconds. */
  pollIntervalMs: Schema.optionalKey(Schema.Int)
}

/** A task of the extension (SEP-2663): the 2025-11-25 fields with `ttlMs` and `pollIntervalMs`. */
export const ExtensionTask = Schema.Struct(extensionTaskFields).annotate({ identifier: "ExtensionTask" })
/** Decoded `ExtensionTask`. */
export type ExtensionTask = typeof ExtensionTask.Type

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

/**
 * A task with what its status carries inlined: `inputRequests` while
 * `input_required`, the request's `result` once `completed`, its JSON-RPC
 * `error` once `failed`.
 */
export const DetailedTask = Schema.Struct({
  ...extensionTaskFields,
  /** The outstanding input requests by key (`InputRequired.InputRequests`; open here, which that module's imports need). */
  inputRequests: Schema.optionalKey(JsonObject),
  result: Schema.optionalKey(JsonObject),
  error: Schema.optionalKey(JsonObject)
}).annotate({ identifier: "DetailedTask" })
/** Decoded `DetailedTask`. */
export type DetailedTask = typeof DetailedTask.Type

/** The extension's answer to a request the server runs as a task: `resultType: "task"` and the task, flat. */
export const ExtensionCreateTaskResult = resultStruct(extensionTaskFields).annotate({
  identifier: "ExtensionCreateTaskResult"
})
/** Decoded `ExtensionCreateTaskResult`. */
export type ExtensionCreateTaskResult = typeof ExtensionCreateTaskResult.Type

/** The result of the extension's `tasks/get`: a {@link DetailedTask} with `resultType: "complete"`. */
export const ExtensionGetTaskResult = resultStruct(DetailedTask.fields).annotate({
  identifier: "ExtensionGetTaskResult"
})
/** Decoded `ExtensionGetTaskResult`. */
export type ExtensionGetTaskResult = typeof ExtensionGetTaskResult.Type

/**
 * Params of the extension's `tasks/update`: answers to the task's
 * outstanding `inputRequests` (unknown or already answered keys are ignored,
 * so any JSON object is accepted under a key).
 */
export const UpdateTaskParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  taskId: Schema.String,
  inputResponses: JsonObject
}).annotate({ identifier: "UpdateTaskParams" })
/** Decoded `UpdateTaskParams`. */
export type UpdateTaskParams = typeof UpdateTaskParams.Type

/** The empty acknowledgement of the extension's `tasks/update` and `tasks/cancel`. */
export const TaskAckResult = resultStruct({}).annotate({ identifier: "TaskAckResult" })
/** Decoded `TaskAckResult`. */
export type TaskAckResult = typeof TaskAckResult.Type

/** Params of the extension's `notifications/tasks`: the {@link DetailedTask} as `tasks/get` would return it. */
export const TaskNotificationParams = Schema.Struct({
  _meta: Schema.optionalKey(NotificationMeta),
  ...DetailedTask.fields
}).annotate({ identifier: "TaskNotificationParams" })
/** Decoded `TaskNotificationParams`. */
export type TaskNotificationParams = typeof TaskNotificationParams.Type

/**
 * Params of `notifications/subscriptions/acknowledged` on 2026-07-28 as the
 * extension extends them: the honoured filter keeps `taskIds` (the task ids
 * whose `notifications/tasks` the stream carries) and every other key.
 */
export const ListenAcknowledgedParams = Schema.Struct({
  _meta: Schema.optionalKey(NotificationMeta),
  notifications: openStruct({ taskIds: Schema.optionalKey(Schema.Array(Schema.String)) })
}).annotate({ identifier: "ListenAcknowledgedParams" })
/** Decoded `ListenAcknowledgedParams`. */
export type ListenAcknowledgedParams = typeof ListenAcknowledgedParams.Type
