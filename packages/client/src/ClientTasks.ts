/**
 * The tasks API of `McpClient` (`client.tasks`): a tool call run as a task
 * (2025-11-25's core tasks, or the Tasks extension of 2026-07-28), followed
 * by its statuses to its result, and the task requests `tasks/get`,
 * `tasks/result`, `tasks/list` and `tasks/cancel`. Re-exported by `McpClient`;
 * see docs/tasks.md.
 */
import type * as Tasks from "@effect-mcp/protocol/Tasks"
import type * as Tools from "@effect-mcp/protocol/Tools"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type { CallError, ListError, RequestOptions } from "./McpClient.ts"

/**
 * Which form of tasks a session speaks: `core`, the experimental feature of
 * 2025-11-25 (the client asks for a task with `task` on the call; `tasks/get`,
 * `tasks/result`, `tasks/list`, `tasks/cancel`); `extension`, the Tasks
 * extension (SEP-2663, `io.modelcontextprotocol/tasks`) on 2026-07-28 (the
 * server decides which calls become tasks; `tasks/get` carries the result,
 * `tasks/update` answers its input requests, `tasks/cancel`); or `none`.
 */
export type TasksForm = "core" | "extension" | "none"

/** Options of a tool call run as a task. */
export interface TaskCallOptions extends RequestOptions {
  /** Retention the client asks for, in milliseconds from creation (core form; the server may choose another). */
  readonly ttl?: number | undefined
}

/**
 * How a tool call run as a task started: the task, or the result itself (on
 * the extension the server decides, and may answer at once).
 */
export type TaskStart =
  | { readonly _tag: "Task"; readonly task: Tasks.Task }
  | { readonly _tag: "Result"; readonly result: Tools.CallToolResult }

/** An element of a tool call followed as a task: each new status of the task, then one `Result`. */
export type TaskEvent<A> =
  | { readonly _tag: "Status"; readonly task: Tasks.Task }
  | { readonly _tag: "Result"; readonly value: A }

/**
 * Tasks, in the form the session speaks (`form`). Both forms give the same
 * revision-neutral `Task` (the extension's `ttlMs`/`pollIntervalMs` read as
 * `ttl`/`pollInterval`). Waiting on a task polls `tasks/get` on the Clock,
 * every `pollInterval` the server suggests (else `Options.taskPollInterval`),
 * and takes a status notification the server sends as an early answer.
 * `callTool` runs a tool the server marks `taskSupport: "required"` as a task
 * by itself; these methods are for callers that want the task.
 */
export interface TasksApi {
  readonly form: TasksForm
  /**
   * Calls a tool as a task, and answers as soon as the task exists (core:
   * with `task` on the request; extension: the server may answer with the
   * result at once).
   */
  readonly callTool: (
    name: string,
    args?: { readonly [key: string]: unknown } | undefined,
    options?: TaskCallOptions
  ) => Effect.Effect<TaskStart, CallError>
  /**
   * Calls a tool as a task and follows it: each new status, then the result.
   * Ending the Stream before the result cancels the task (`tasks/cancel`).
   */
  readonly run: (
    name: string,
    args?: { readonly [key: string]: unknown } | undefined,
    options?: TaskCallOptions
  ) => Stream.Stream<TaskEvent<Tools.CallToolResult>, CallError>
  /** The current state of a task (`tasks/get`). */
  readonly get: (taskId: string, options?: RequestOptions) => Effect.Effect<Tasks.Task, CallError>
  /** The task's current state, then each change, until it is terminal. Observes only: it answers no input. */
  readonly updates: (taskId: string) => Stream.Stream<Tasks.Task, CallError>
  /**
   * Waits for the task to end and gives its tool result; input the task asks
   * for is answered by the client's handlers. A task that failed with a
   * JSON-RPC error fails with that error; one cancelled or failed without it,
   * with `TaskError`.
   */
  readonly result: (taskId: string, options?: RequestOptions) => Effect.Effect<Tools.CallToolResult, CallError>
  /** Every task the server lists for this client (core form only: the extension has no `tasks/list`). */
  readonly list: Stream.Stream<Tasks.Task, ListError>
  /** Asks the server to cancel a task (`tasks/cancel`); the task it returned in the core form, else undefined. */
  readonly cancel: (taskId: string, options?: RequestOptions) => Effect.Effect<Tasks.Task | undefined, CallError>
  /** Task status notifications the server sends (`notifications/tasks/status`, or the extension's `notifications/tasks`). */
  readonly status: Stream.Stream<Tasks.Task>
}
