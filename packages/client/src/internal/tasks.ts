/**
 * Tasks on the client, in the two forms a session may speak.
 *
 * Core (2025-11-25, experimental): the client asks for a task with `task` on
 * `tools/call`; it polls `tasks/get`, and fetches the outcome with
 * `tasks/result` once the task is terminal, or as soon as it needs input (the
 * server then sends its requests over the session while `tasks/result` waits,
 * and the client's handlers answer them). `tasks/list`, `tasks/cancel`.
 *
 * Extension (SEP-2663 on 2026-07-28): the client declares the extension on
 * every request and the server decides which `tools/call` answers with a task
 * (`resultType: "task"`). `tasks/get` inlines the result, the JSON-RPC error
 * or the input requests, which the client answers with `tasks/update`;
 * `tasks/cancel` is acknowledged with an empty result.
 *
 * Waiting polls on the Clock every `pollInterval` the server suggests, and a
 * status notification about the task ends the wait early (it carries the
 * same state `tasks/get` would). A call the caller abandons cancels its task.
 */
import * as PeerError from "@effect-mcp/engine/PeerError"
import * as Tracing from "@effect-mcp/engine/Tracing"
import * as InputRequired from "@effect-mcp/protocol/InputRequired"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Tasks from "@effect-mcp/protocol/Tasks"
import * as Tools from "@effect-mcp/protocol/Tools"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { InputRequiredError, TaskError } from "../ClientError.ts"
import type * as McpClient from "../McpClient.ts"
import * as Decode from "./decode.ts"
import type * as Hub from "./hub.ts"
import { answerInput } from "./inputRequired.ts"
import * as Paging from "./paging.ts"
import * as ResultType from "./resultType.ts"
import type { Answer } from "./serverRequests.ts"

/** A task as last seen, with what the extension inlines for its status. */
interface Snapshot {
  readonly task: Tasks.Task
  readonly result?: unknown
  readonly error?: JsonRpc.ErrorObject | undefined
  /** Still undecoded: each is decoded when it is answered. */
  readonly inputRequests?: { readonly [key: string]: unknown } | undefined
}

type TaskFields = Omit<Tasks.Task, "ttl" | "pollInterval">

/** The revision-neutral task of either form (the extension's `ttlMs`/`pollIntervalMs` as `ttl`/`pollInterval`). */
const taskOf = (fields: TaskFields, ttl: number | null, pollInterval: number | undefined): Tasks.Task => ({
  taskId: fields.taskId,
  status: fields.status,
  ...(fields.statusMessage === undefined ? {} : { statusMessage: fields.statusMessage }),
  createdAt: fields.createdAt,
  lastUpdatedAt: fields.lastUpdatedAt,
  ttl,
  ...(pollInterval === undefined ? {} : { pollInterval })
})

const coreTask = (t: Tasks.Task): Tasks.Task => taskOf(t, t.ttl, t.pollInterval)
const extensionTask = (t: Tasks.ExtensionTask): Tasks.Task => taskOf(t, t.ttlMs, t.pollIntervalMs)

const errorObjectOf = (u: unknown): JsonRpc.ErrorObject | undefined => {
  const e = u as { readonly code?: unknown; readonly message?: unknown; readonly data?: unknown } | undefined
  if (typeof e?.code !== "number" || typeof e.message !== "string") return undefined
  return e.data === undefined
    ? { code: e.code, message: e.message }
    : { code: e.code, message: e.message, data: e.data }
}

const detailed = (t: Tasks.DetailedTask): Snapshot => ({
  task: extensionTask(t),
  result: t.result,
  error: errorObjectOf(t.error),
  inputRequests: t.inputRequests
})

const decodeCoreCreate = Decode.decoder("tools/call", Tasks.CreateTaskResult)
const decodeExtensionCreate = Decode.decoder("tools/call", Tasks.ExtensionCreateTaskResult)
const decodeCoreGet = Decode.decoder("tasks/get", Tasks.GetTaskResult)
const decodeExtensionGet = Decode.decoder("tasks/get", Tasks.ExtensionGetTaskResult)
const decodeToolResult = Decode.decoder("tasks/result", Tools.CallToolResult)
const decodeListTasks = Decode.decoder("tasks/list", Tasks.ListTasksResult)
const decodeCoreCancel = Decode.decoder("tasks/cancel", Tasks.CancelTaskResult)
const decodeCoreStatus = Schema.decodeUnknownOption(Tasks.TaskStatusParams)
const decodeExtensionStatus = Schema.decodeUnknownOption(Tasks.TaskNotificationParams)

const decodeInputRequests = Schema.decodeUnknownEffect(InputRequired.InputRequests)

const coreStatusMethod = "notifications/tasks/status"
const extensionStatusMethod = "notifications/tasks"

/** A call run as a task that started: the task's first state, or (extension) the result at once. */
type Started =
  | { readonly _tag: "Started"; readonly snapshot: Snapshot }
  | { readonly _tag: "Result"; readonly result: Tools.CallToolResult }

/** Whether a raw `tools/call` result is the extension's task handle rather than a tool result. */
export const isTaskHandle = (raw: unknown): boolean =>
  typeof raw === "object" && raw !== null && (raw as { readonly resultType?: unknown }).resultType === "task"

export interface Options {
  readonly version: ProtocolVersion.ProtocolVersion
  readonly form: McpClient.TasksForm
  readonly declares: (path: ReadonlyArray<string>) => boolean
  readonly request: (
    method: string,
    params: object | undefined,
    options?: McpClient.RequestOptions
  ) => Effect.Effect<unknown, McpClient.CallError>
  readonly hub: Hub.Hub
  readonly answer: Answer
  readonly maxPages: number
  readonly maxInputRounds: number
  readonly pollInterval: Duration.Duration
  /**
   * The extension only: a `subscriptions/listen` for these tasks' `notifications/tasks`, opened while a task is
   * followed (its notifications reach `hub`); undefined to rely on polling alone.
   */
  readonly listen?: ((taskIds: ReadonlyArray<string>) => Stream.Stream<unknown, unknown>) | undefined
}

export interface TaskRunner {
  readonly api: McpClient.TasksApi
  /** Follows the task a call answered with (the extension's handle) to the raw result of the call. */
  readonly settleHandle: (
    raw: unknown,
    options?: McpClient.RequestOptions
  ) => Effect.Effect<unknown, McpClient.CallError>
  /** Runs a call as a task (core form) and follows it to the raw result of the call. */
  readonly runCall: (
    params: { readonly name: string; readonly arguments?: { readonly [key: string]: unknown } | undefined },
    options?: McpClient.RequestOptions
  ) => Effect.Effect<unknown, McpClient.CallError>
}

export const make = (options: Options): TaskRunner => {
  const { form } = options
  const core = form === "core"
  const refuse = (method: string, reason: PeerError.NotSupported["reason"], detail: string) =>
    Effect.fail(new PeerError.NotSupported({ method, reason, detail }))
  const gate = <A, E>(
    method: string,
    path: ReadonlyArray<string>,
    effect: Effect.Effect<A, E>
  ): Effect.Effect<A, E | PeerError.NotSupported> => {
    if (form === "none") return refuse(method, "MethodNotInRevision", `revision ${options.version} has no tasks`)
    const declared = core ? path : ["extensions", Tasks.extensionId]
    if (!options.declares(declared)) {
      return refuse(method, "CapabilityNotDeclared", `the server did not declare ${declared.join(".")}`)
    }
    return effect
  }

  const poll = (taskId: string, callOptions?: McpClient.RequestOptions): Effect.Effect<Snapshot, McpClient.CallError> =>
    Effect.flatMap(options.request("tasks/get", { taskId }, callOptions), (raw) =>
      core
        ? Effect.map(decodeCoreGet(raw), (t) => ({ task: coreTask(t) }))
        : Effect.map(decodeExtensionGet(raw), detailed)
    )

  /** The state a status notification carries, when it is about `taskId`. */
  const notified = (n: Hub.Notification, taskId: string): Snapshot | undefined => {
    if (n.method === coreStatusMethod) {
      const params = decodeCoreStatus(n.params)
      return Option.isSome(params) && params.value.taskId === taskId ? { task: coreTask(params.value) } : undefined
    }
    if (n.method === extensionStatusMethod) {
      const params = decodeExtensionStatus(n.params)
      return Option.isSome(params) && params.value.taskId === taskId ? detailed(params.value) : undefined
    }
    return undefined
  }

  const changed = (a: Tasks.Task, b: Tasks.Task) =>
    a.status !== b.status || a.lastUpdatedAt !== b.lastUpdatedAt || a.statusMessage !== b.statusMessage

  /** Answers the input requests of an `input_required` extension task not answered yet, with `tasks/update`. */
  const answerTask = Effect.fnUntraced(function* (
    snapshot: Snapshot,
    state: { readonly answered: Set<string>; rounds: number },
    callOptions: McpClient.RequestOptions | undefined
  ) {
    const responses: Record<string, unknown> = {}
    const tracing = Tracing.enabled(yield* Effect.context<never>())
    const asked = yield* decodeInputRequests(snapshot.inputRequests ?? {}).pipe(
      Effect.mapError((e) => new InputRequiredError({ method: "tools/call", reason: "Malformed", message: e.message }))
    )
    // Keys are unique over a task's life: one seen again in a later poll was already answered.
    const fresh = Object.entries(asked).filter(([key]) => !state.answered.has(key))
    if (fresh.length === 0) return
    for (const [key] of fresh) state.answered.add(key)
    // At once, as the server asked them: a handler that asks someone else in turn (a gateway asking its own
    // client) shows them every question of the round together, not one after the other.
    yield* Effect.forEach(
      fresh,
      ([key, request]) =>
        Effect.map(answerInput("tools/call", request, options.answer, tracing), (answer) => {
          responses[key] = answer
        }),
      { concurrency: "unbounded", discard: true }
    )
    if (++state.rounds > options.maxInputRounds) {
      return yield* new InputRequiredError({
        method: "tools/call",
        reason: "TooManyRounds",
        message: `task ${snapshot.task.taskId} still required input after ${options.maxInputRounds} rounds`
      })
    }
    yield* options.request("tasks/update", { taskId: snapshot.task.taskId, inputResponses: responses }, callOptions)
  })

  /**
   * Follows a task from `first` (or a first poll) until it is terminal, or
   * (core, `untilInput`) needs input; `onStatus` sees the first state and
   * each change. With `answer`, the extension's input requests are answered.
   */
  const follow = Effect.fnUntraced(function* (
    taskId: string,
    first: Snapshot | undefined,
    settings: {
      readonly onStatus?: ((task: Tasks.Task) => Effect.Effect<void>) | undefined
      readonly answer: boolean
      readonly callOptions?: McpClient.RequestOptions | undefined
    }
  ): Effect.fn.Return<Snapshot, McpClient.CallError, Scope.Scope> {
    // Subscribed before the first poll: a notification sent in between is not missed.
    const subscription = yield* PubSub.subscribe(yield* options.hub.notifications)
    const nextNotification = Effect.gen(function* () {
      while (true) {
        const snapshot = notified(yield* PubSub.take(subscription), taskId)
        if (snapshot !== undefined) return snapshot
      }
    })
    // A server that pushes the task's status ends the waits early; one that does not is polled all the same.
    if (options.listen !== undefined) yield* Effect.forkScoped(Effect.ignore(Stream.runDrain(options.listen([taskId]))))
    let last = first ?? (yield* poll(taskId, settings.callOptions))
    const input = { answered: new Set<string>(), rounds: 0 }
    if (settings.onStatus !== undefined) yield* settings.onStatus(last.task)
    while (true) {
      const status = last.task.status
      if (Tasks.isTerminal(status)) return last
      if (status === "input_required" && settings.answer) {
        if (core) return last
        yield* answerTask(last, input, settings.callOptions)
      }
      const interval =
        last.task.pollInterval === undefined ? options.pollInterval : Duration.millis(last.task.pollInterval)
      const early = yield* Effect.timeoutOption(nextNotification, interval)
      const next = Option.isSome(early) ? early.value : yield* poll(taskId, settings.callOptions)
      if (settings.onStatus !== undefined && changed(last.task, next.task)) yield* settings.onStatus(next.task)
      last = next
    }
  }, Effect.scoped)

  const cancelled = (taskId: string) =>
    new TaskError({ taskId, reason: "Cancelled", message: `task ${taskId} was cancelled` })

  /** The raw result of the call a task stands for, once `follow` returned. */
  const outcome = (
    snapshot: Snapshot,
    callOptions: McpClient.RequestOptions | undefined
  ): Effect.Effect<unknown, McpClient.CallError> => {
    const { taskId, status } = snapshot.task
    if (status === "cancelled") return Effect.fail(cancelled(taskId))
    // Core: `tasks/result` gives the call's result, or its JSON-RPC error as the call would have; while
    // the task needs input it waits, and the server's requests reach the handlers meanwhile.
    if (core) return options.request("tasks/result", { taskId }, callOptions)
    // Inlined in `tasks/get` (or a status notification), the call's result never went through the request
    // path: its `resultType` is checked here, as the call's own answer would have been.
    if (status === "completed") return ResultType.check("tasks/get", snapshot.result ?? {})
    return snapshot.error === undefined
      ? Effect.fail(
          new TaskError({
            taskId,
            reason: "Failed",
            message: snapshot.task.statusMessage ?? `task ${taskId} failed`
          })
        )
      : Effect.fail(McpError.fromErrorObject(snapshot.error, options.version))
  }

  /** Follows a task to the raw result of its call; interrupted, it cancels the task on the server. */
  const settle = (
    taskId: string,
    first: Snapshot | undefined,
    callOptions: McpClient.RequestOptions | undefined,
    onStatus?: (task: Tasks.Task) => Effect.Effect<void>
  ): Effect.Effect<unknown, McpClient.CallError> =>
    follow(taskId, first, { onStatus, answer: true, callOptions }).pipe(
      Effect.flatMap((snapshot) => outcome(snapshot, callOptions)),
      Effect.onInterrupt(() => Effect.ignore(options.request("tasks/cancel", { taskId })))
    )

  const start = (
    name: string,
    args: { readonly [key: string]: unknown } | undefined,
    callOptions: McpClient.TaskCallOptions | undefined
  ): Effect.Effect<Started, McpClient.CallError> => {
    const { ttl, ...rest } = callOptions ?? {}
    const base = args === undefined ? { name } : { name, arguments: args }
    if (core) {
      return Effect.map(
        Effect.flatMap(
          options.request("tools/call", { ...base, task: ttl === undefined ? {} : { ttl } }, rest),
          decodeCoreCreate
        ),
        (created): Started => ({ _tag: "Started", snapshot: { task: coreTask(created.task) } })
      )
    }
    return Effect.flatMap(options.request("tools/call", base, rest), (raw) =>
      isTaskHandle(raw)
        ? Effect.map(
            decodeExtensionCreate(raw),
            (t): Started => ({ _tag: "Started", snapshot: { task: extensionTask(t) } })
          )
        : Effect.map(decodeToolResult(raw), (result): Started => ({ _tag: "Result", result }))
    )
  }

  const run: McpClient.TasksApi["run"] = (name, args, callOptions) =>
    Stream.callback<McpClient.TaskEvent<Tools.CallToolResult>, McpClient.CallError>((queue) =>
      gate("tools/call", ["tasks", "requests", "tools", "call"], start(name, args, callOptions)).pipe(
        Effect.flatMap((started) =>
          started._tag === "Started"
            ? settle(started.snapshot.task.taskId, started.snapshot, callOptions, (task) =>
                Effect.asVoid(Queue.offer(queue, { _tag: "Status", task }))
              ).pipe(Effect.flatMap(decodeToolResult))
            : Effect.succeed(started.result)
        ),
        Effect.matchCauseEffect({
          onSuccess: (value) => Effect.andThen(Queue.offer(queue, { _tag: "Result", value }), Queue.end(queue)),
          onFailure: (cause) => Queue.failCause(queue, cause)
        }),
        Effect.forkScoped
      )
    )

  const list = (cursor: string | undefined) =>
    form === "extension"
      ? refuse("tasks/list", "MethodNotInRevision", "the Tasks extension has no tasks/list")
      : gate(
          "tasks/list",
          ["tasks", "list"],
          Effect.flatMap(options.request("tasks/list", cursor === undefined ? {} : { cursor }), decodeListTasks)
        )

  const api: McpClient.TasksApi = {
    form,
    callTool: (name, args, callOptions) =>
      gate(
        "tools/call",
        ["tasks", "requests", "tools", "call"],
        Effect.map(start(name, args, callOptions), (started) =>
          started._tag === "Started" ? { _tag: "Task", task: started.snapshot.task } : started
        )
      ),
    run,
    get: (taskId, callOptions) =>
      gate(
        "tasks/get",
        ["tasks"],
        Effect.map(poll(taskId, callOptions), (s) => s.task)
      ),
    updates: (taskId) =>
      Stream.callback<Tasks.Task, McpClient.CallError>((queue) =>
        gate(
          "tasks/get",
          ["tasks"],
          follow(taskId, undefined, {
            answer: false,
            onStatus: (task) => Effect.asVoid(Queue.offer(queue, task))
          })
        ).pipe(
          Effect.matchCauseEffect({
            onSuccess: () => Queue.end(queue),
            onFailure: (cause) => Queue.failCause(queue, cause)
          }),
          Effect.forkScoped
        )
      ),
    result: (taskId, callOptions) =>
      gate(
        "tasks/get",
        ["tasks"],
        Effect.flatMap(
          follow(taskId, undefined, { answer: true, callOptions }).pipe(
            Effect.flatMap((snapshot) => outcome(snapshot, callOptions))
          ),
          decodeToolResult
        )
      ),
    list: Paging.stream({
      method: "tasks/list",
      maxPages: options.maxPages,
      fetch: (cursor) => Effect.map(list(cursor), (r) => ({ items: r.tasks.map(coreTask), nextCursor: r.nextCursor }))
    }),
    cancel: (taskId, callOptions) =>
      gate(
        "tasks/cancel",
        ["tasks", "cancel"],
        Effect.flatMap(options.request("tasks/cancel", { taskId }, callOptions), (raw) =>
          core ? Effect.map(decodeCoreCancel(raw), coreTask) : Effect.succeed(undefined)
        )
      ),
    status: options.hub.notificationStream.pipe(
      Stream.filterMap((n) => {
        if (n.method === coreStatusMethod) {
          return Option.match(decodeCoreStatus(n.params), {
            onNone: () => Result.failVoid,
            onSome: (t) => Result.succeed(coreTask(t))
          })
        }
        if (n.method === extensionStatusMethod) {
          return Option.match(decodeExtensionStatus(n.params), {
            onNone: () => Result.failVoid,
            onSome: (t) => Result.succeed(extensionTask(t))
          })
        }
        return Result.failVoid
      })
    )
  }

  return {
    api,
    settleHandle: (raw, callOptions) =>
      Effect.flatMap(decodeExtensionCreate(raw), (t) => settle(t.taskId, { task: extensionTask(t) }, callOptions)),
    runCall: (params, callOptions) =>
      Effect.flatMap(
        Effect.flatMap(options.request("tools/call", { ...params, task: {} }, callOptions), decodeCoreCreate),
        (created) => settle(created.task.taskId, { task: coreTask(created.task) }, callOptions)
      )
  }
}
