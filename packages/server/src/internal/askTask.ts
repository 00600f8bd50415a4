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

/**
 * Per session, the followed client tasks' wake-ups by task id: a status notification completes its task's
 * Deferred, which ends the current wait, or the next one when it comes while a `tasks/get` is in flight.
 */
const waiting = new WeakMap<Session.State, Map<string, Deferred.Deferred<void>>>()

/** Wake-ups kept for tasks not followed (yet): told before their ask follows them, or after it stopped. */
const maxUnfollowed = 100

const pollsOf = (state: Session.State) => {
  let polls = waiting.get(state)
  if (polls === undefined) {
    polls = new Map()
    waiting.set(state, polls)
  }
  return polls
}

const wokenUp = () => {
  const deferred = Deferred.makeUnsafe<void>()
  Deferred.doneUnsafe(deferred, Exit.void)
  return deferred
}

/** `notifications/tasks/status` from the client: the task it names is polled now. */
export const statusNotification: Session.NotificationHandler = (params, _revision, state) =>
  Effect.sync(() => {
    const taskId = (params as Obj | undefined)?.taskId
    if (typeof taskId !== "string") return
    const polls = pollsOf(state)
    const woken = polls.get(taskId)
    if (woken !== undefined) {
      Deferred.doneUnsafe(woken, Exit.void)
      return
    }
    // A handler done at once can tell its status before the ask follows the task: its first wait is skipped.
    if (polls.size >= maxUnfollowed) polls.delete(polls.keys().next().value!)
    polls.set(taskId, wokenUp())
  })

/** Runs `body` with a `wait(ms)` that sleeps until the next poll or until the client told the task's status. */
const watched = <A, E>(
  state: Session.State,
  taskId: string,
  body: (wait: (ms: number) => Effect.Effect<void>) => Effect.Effect<A, E>
): Effect.Effect<A, E> =>
  Effect.suspend(() => {
    const polls = pollsOf(state)
    if (!polls.has(taskId)) polls.set(taskId, Deferred.makeUnsafe<void>())
    const wait = (ms: number) =>
      Effect.suspend(() => {
        const woken = polls.get(taskId) ?? Deferred.makeUnsafe<void>()
        return Effect.raceFirst(Effect.sleep(ms), Deferred.await(woken)).pipe(
          // A fresh one before the next `tasks/get` is sent: a notification crossing it is not lost.
          Effect.andThen(Effect.sync(() => void polls.set(taskId, Deferred.makeUnsafe<void>())))
        )
      })
    return body(wait).pipe(Effect.ensuring(Effect.sync(() => polls.delete(taskId))))
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
export const run = Effect.fnUntraced(function* (
  session: Session.SessionShape,
  method: AskMethod,
  params: Obj,
  task: { readonly ttl?: number | undefined },
  send: Send
): Effect.fn.Return<unknown, ClientRequestError> {
  const raw = yield* send(method, { ...params, task: task.ttl === undefined ? {} : { ttl: task.ttl } }, true)
  // A client may answer at once instead of making a task: that answer is the ask's.
  if (!Predicate.isObject((raw as Obj | undefined)?.task)) return raw
  const created = yield* Effect.mapError(decodeCreate(raw), (e) => malformed(method, "task", e))
  const taskId = created.task.taskId
  const follow = watched(session.state, taskId, (wait) =>
    Effect.gen(function* () {
      let current: Tasks.Task = created.task
      // `input_required` goes straight to `tasks/result`, which the client answers once it has the input.
      while (!Tasks.isTerminal(current.status) && current.status !== "input_required") {
        yield* wait(current.pollInterval ?? defaultPollMs)
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
  )
  return yield* follow.pipe(Effect.onInterrupt(() => Effect.ignore(send("tasks/cancel", { taskId }, false))))
})
