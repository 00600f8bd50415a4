/**
 * The 2026-07-28 multi-round-trip loop: while the server answers a request
 * with `resultType: "input_required"`, answer each of its input requests with
 * the client's handlers and send the same request again with the answers
 * (`inputResponses`, same keys) and the echoed `requestState`. The caller
 * sees only the final result.
 */
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as Tracing from "@effect-mcp/engine/Tracing"
import * as InputRequired from "@effect-mcp/protocol/InputRequired"
import type * as McpError from "@effect-mcp/protocol/McpError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type * as Tracer from "effect/Tracer"
import { InputRequiredError } from "../ClientError.ts"
import type * as ElicitationForm from "../ElicitationForm.ts"
import type * as RootsHandler from "../RootsHandler.ts"
import type { Answer } from "./serverRequests.ts"

const omitCurrentRequest = Context.omit(CurrentRequest.CurrentRequest)
const withoutCurrentRequest = (context: Context.Context<never>): Context.Context<never> => omitCurrentRequest(context)

const decodeInputRequired = Schema.decodeUnknownEffect(InputRequired.InputRequiredResult)

/** Whether a result is the server's `input_required` answer (2026-07-28). */
export const isInputRequired = (u: unknown): boolean =>
  Predicate.isObject(u) && (u as { readonly resultType?: unknown }).resultType === "input_required"

const traceParentOf = (params: unknown): Tracer.AnySpan | undefined => {
  const meta = Predicate.isObject(params) ? (params as { readonly _meta?: unknown })._meta : undefined
  return Predicate.isObject(meta)
    ? Tracing.parseTraceparent(
        (meta as { readonly traceparent?: unknown }).traceparent,
        (meta as { readonly tracestate?: unknown }).tracestate
      )
    : undefined
}

/** Keys of the retry that must not leak from one round into the next. */
const withoutRetryFields = (params: object | undefined): { readonly [key: string]: unknown } => {
  const { inputResponses: _r, requestState: _s, ...rest } = (params ?? {}) as { readonly [key: string]: unknown }
  return rest
}

/**
 * Answers one input request of `method` (an `input_required` round, or a
 * task's `inputRequests`) with the client's handlers, served as the request
 * it stands for would be: with tracing on, under a SERVER span continuing
 * the asker's context.
 */
export const answerInput = (
  method: string,
  request: InputRequired.InputRequest,
  answer: Answer,
  tracing: boolean
): Effect.Effect<
  object,
  InputRequiredError | McpError.McpError | ElicitationForm.FormError | RootsHandler.InvalidRoot
> => {
  const answered = answer(request.method, request.params)
  return (tracing ? Tracing.incoming(request, undefined, answered) : answered).pipe(
    // Not an answer to a server request: a handler's progress has nowhere to go (and must not go
    // to a request the caller happens to be serving).
    Effect.updateContext(withoutCurrentRequest),
    Effect.catchTag("MethodNotFound", () =>
      Effect.fail(
        new InputRequiredError({
          method,
          reason: "MissingHandler",
          message: `${method}: the server asked for ${request.method}, which this client does not handle`
        })
      )
    )
  )
}

// The rounds after a first answer that asked for input (client.ts sends the first). One generator
// function for every such request: an inline `Effect.gen` would create one per request.
export const run = Effect.fnUntraced(function* <E>(options: {
  readonly method: string
  readonly params: object | undefined
  /** The answer to the first round, already sent (`send` sends the retries). */
  readonly first: unknown
  readonly maxRounds: number
  readonly send: (params: object | undefined) => Effect.Effect<unknown, E>
  readonly answer: Answer
}): Effect.fn.Return<
  unknown,
  E | InputRequiredError | McpError.McpError | ElicitationForm.FormError | RootsHandler.InvalidRoot
> {
  let params = options.params
  // Tracing on: the span of the server's round that asked, under which the next round is sent, so
  // every round and every answer belong to one trace even when the caller has no span of its own.
  let asker: Tracer.AnySpan | undefined
  let result = options.first
  for (let round = 0; ; round++) {
    if (round > 0) {
      result = yield* asker === undefined ? options.send(params) : Effect.withParentSpan(options.send(params), asker)
    }
    if (!isInputRequired(result)) return result
    if (round >= options.maxRounds) {
      return yield* new InputRequiredError({
        method: options.method,
        reason: "TooManyRounds",
        message: `${options.method}: the server still required input after ${options.maxRounds} rounds`
      })
    }
    const asked = yield* decodeInputRequired(result).pipe(
      Effect.mapError(
        (e) => new InputRequiredError({ method: options.method, reason: "Malformed", message: e.message })
      )
    )
    const responses: Record<string, unknown> = {}
    const tracing = Tracing.enabled(yield* Effect.context<never>())
    for (const [key, request] of Object.entries(asked.inputRequests ?? {})) {
      if (tracing) asker ??= traceParentOf(request.params)
      responses[key] = yield* answerInput(options.method, request, options.answer, tracing)
    }
    params = {
      ...withoutRetryFields(options.params),
      ...(Object.keys(responses).length === 0 ? {} : { inputResponses: responses }),
      ...(asked.requestState === undefined ? {} : { requestState: asked.requestState })
    }
  }
})
