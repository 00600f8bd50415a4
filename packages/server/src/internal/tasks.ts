/**
 * A server's tasks at run time: starting a request's work as a fiber owned
 * by the server's scope (it outlives the request; `tasks/cancel`, the end of
 * its retention or shutdown interrupts it and its finalizers run), writing
 * each status change to the `TaskStore`, the input a task waits for, and
 * reading tasks back, with a task whose worker stopped heartbeating reported
 * `failed`.
 *
 * Both forms read the same records: the 2025-11-25 core feature (`task`
 * wrapper, `ttl`, `pollInterval`, `tasks/result`, `tasks/list`) and the
 * SEP-2663 extension (flat task, `ttlMs`, `pollIntervalMs`, result or error
 * inlined by `tasks/get`, input through `tasks/update`).
 */
import type * as InputRequired from "@effect-mcp/protocol/InputRequired"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Tasks from "@effect-mcp/protocol/Tasks"
import type * as Session from "@effect-mcp/engine/Session"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as SecureRandom from "effect/crypto/SecureRandom"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type * as Revision from "@effect-mcp/protocol/Revision"
import * as Defect from "@effect-mcp/engine/Defect"
import type { AskMethod } from "../ServerRequest.ts"
import type { Settings } from "../Task.ts"
import { type ClientRequestError, ServerRequest } from "../ServerRequest.ts"
import * as TaskStore from "../TaskStore.ts"
import { TaskRequest } from "./taskRequest.ts"
import { coreTask, lost } from "./taskViews.ts"

export { coreTask, detailedTask, extensionTask } from "./taskViews.ts"

/** Who reads a task: the authenticated principal, else the session that made it (which `tasks/list` shows). */
export type Owner = string

/** A task running in this process. */
export interface Running {
  readonly fiber: Fiber.Fiber<unknown, unknown>
  /** Done when its fiber has ended; failed with the -32602 of an expired task when its retention ran out first. */
  readonly done: Deferred.Deferred<void, McpError.McpError>
  /** Asks waiting for `tasks/update`, by key (the extension). */
  readonly pending: Map<
    string,
    { readonly request: InputRequired.InputRequest; readonly answer: Deferred.Deferred<unknown> }
  >
  /** Sends `notifications/tasks/status` to the session that made it (2025-11-25). */
  readonly notify: ((params: object) => Effect.Effect<void>) | undefined
  /**
   * The `tasks/result` requests waiting for it (2025-11-25), newest last: the
   * task's requests to the client travel on the newest one's stream.
   */
  readonly waiters: Waiters
}

/**
 * The `tasks/result` requests waiting for a task, and a signal that one has
 * come: a task's request to the client waits for one (2025-11-25 has the
 * client call `tasks/result` once it sees `input_required`, and the request
 * travel on that call's stream, which every transport can carry).
 */
export class Waiters {
  readonly ids: Array<string | number> = []
  private arrived = Deferred.makeUnsafe<void>()

  add(id: string | number): void {
    this.ids.push(id)
    Deferred.doneUnsafe(this.arrived, Effect.void)
  }

  remove(id: string | number): void {
    const at = this.ids.lastIndexOf(id)
    if (at >= 0) this.ids.splice(at, 1)
    if (this.ids.length === 0) this.arrived = Deferred.makeUnsafe<void>()
  }

  /** The newest waiting request, once there is one. */
  readonly newest: Effect.Effect<string | number> = Effect.suspend(() =>
    this.ids.length > 0
      ? Effect.succeed(this.ids[this.ids.length - 1]!)
      : Effect.andThen(Deferred.await(this.arrived), this.newest)
  )
}

const shutDown: TaskStore.TaskError = {
  code: McpError.Code.InternalError,
  message: "the server running this task shut down"
}

/** What a failed request's error is stored as. */
const errorOf = (error: McpError.McpError): TaskStore.TaskError => {
  const object = McpError.toErrorObject(error)
  return object.data === undefined
    ? { code: object.code, message: object.message }
    : { code: object.code, message: object.message, data: object.data }
}

const notFound = (taskId: string, why = "Task not found") =>
  new McpError.InvalidParams({ message: `Failed to retrieve task ${JSON.stringify(taskId.slice(0, 100))}: ${why}` })

const expired = (taskId: string) => notFound(taskId, "Task has expired")

const storeFailed = (error: TaskStore.TaskStoreError) =>
  new McpError.InternalError({ message: `the task store failed: ${error.message}` })

/** The answers of `tasks/update`, by the key of the ask each answers. */
export type Responses = { readonly [key: string]: unknown }

/** What starting a task needs to know of the request that makes it. */
export interface Start {
  readonly owner: Owner
  readonly method: string
  /** The client's requested retention (2025-11-25 `task.ttl`). */
  readonly ttlMs?: number | undefined
  /** The revision the task is made on: its asks travel as that revision's input. */
  readonly revision: Revision.RevisionSpec
  readonly clientCapabilities: Session.Capabilities
  readonly clientInfo: Session.Implementation | undefined
  /** The stateful session making it (its asks are requests there on 2025-11-25). */
  readonly session: Session.SessionShape | undefined
  /** Makes an ask's params for the revision and checks the client can answer it (from `ask.ts`). */
  readonly prepareAsk: (method: AskMethod, params: object) => object | ClientRequestError
  /** The handler's context: the request's services, the registrant's, and a `ServerRequest` to replace. */
  readonly context: Context.Context<never>
}

/** The tasks of one server. */
export class Runtime {
  readonly worker: string = SecureRandom.uuidV4Unsafe()
  readonly running = new Map<string, Running>()
  readonly store: TaskStore.TaskStoreShape
  private readonly scope: Scope.Scope
  private readonly durable: boolean
  readonly defaultTtlMs: number | null
  readonly maxTtlMs: number
  readonly pollIntervalMs: number
  readonly heartbeatMs: number
  readonly workerTimeoutMs: number
  private started = false
  private lastPurge = 0

  private readonly changed: (record: TaskStore.TaskRecord) => Effect.Effect<void>
  private readonly inputElsewhere: (taskId: string, responses: Responses) => Effect.Effect<void>

  constructor(
    store: TaskStore.TaskStoreShape,
    durable: boolean,
    scope: Scope.Scope,
    settings: Settings | undefined,
    changed: (record: TaskStore.TaskRecord) => Effect.Effect<void> = () => Effect.void,
    inputElsewhere: (taskId: string, responses: Responses) => Effect.Effect<void> = () => Effect.void
  ) {
    this.changed = changed
    this.inputElsewhere = inputElsewhere
    this.store = store
    this.durable = durable
    this.scope = scope
    this.defaultTtlMs = settings?.defaultTtlMs === undefined ? 3_600_000 : settings.defaultTtlMs
    this.maxTtlMs = settings?.maxTtlMs ?? 86_400_000
    this.pollIntervalMs = Math.max(1, Math.round(settings?.pollIntervalMs ?? 500))
    this.heartbeatMs = Math.max(1, settings?.heartbeatMs ?? 5_000)
    this.workerTimeoutMs = settings?.workerTimeoutMs ?? 3 * this.heartbeatMs
  }

  /** The heartbeat of a durable store starts with the first task (in memory, a task lives with the process). */
  private ensureStarted(): Effect.Effect<void> {
    if (this.started || !this.durable) return Effect.void
    this.started = true
    const beat = Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.ignore(this.store.heartbeat(this.worker, now)))
    return Effect.andThen(
      beat,
      Effect.asVoid(Effect.forkIn(Effect.repeat(beat, Schedule.spaced(this.heartbeatMs)), this.scope))
    )
  }

  private ttlFor(requested: number | undefined): number | null {
    if (requested === undefined || !Number.isFinite(requested) || requested <= 0) return this.defaultTtlMs
    return Math.min(Math.round(requested), this.maxTtlMs)
  }

  /**
   * Stores a new task and starts `work` as a fiber of the server's scope,
   * with a `ServerRequest` whose asks become the task's input; returns the
   * stored record (written before the request is answered).
   */
  start(
    start: Start,
    work: Effect.Effect<object, McpError.McpError>
  ): Effect.Effect<TaskStore.TaskRecord, McpError.McpError> {
    return Runtime.startWith(this, start, work)
  }

  // Generators made once, not per call (a generator function made per call costs its own generator prototype and map).
  private static readonly startWith = Effect.fnUntraced(function* (
    self: Runtime,
    start: Start,
    work: Effect.Effect<object, McpError.McpError>
  ): Effect.fn.Return<TaskStore.TaskRecord, McpError.McpError> {
    yield* self.ensureStarted()
    const now = yield* Clock.currentTimeMillis
    if (now - self.lastPurge > 60_000) yield* self.purge(now)
    const record: TaskStore.TaskRecord = {
      taskId: SecureRandom.uuidV4Unsafe(),
      owner: start.owner,
      method: start.method,
      status: "working",
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: self.ttlFor(start.ttlMs),
      pollIntervalMs: self.pollIntervalMs,
      worker: self.worker
    }
    yield* Effect.mapError(self.store.create(record), storeFailed)
    const done = yield* Deferred.make<void, McpError.McpError>()
    const pending: Running["pending"] = new Map()
    const session = start.session
    const notify =
      start.revision.stateless || session === undefined
        ? undefined
        : (params: object) => Effect.ignore(session.notify("notifications/tasks/status", params))
    const waiters = new Waiters()
    const request = new TaskRequest(self, record.taskId, start, pending, waiters)
    const context = Context.add(start.context, ServerRequest, request)
    const body = self.untilExpiry(record, Effect.exit(Effect.provideContext(work, context)), done).pipe(
      Effect.flatMap((exit) => (exit === undefined ? Effect.void : self.settle(record.taskId, exit))),
      Effect.onInterrupt(() =>
        self.finish(record.taskId, "failed", { error: shutDown, statusMessage: shutDown.message })
      ),
      Effect.ensuring(
        Effect.andThen(
          Effect.sync(() => self.running.delete(record.taskId)),
          Deferred.succeed(done, undefined)
        )
      )
    )
    const fiber = yield* Effect.forkIn(body, self.scope, { startImmediately: false })
    self.running.set(record.taskId, { fiber, done, pending, notify, waiters })
    return record
  })

  /**
   * Runs a task's work until its retention runs out (`ttlMs` from creation,
   * the 2025-11-25 spec's "retention duration"): then the task is gone for
   * every reader (-32602), so nothing could cancel or read it any more and its
   * work is interrupted (its finalizers run before anything else), the
   * expired records are purged and the `tasks/result` requests waiting for
   * it get that -32602. Undefined when it expired.
   */
  private untilExpiry<A>(
    record: TaskStore.TaskRecord,
    work: Effect.Effect<A>,
    done: Deferred.Deferred<void, McpError.McpError>
  ): Effect.Effect<A | undefined> {
    const ttlMs = record.ttlMs
    if (ttlMs === null) return work
    return Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.timeoutOrElse(work, {
        // From creation, not from when the fiber started.
        duration: Math.max(0, record.createdAt + ttlMs - now),
        orElse: () =>
          Clock.currentTimeMillis.pipe(
            Effect.flatMap((at) => this.purge(at)),
            Effect.andThen(Deferred.fail(done, expired(record.taskId))),
            Effect.as(undefined)
          )
      })
    )
  }

  /** Drops the expired records (the store's `purgeExpired`); a store that fails keeps them, unread. */
  private purge(now: number): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.lastPurge = now
      return Effect.ignore(this.store.purgeExpired(now))
    })
  }

  private settle(taskId: string, exit: Exit.Exit<object, McpError.McpError>): Effect.Effect<void> {
    if (Exit.isSuccess(exit)) return this.finish(taskId, "completed", { result: exit.value })
    const cause = exit.cause
    if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
    const failure = cause.reasons.find(Cause.isFailReason)
    if (failure !== undefined) {
      const error = errorOf(failure.error)
      return this.finish(taskId, "failed", { error, statusMessage: error.message })
    }
    return Effect.flatMap(Defect.report(cause, "tasks"), (id) => {
      const error = errorOf(Defect.internalError(id))
      return this.finish(taskId, "failed", { error, statusMessage: error.message })
    })
  }

  /** Writes a status change (ignored once terminal) and tells the session that made the task. */
  update(
    taskId: string,
    status: Tasks.TaskStatus,
    fields?: Omit<TaskStore.TaskPatch, "status" | "lastUpdatedAt">
  ): Effect.Effect<TaskStore.TaskRecord | undefined> {
    return Effect.flatMap(Clock.currentTimeMillis, (now) =>
      this.store.update(taskId, { ...fields, status, lastUpdatedAt: now }).pipe(
        Effect.catch((error) => Effect.as(Effect.logWarning(`task ${taskId}: ${error.message}`), undefined)),
        Effect.tap((record) => {
          if (record === undefined) return Effect.void
          const notify = this.running.get(taskId)?.notify
          return notify === undefined
            ? this.changed(record)
            : Effect.andThen(notify(coreTask(record)), this.changed(record))
        })
      )
    )
  }

  private finish(
    taskId: string,
    status: Tasks.TaskStatus,
    fields: Omit<TaskStore.TaskPatch, "status" | "lastUpdatedAt">
  ): Effect.Effect<void> {
    return Effect.asVoid(this.update(taskId, status, fields))
  }

  /**
   * Reads a task the requester may see (-32602 otherwise: unknown, expired,
   * or bound to another principal). A task still running on a worker that
   * stopped heartbeating, or nowhere at all, is failed first.
   */
  read(taskId: string, principal: string | undefined): Effect.Effect<TaskStore.TaskRecord, McpError.McpError> {
    return Runtime.readWith(this, taskId, principal)
  }

  private static readonly readWith = Effect.fnUntraced(function* (
    self: Runtime,
    taskId: string,
    principal: string | undefined
  ): Effect.fn.Return<TaskStore.TaskRecord, McpError.McpError> {
    const record = yield* Effect.mapError(self.store.get(taskId), storeFailed)
    if (record === undefined) return yield* Effect.fail(notFound(taskId))
    if (record.owner.startsWith("p:") && record.owner !== principal) return yield* Effect.fail(notFound(taskId))
    const now = yield* Clock.currentTimeMillis
    // Expired whatever its status: a task still working then is being interrupted (`untilExpiry`).
    if (TaskStore.isExpired(record, now)) return yield* Effect.fail(expired(taskId))
    if (Tasks.isTerminal(record.status) || (yield* self.alive(record, now))) return record
    return (yield* self.update(taskId, "failed", { error: lost, statusMessage: lost.message })) ?? record
  })

  private alive(record: TaskStore.TaskRecord, now: number): Effect.Effect<boolean> {
    if (record.worker === this.worker) return Effect.succeed(this.running.has(record.taskId))
    return this.store.lastHeartbeat(record.worker).pipe(
      Effect.map((seen) => seen !== undefined && now - seen <= this.workerTimeoutMs),
      // A store that cannot say keeps the task as it is.
      Effect.orElseSucceed(() => true)
    )
  }

  /**
   * Waits until the task is terminal (`tasks/result`): on its fiber here, else
   * polling the store; -32602 once it expired. While `requestId` waits here, the task's requests to
   * the client are related to it (they travel on its stream, as 2025-11-25 has it).
   */
  awaitTerminal(
    taskId: string,
    principal: string | undefined,
    requestId?: string | number | undefined
  ): Effect.Effect<TaskStore.TaskRecord, McpError.McpError> {
    const poll: Effect.Effect<TaskStore.TaskRecord, McpError.McpError> = Effect.flatMap(
      this.read(taskId, principal),
      (record) => {
        if (Tasks.isTerminal(record.status)) return Effect.succeed(record)
        const running = this.running.get(taskId)
        if (running === undefined) return Effect.andThen(Effect.sleep(record.pollIntervalMs), poll)
        if (requestId === undefined) return Effect.andThen(Deferred.await(running.done), poll)
        const waiting = Effect.acquireUseRelease(
          Effect.sync(() => running.waiters.add(requestId)),
          () => Deferred.await(running.done),
          () => Effect.sync(() => running.waiters.remove(requestId))
        )
        return Effect.andThen(waiting, poll)
      }
    )
    return poll
  }

  /** Cancels a task: `cancelled` at once, then its fiber is interrupted (its finalizers run before this returns). */
  cancel(taskId: string): Effect.Effect<TaskStore.TaskRecord | undefined> {
    return Effect.flatMap(this.update(taskId, "cancelled", { statusMessage: "The task was cancelled" }), (record) => {
      const running = this.running.get(taskId)
      return running === undefined ? Effect.succeed(record) : Effect.as(Fiber.interrupt(running.fiber), record)
    })
  }

  /**
   * A task's status changed in another process sharing the store (a cluster's
   * change feed): its record as stored now. A task that process ended
   * (`tasks/cancel` served there) while its work runs here is interrupted, in
   * the background: the feed delivering it does not wait for its finalizers.
   */
  changedElsewhere(taskId: string): Effect.Effect<TaskStore.TaskRecord | undefined> {
    return Effect.flatMap(
      Effect.orElseSucceed(this.store.get(taskId), () => undefined),
      (record) => {
        const running = this.running.get(taskId)
        if (record === undefined || running === undefined || !Tasks.isTerminal(record.status)) {
          return Effect.succeed(record)
        }
        return Effect.as(Effect.forkIn(Fiber.interrupt(running.fiber), this.scope), record)
      }
    )
  }

  /**
   * The input of `tasks/update`: answers the task's asks where it runs here;
   * a task of a durable store running elsewhere gets it through
   * `inputElsewhere` (a cluster's change feed, delivered to `answer` there).
   */
  input(taskId: string, worker: string, responses: Responses): Effect.Effect<void> {
    if (this.running.has(taskId) || !this.durable || worker === this.worker) return this.answer(taskId, responses)
    return this.inputElsewhere(taskId, responses)
  }

  /** Answers a task's outstanding asks (`tasks/update`) running here; unknown and answered keys are ignored. */
  answer(taskId: string, responses: Responses): Effect.Effect<void> {
    return Effect.suspend(() => {
      const running = this.running.get(taskId)
      if (running === undefined) return Effect.void
      const answered: Array<Effect.Effect<boolean>> = []
      for (const [key, value] of Object.entries(responses)) {
        const ask = running.pending.get(key)
        if (ask === undefined) continue
        running.pending.delete(key)
        answered.push(Deferred.succeed(ask.answer, value))
      }
      if (answered.length === 0) return Effect.void
      return Effect.andThen(Effect.all(answered), this.inputChanged(taskId, running.pending))
    })
  }

  /** Records what the task waits for now: `input_required` with its asks, or `working` again. */
  inputChanged(taskId: string, pending: Running["pending"]): Effect.Effect<void> {
    if (pending.size === 0) return this.finish(taskId, "working", { statusMessage: undefined })
    const inputRequests: Record<string, InputRequired.InputRequest> = {}
    for (const [key, ask] of pending) inputRequests[key] = ask.request
    return this.finish(taskId, "input_required", { inputRequests })
  }
}
