/**
 * The `ServerRequest` a task's work runs with (see tasks.ts, whose Runtime
 * makes one per task): its asks become the task's input instead of requests
 * of its own.
 */
import type * as InputRequired from "@effect-mcp/protocol/InputRequired"
import type * as Logging from "@effect-mcp/protocol/Logging"
import type * as Revision from "@effect-mcp/protocol/Revision"
import * as Tasks from "@effect-mcp/protocol/Tasks"
import type * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import type * as Session from "@effect-mcp/engine/Session"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type { AskMethod, AskOptions, ServerRequestShape } from "../ServerRequest.ts"
import { ClientRequestError } from "../ServerRequest.ts"
import * as Ask from "./ask.ts"
import type { Running, Runtime, Start, Waiters } from "./tasks.ts"

const prefixes: { readonly [M in AskMethod]: string } = {
  "sampling/createMessage": "sampling",
  "elicitation/create": "elicitation",
  "roots/list": "roots"
}

/**
 * The `ServerRequest` of a task's work: its asks become the task's input
 * (`inputRequests` answered by `tasks/update` on the extension; requests on
 * the session that made it on 2025-11-25, the task `input_required` while
 * they wait). A task has no request to log or report progress on.
 */
export class TaskRequest implements ServerRequestShape {
  readonly method: string
  readonly revision: Revision.RevisionSpec
  readonly version: Revision.RevisionSpec["version"]
  readonly clientCapabilities: Session.Capabilities
  readonly clientInfo: Session.Implementation | undefined
  readonly stateless: boolean
  private counter = 0
  private outstanding = 0
  private readonly runtime: Runtime
  private readonly taskId: string
  private readonly start: Start
  private readonly pending: Running["pending"]

  private readonly waiters: Waiters

  constructor(runtime: Runtime, taskId: string, start: Start, pending: Running["pending"], waiters: Waiters) {
    this.waiters = waiters
    this.runtime = runtime
    this.taskId = taskId
    this.start = start
    this.pending = pending
    this.method = start.method
    this.revision = start.revision
    this.version = start.revision.version
    this.clientCapabilities = start.clientCapabilities
    this.clientInfo = start.clientInfo
    this.stateless = start.revision.stateless
  }

  ask(method: AskMethod, params: object, options?: AskOptions): Effect.Effect<unknown, ClientRequestError> {
    return Effect.suspend(() => {
      const prepared = this.start.prepareAsk(method, params)
      if (prepared instanceof ClientRequestError) return Effect.fail(prepared)
      const session = this.start.session
      if (!this.stateless && session !== undefined) {
        const meta = {
          ...((prepared as { readonly _meta?: object })._meta ?? {}),
          [Tasks.relatedTaskKey]: { taskId: this.taskId }
        }
        // The task waits for input while any of its requests to the client is outstanding.
        const asking = Effect.suspend(() =>
          this.outstanding++ === 0 ? this.runtime.update(this.taskId, "input_required") : Effect.void
        )
        const answered = Effect.suspend(() =>
          --this.outstanding === 0 ? this.runtime.update(this.taskId, "working") : Effect.void
        )
        return Effect.andThen(
          asking,
          Effect.ensuring(
            Effect.flatMap(this.waiters.newest, (related) =>
              Ask.viaSession(session, related, method, { ...prepared, _meta: meta }, options)
            ),
            answered
          )
        )
      }
      // Keys are never reused over the task's life (the extension requires it).
      const key = options?.key ?? `${prefixes[method]}-${this.counter++}`
      const self = this
      return Effect.gen(function* () {
        const answer = yield* Deferred.make<unknown>()
        self.pending.set(key, { request: { method, params: prepared } as InputRequired.InputRequest, answer })
        yield* self.runtime.inputChanged(self.taskId, self.pending)
        return yield* Deferred.await(answer)
      }).pipe(Effect.onInterrupt(() => Effect.sync(() => this.pending.delete(key))))
    })
  }

  // A task's asks are its own input requests; it has no retry to continue from.
  readonly retry = undefined

  requireInput(_inputRequests: InputRequired.InputRequests, _state?: string): Effect.Effect<never, ClientRequestError> {
    return Effect.fail(
      new ClientRequestError({
        reason: "NotInRevision",
        method: this.method,
        message: `${this.method}: a task asks its client by its own input requests, not by rounds`
      })
    )
  }

  log(_level: Logging.LoggingLevel, _data: unknown, _logger?: string): Effect.Effect<void> {
    return Effect.void
  }

  progress(_update: CurrentRequest.ProgressUpdate): Effect.Effect<void> {
    return Effect.void
  }

  notify(method: string, params: object): Effect.Effect<void> {
    const session = this.start.session
    return session === undefined || this.stateless ? Effect.void : Effect.ignore(session.notify(method, params))
  }
}
