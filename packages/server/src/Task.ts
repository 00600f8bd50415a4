/**
 * Tasks from a handler's side. A tool declares `taskSupport` (`Tool.make`)
 * and the server runs its calls as tasks where the client can take one (the
 * 2025-11-25 `task` parameter, or the Tasks extension declared on a
 * 2026-07-28 request): the call is answered at once with the task, and the
 * handler runs as a fiber of the server's scope until it completes,
 * `tasks/cancel` interrupts it, or the server shuts down. Its asks
 * (elicitation, sampling, roots) become the task's input.
 *
 * `background` lets a handler decide when: it gathers what it needs in the
 * request (on 2026-07-28, through input rounds), then hands the rest of its
 * work to a task. See docs/tasks.md.
 */
import * as Effect from "effect/Effect"
import type * as Context from "effect/Context"
import type { ServerRequest } from "./ServerRequest.ts"

/** How a server runs its tasks (`McpServer.Options.tasks`). */
export interface Settings {
  /** Retention of a task from its creation when the client asks for none (ms; null: unlimited). Default 1 hour. */
  readonly defaultTtlMs?: number | null | undefined
  /** The longest retention a client may ask for (ms). Default 24 hours. */
  readonly maxTtlMs?: number | undefined
  /** The polling interval suggested to clients (ms). Default 500. */
  readonly pollIntervalMs?: number | undefined
  /** How often this server records that it is alive in the store (ms). Default 5 seconds. */
  readonly heartbeatMs?: number | undefined
  /** A task whose worker has not heartbeat for this long (ms) reads `failed`. Default 3 heartbeats. */
  readonly workerTimeoutMs?: number | undefined
}

/** How a tool takes task execution: never (the default), when the client can, or always. */
export type TaskSupport = "forbidden" | "optional" | "required"

/**
 * The signal `background` ends a handler with. The server catches it (do not
 * catch it yourself) and starts its `work` as a task.
 */
export class Background {
  readonly _tag = "Background"
  readonly work: Effect.Effect<unknown, unknown, never>
  readonly context: Context.Context<never>
  constructor(work: Effect.Effect<unknown, unknown, never>, context: Context.Context<never>) {
    this.work = work
    this.context = context
  }
}

/**
 * Ends the handler and continues with `work` as a task: the call is answered
 * with the task at once (a `CreateTaskResult`), and `work`'s value becomes
 * the task's result as the handler's would have. Where the request cannot
 * take a task (the client did not opt in, or the revision has none), `work`
 * runs in the request instead and its value answers it.
 *
 * The tool needs a `taskSupport` other than `"forbidden"`, and
 * `taskCreation: "handler"` when the request itself should come first (so
 * the server does not make the task before the handler runs).
 *
 * @example
 * ```ts
 * import * as Elicitation from "@effect-mcp/server/Elicitation"
 * import * as Task from "@effect-mcp/server/Task"
 * import * as Tool from "@effect-mcp/server/Tool"
 * import * as Effect from "effect/Effect"
 * import * as Schema from "effect/Schema"
 *
 * export const Report = Tool.make("report", {
 *   input: Schema.Struct({}),
 *   taskSupport: "optional",
 *   taskCreation: "handler",
 *   handler: () =>
 *     Effect.gen(function* () {
 *       const answer = yield* Elicitation.form({
 *         message: "Which quarter?",
 *         schema: Schema.Struct({ quarter: Schema.String })
 *       })
 *       const quarter = answer.action === "accept" ? answer.content.quarter : "Q1"
 *       return yield* Task.background(Effect.as(Effect.sleep("10 seconds"), `Report for ${quarter}`))
 *     })
 * })
 * ```
 */
export const background = <A, E, R>(work: Effect.Effect<A, E, R>): Effect.Effect<never, never, R | ServerRequest> =>
  Effect.flatMap(Effect.context<R | ServerRequest>(), (context) =>
    Effect.fail(new Background(work as Effect.Effect<unknown, unknown, never>, context as Context.Context<never>))
  ) as unknown as Effect.Effect<never, never, R | ServerRequest>
