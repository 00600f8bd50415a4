/**
 * An ask the client runs as a task (2025-11-25): `sampling/createMessage` or
 * `elicitation/create` sent with `task`, where the client declared it takes
 * them (`tasks.requests.sampling.createMessage` /
 * `tasks.requests.elicitation.create`). The client answers with a task at
 * once; it is polled with `tasks/get` on the Clock at the interval the
 * client suggests, and its outcome read with `tasks/result` (the request's
 * result, or the JSON-RPC error it came to). The handler that asked sees the
 * answer as a plain ask would have given it. An ask that is interrupted
 * cancels its task, where the client declared `tasks.cancel`. A client's
 * `notifications/tasks/status` for the task ends the wait for the next poll
 * at once (the specification makes the notification optional: the poll stays).
 */
import * as Features from "@effect-mcp/protocol/Features"
import * as Tasks from "@effect-mcp/protocol/Tasks"
import type * as Session from "@effect-mcp/engine/Session"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { type AskMethod, ClientRequestError } from "../ServerRequest.ts"
import { declared } from "./capabilities.ts"

type Obj = { readonly [key: string]: unknown }

/** A request of the session, its failure already the ask's. */
type Send = (method: string, params: object, progress: boolean) => Effect.Effect<unknown, ClientRequestError>

const capabilityPath: { readonly [M in AskMethod]?: ReadonlyArray<string> } = {
  "sampling/createMessage": ["tasks", "requests", "sampling", "createMessage"],
  "elicitation/create": ["tasks", "requests", "elicitation", "create"]
}

/** Used when the client suggests no interval (as the official SDK does). */
const defaultPollMs = 1_000

/** The polls waiting on each session's client tasks, by task id: a status notification wakes its task's poll. */
const waiting = new WeakMap<Session.State, Map<string, Deferred.Deferred<void>>>()

/** `notifications/tasks/status` from the client: the task it names is polled now. */
export const statusNotification: Session.NotificationHandler = (params, _revision, state) =>
  Effect.suspend(() => {
    const taskId = (params as Obj | undefined)?.taskId
    const woken = typeof taskId === "string" ? waiting.get(state)?.get(taskId) : undefined
    return woken === undefined ? Effect.void : Deferred.done(woken, Exit.void)
  })

/** Sleeps until the next poll, or until the client tells the task's status. */
const nextPoll = (state: Session.State, taskId: string, ms: number) =>
  Effect.gen(function* () {
    const woken = yield* Deferred.make<void>()
    let polls = waiting.get(state)
    if (polls === undefined) {
      polls = new Map()
      waiting.set(state, polls)
    }
    polls.set(taskId, woken)
    yield* Effect.raceFirst(Effect.sleep(ms), Deferred.await(woken)).pipe(
      Effect.ensuring(Effect.sync(() => polls.delete(taskId)))
    )
  })

/** Whether the client of `session` takes `method` as a task (2025-11-25 and its declaration). */
export const clientTakes = (session: Session.SessionShape, method: AskMethod): boolean => {
  const path = capabilityPath[method]
  const revision = session.state.revision
  return (
    path !== undefined &&
    revision !== undefined &&
    Features.has(revision.version, "tasks") &&
    declared(session.state.peerCapabilities, path)
  )
}

const decodeCreate = Schema.decodeUnknownEffect(Tasks.CreateTaskResult)
const decodeGet = Schema.decodeUnknownEffect(Tasks.GetTaskResult)

const malformed = (method: string, what: string, error: Schema.SchemaError) =>
  new ClientRequestError({
    reason: "Rejected",
    method,
    message: `${method}: the client's ${what} is malformed: ${error.message}`,
    cause: error
  })

/** Runs the ask as a task on the client and returns its result (the `tasks/result` payload). */
export const run = (
  session: Session.SessionShape,
  method: AskMethod,
  params: Obj,
  task: { readonly ttl?: number | undefined },
  send: Send
): Effect.Effect<unknown, ClientRequestError> =>
  Effect.gen(function* () {
    const raw = yield* send(method, { ...params, task: task.ttl === undefined ? {} : { ttl: task.ttl } }, true)
    // A client may answer at once instead of making a task: that answer is the ask's.
    if (!Predicate.isObject((raw as Obj | undefined)?.task)) return raw
    const created = yield* Effect.mapError(decodeCreate(raw), (e) => malformed(method, "task", e))
    const taskId = created.task.taskId
    const follow = Effect.gen(function* () {
      let current: Tasks.Task = created.task
      // `input_required` goes straight to `tasks/result`, which the client answers once it has the input.
      while (!Tasks.isTerminal(current.status) && current.status !== "input_required") {
        yield* nextPoll(session.state, taskId, current.pollInterval ?? defaultPollMs)
        current = yield* Effect.flatMap(send("tasks/get", { taskId }, false), (raw) =>
          Effect.mapError(decodeGet(raw), (e) => malformed(method, "tasks/get answer", e))
        )
      }
      const result = yield* send("tasks/result", { taskId }, false)
      // The payload's related-task `_meta` is about the task, not the answer the handler reads.
      const meta = (result as { readonly _meta?: Obj })._meta
      if (meta === undefined || !(Tasks.relatedTaskKey in meta)) return result
      const { [Tasks.relatedTaskKey]: _, ...rest } = meta
      const { _meta: __, ...answer } = result as Obj
      return Object.keys(rest).length === 0 ? answer : { ...answer, _meta: rest }
    })
    return yield* follow.pipe(Effect.onInterrupt(() => Effect.ignore(send("tasks/cancel", { taskId }, false))))
  })
