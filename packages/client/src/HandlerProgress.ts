/**
 * Progress from the client's side: a sampling, elicitation or roots handler
 * reports how far it got with the server's request it is answering (a model
 * streaming its answer, a user filling a long form), as
 * `notifications/progress` for that request. The server sees it only when
 * its request carried a `progressToken`; otherwise, and for the input
 * requests of a 2026-07-28 `input_required` result (answered inside the
 * client's own call, where no server request is pending), reporting does
 * nothing.
 *
 * @example
 * ```ts
 * import * as HandlerProgress from "@effect-mcp/client/HandlerProgress"
 * import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
 * import * as Effect from "effect/Effect"
 *
 * export const Sampling = SamplingHandler.layer((params) =>
 *   Effect.gen(function* () {
 *     yield* HandlerProgress.report({ progress: 0, total: 1, message: "thinking" })
 *     const text = `you said ${params.messages.length} messages`
 *     yield* HandlerProgress.report({ progress: 1, total: 1 })
 *     return { role: "assistant", content: { type: "text", text }, model: "echo", stopReason: "endTurn" }
 *   })
 * )
 * ```
 */
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/** One progress update: `progress` must increase from one report to the next; `total` if known. */
export type Update = CurrentRequest.ProgressUpdate

/**
 * Reports progress of the server request being answered. Updates whose
 * `progress` does not increase are dropped, as are those sent after the
 * answer; without a pending server request that asked for progress, nothing is sent.
 */
export const report = (update: Update): Effect.Effect<void> =>
  Effect.flatMap(Effect.serviceOption(CurrentRequest.CurrentRequest), (current) =>
    Option.isSome(current) ? current.value.progress(update) : Effect.void
  )

/** Whether the server request being answered asked for progress (carried a `progressToken`). */
export const requested: Effect.Effect<boolean> = Effect.map(
  Effect.serviceOption(CurrentRequest.CurrentRequest),
  (current) => Option.isSome(current) && current.value.progressToken !== undefined
)
