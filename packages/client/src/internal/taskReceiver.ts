/**
 * The client as a task receiver (2025-11-25): with `McpClient.Options.taskRequests`
 * the client declares `tasks.requests.sampling.createMessage` /
 * `tasks.requests.elicitation.create` (and `tasks.list`, `tasks.cancel`), and
 * a `sampling/createMessage` or `elicitation/create` the server sends with
 * `task` is answered at once with a task (`CreateTaskResult`). Its handler
 * runs as a fiber of the client's scope; the server reads it with
 * `tasks/get`, `tasks/result` (waits until it is terminal), `tasks/list`, and
 * stops it with `tasks/cancel`, which interrupts the fiber (its finalizers
 * have run when the cancel is answered). Closing the client interrupts them too.
 *
 * Tasks live in memory, bounded like the server's default store: at most
 * `maxTasks` (the oldest terminal ones make room; a new one is refused when
 * every task still runs), each dropped once its `ttl` from creation ran out
 * (one still working is interrupted then: nothing could reach it any more).
 * Each change of a task's status is told to the server with
 * `notifications/tasks/status` (the task as `tasks/get` answers it), as the
 * server side does: optional in the specification (the requestor keeps
 * polling), it lets a requestor that listens stop waiting at once.
 */
import type * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as Defect from "@effect-mcp/engine/Defect"
import type * as Session from "@effect-mcp/engine/Session"
import * as Features from "@effect-mcp/protocol/Features"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Tasks from "@effect-mcp/protocol/Tasks"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as SecureRandom from "effect/crypto/SecureRandom"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Predicate from "effect/Predicate"
import type * as Scope from "effect/Scope"
import type * as TaskRequests from "../TaskRequests.ts"

type Obj = { readonly [key: string]: unknown }

interface Entry {
  task: Tasks.Task
  result?: object | undefined
  error?: McpError.McpError | undefined
  fiber?: Fiber.Fiber<unknown, unknown> | undefined
  readonly done: Deferred.Deferred<void>
  /** Its retention ran out while it worked: its work was interrupted and it is gone. */
  expired?: boolean | undefined
}

const capabilityKeys = {
  "sampling/createMessage": ["sampling", "createMessage"],
  "elicitation/create": ["elicitation", "create"]
} as const

type Augmentable = keyof typeof capabilityKeys

const pageSize = 100

const statusMethod = "notifications/tasks/status"

const notFound = (taskId: string, why = "Task not found") =>
  new McpError.InvalidParams({
    message: `Failed to retrieve task ${JSON.stringify(taskId.slice(0, 100))}: ${why}`
  })

/** The tasks a client receives, and the session handlers that serve them. */
export interface Receiver {
  /** The `tasks` capability to declare (undefined when no augmentable handler is there). */
  readonly capability: Session.Capabilities | undefined
  /** The session handlers: the augmentable ones taking `task`, and `tasks/*` added. */
  readonly handlers: ReadonlyMap<string, Session.Handler>
}

export const make = (
  options: TaskRequests.Options | undefined,
  scope: Scope.Scope,
  inner: ReadonlyMap<string, Session.Handler>,
  /** Sends a notification to the server on the client's current session (a failure to send is ignored). */
  notify: (method: string, params: object) => Effect.Effect<void>
): Receiver => {
  // Only the requests the client has a handler for can be taken as tasks.
  const enabled = new Set<Augmentable>()
  if (options?.sampling === true && inner.has("sampling/createMessage")) enabled.add("sampling/createMessage")
  if (options?.elicitation === true && inner.has("elicitation/create")) enabled.add("elicitation/create")
  const maxTasks = Math.max(1, options?.maxTasks ?? 10_000)
  const defaultTtl = options?.defaultTtlMs === undefined ? 3_600_000 : options.defaultTtlMs
  const maxTtl = options?.maxTtlMs ?? 86_400_000
  const pollInterval = Math.max(1, Math.round(options?.pollIntervalMs ?? 500))
  // Insertion order is creation order.
  const tasks = new Map<string, Entry>()

  const expired = (task: Tasks.Task, now: number) => task.ttl !== null && Date.parse(task.createdAt) + task.ttl <= now

  const purge = (now: number) => {
    for (const [id, entry] of tasks) if (expired(entry.task, now)) tasks.delete(id)
  }

  const makeRoom = (): boolean => {
    if (tasks.size < maxTasks) return true
    for (const [id, entry] of tasks) {
      if (Tasks.isTerminal(entry.task.status)) {
        tasks.delete(id)
        return true
      }
    }
    return false
  }

  const ttlFor = (requested: unknown): number | null =>
    typeof requested !== "number" || !Number.isFinite(requested) || requested <= 0
      ? defaultTtl
      : Math.min(Math.round(requested), maxTtl)

  /**
   * Moves a task to `status` unless it is terminal already (a terminal task never changes), and tells the
   * server. Recorded before the notification is sent: a `tasks/get` crossing it reads the new status too.
   */
  const settle = (entry: Entry, status: Tasks.TaskStatus, fields: Partial<Entry>, message?: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      if (Tasks.isTerminal(entry.task.status)) return Effect.void
      const { statusMessage: _, ...rest } = entry.task
      entry.task = {
        ...rest,
        status,
        ...(message === undefined ? {} : { statusMessage: message }),
        lastUpdatedAt: new Date(now).toISOString()
      }
      if (fields.result !== undefined) entry.result = fields.result
      if (fields.error !== undefined) entry.error = fields.error
      return notify(statusMethod, entry.task)
    })

  const outcome = (entry: Entry, exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> => {
    if (Exit.isSuccess(exit)) return settle(entry, "completed", { result: exit.value as object })
    const cause = exit.cause
    if (Cause.hasInterruptsOnly(cause)) return settle(entry, "cancelled", {}, "The task was cancelled")
    const failure = cause.reasons.find(Cause.isFailReason)
    const error = failure?.error
    if (McpError.isMcpError(error)) return settle(entry, "failed", { error }, error.message)
    return Effect.flatMap(Defect.report(cause, "tasks"), (id) => {
      const internal =
        error === undefined
          ? Defect.internalError(id)
          : new McpError.InternalError({ message: String((error as { readonly message?: unknown }).message) })
      return settle(entry, "failed", { error: internal }, internal.message)
    })
  }

  /** Answers a task-augmented request at once and runs `work` as a fiber of the client's scope. */
  // Made once (a generator function made per call costs its own generator prototype and map).
  const start = Effect.fnUntraced(function* (
    params: Obj,
    work: Effect.Effect<unknown, unknown, CurrentRequest.CurrentRequest>
  ) {
    const now = yield* Clock.currentTimeMillis
    purge(now)
    if (!makeRoom()) {
      return yield* new McpError.InternalError({ message: `the client runs ${maxTasks} tasks already` })
    }
    const at = new Date(now).toISOString()
    const task: Tasks.Task = {
      taskId: SecureRandom.uuidV4Unsafe(),
      status: "working",
      createdAt: at,
      lastUpdatedAt: at,
      ttl: ttlFor((params.task as Obj).ttl),
      pollInterval
    }
    const entry: Entry = { task, done: yield* Deferred.make<void>() }
    tasks.set(task.taskId, entry)
    const body = Effect.flatMap(Effect.exit(work), (exit) => outcome(entry, exit))
    const ttl = task.ttl
    entry.fiber = yield* (
      ttl === null
        ? body
        : // At the end of its retention the task is gone for every reader, so nothing could cancel it any more:
          // its work is interrupted (its finalizers run) and it is forgotten; a waiting `tasks/result` is told so.
          Effect.timeoutOrElse(body, {
            duration: Duration.millis(ttl),
            orElse: () =>
              Effect.sync(() => {
                entry.expired = true
                tasks.delete(task.taskId)
              })
          })
    ).pipe(
      Effect.ensuring(
        Effect.andThen(
          Effect.sync(() => {
            entry.fiber = undefined
          }),
          Deferred.succeed(entry.done, undefined)
        )
      ),
      Effect.forkIn(scope)
    )
    // A handler done before its fiber was even stored leaves nothing to interrupt.
    if (Deferred.isDoneUnsafe(entry.done)) entry.fiber = undefined
    return { task }
  })

  const read = (params: unknown): Effect.Effect<Entry, McpError.McpError> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const taskId = String((params as Obj | undefined)?.taskId)
      const entry = tasks.get(taskId)
      if (entry === undefined || expired(entry.task, now)) return Effect.fail(notFound(taskId))
      return Effect.succeed(entry)
    })

  const served: ReadonlyArray<[string, Session.Handler]> = [
    ["tasks/get", (params) => Effect.map(read(params), (entry) => entry.task)],
    [
      "tasks/result",
      (params) =>
        Effect.flatMap(read(params), (entry) =>
          Effect.andThen(Deferred.await(entry.done), () => {
            const taskId = entry.task.taskId
            if (entry.expired === true) return Effect.fail(notFound(taskId, "Task has expired"))
            if (entry.result !== undefined) {
              const value = entry.result as { readonly _meta?: object }
              return Effect.succeed({ ...value, _meta: { ...value._meta, [Tasks.relatedTaskKey]: { taskId } } })
            }
            if (entry.error !== undefined) return Effect.fail(entry.error)
            return Effect.fail(
              new McpError.InvalidParams({ message: `Task ${taskId} was ${entry.task.status}: it has no result` })
            )
          })
        )
    ],
    [
      "tasks/list",
      (params) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          purge(now)
          const cursor = (params as Obj | undefined)?.cursor
          const all = [...tasks.values()]
          let from = 0
          if (cursor !== undefined) {
            const at = typeof cursor === "string" ? all.findIndex((e) => e.task.taskId === cursor) : -1
            if (at < 0) return Effect.fail(new McpError.InvalidParams({ message: "Invalid params: unknown cursor" }))
            from = at + 1
          }
          const page = all.slice(from, from + pageSize).map((e) => e.task)
          const last = page[page.length - 1]
          return Effect.succeed(
            from + pageSize < all.length && last !== undefined
              ? { tasks: page, nextCursor: last.taskId }
              : { tasks: page }
          )
        })
    ],
    [
      "tasks/cancel",
      (params) =>
        Effect.flatMap(read(params), (entry) => {
          if (Tasks.isTerminal(entry.task.status)) {
            return Effect.fail(
              new McpError.InvalidParams({
                message: `Cannot cancel task: already in terminal status '${entry.task.status}'`
              })
            )
          }
          // Recorded first, then the fiber interrupted: its finalizers have run when this answers.
          return settle(entry, "cancelled", {}, "The task was cancelled").pipe(
            Effect.andThen(entry.fiber === undefined ? Effect.void : Fiber.interrupt(entry.fiber)),
            Effect.map(() => entry.task)
          )
        })
    ]
  ]

  const capability: Session.Capabilities | undefined =
    enabled.size === 0
      ? undefined
      : {
          list: {},
          cancel: {},
          requests: Object.fromEntries(
            [...enabled].map((method) => {
              const [group, name] = capabilityKeys[method]
              return [group, { [name]: {} }]
            })
          )
        }

  return {
    capability,
    handlers: (() => {
      if (enabled.size === 0) return inner
      const map = new Map(inner)
      for (const method of enabled) {
        const plain = inner.get(method)!
        map.set(method, (params, info) => {
          const p = params as Obj | undefined
          if (p === undefined || !Predicate.isObject(p.task) || !Features.has(info.revision.version, "tasks")) {
            return plain(params, info)
          }
          const { task: _, ...rest } = p
          return start(p, plain(rest, info))
        })
      }
      for (const [method, handler] of served) map.set(method, handler)
      return map
    })()
  }
}
