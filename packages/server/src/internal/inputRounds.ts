/**
 * Multi-round-trip requests (2026-07-28). The handler runs as on any
 * revision; its asks are numbered in the order it makes them, and ask `n`
 * is answered from the `n`-th key's response when the retried request (or the
 * signed `requestState` of earlier rounds) has one. The first ask without an
 * answer stops the run: the handler is interrupted (its finalizers run; the
 * ask is not an error it could catch), and the request is answered with an
 * `input_required` result listing the asks made so far without an answer and
 * a `requestState` that carries the answers already received.
 */
import type * as InputRequired from "@effect-mcp/protocol/InputRequired"
import type * as McpError from "@effect-mcp/protocol/McpError"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Predicate from "effect/Predicate"
import type { AskMethod } from "../ServerRequest.ts"
import type * as RequestState from "./requestState.ts"

type Obj = { readonly [key: string]: unknown }

export type Outcome<A> =
  | { readonly _tag: "Complete"; readonly value: A }
  | { readonly _tag: "InputRequired"; readonly result: InputRequired.InputRequiredResult }

export type Ask = (method: AskMethod, params: Obj) => Effect.Effect<unknown>

const prefixes: { readonly [M in AskMethod]: string } = {
  "sampling/createMessage": "sampling",
  "elicitation/create": "elicitation",
  "roots/list": "roots"
}

// Lets asks made concurrently with the first unanswered one register before the run stops.
const settle = Effect.repeat(Effect.yieldNow, { times: 8 })

export const run = <A, E, R>(options: {
  readonly codec: RequestState.Codec
  readonly method: string
  readonly params: Obj
  readonly body: (ask: Ask) => Effect.Effect<A, E, R>
}): Effect.Effect<Outcome<A>, E | McpError.InvalidParams, R> =>
  Effect.gen(function* () {
    const { codec, method, params } = options
    const fingerprint = yield* codec.fingerprint(method, params)
    const answered = new Map<string, unknown>()
    const token = params.requestState
    if (typeof token === "string") {
      const state = yield* codec.open(fingerprint, token)
      for (const [key, value] of Object.entries(state.answered)) answered.set(key, value)
      const responses = Predicate.isObject(params.inputResponses) ? (params.inputResponses as Obj) : {}
      for (const key of Object.keys(state.pending)) {
        if (responses[key] !== undefined) answered.set(key, responses[key])
      }
    }
    let counter = 0
    const needed = new Map<string, InputRequired.InputRequest>()
    const signal = Deferred.makeUnsafe<void>()
    const ask: Ask = (askMethod, askParams) =>
      Effect.suspend(() => {
        const key = `${prefixes[askMethod]}-${counter++}`
        if (answered.has(key)) return Effect.succeed(answered.get(key))
        needed.set(key, { method: askMethod, params: askParams } as InputRequired.InputRequest)
        Deferred.doneUnsafe(signal, Exit.void)
        return Effect.never
      })
    const outcome = yield* Effect.raceFirst(
      Effect.map(options.body(ask), (value): Outcome<A> => ({ _tag: "Complete", value })),
      Effect.as(Effect.andThen(Deferred.await(signal), settle), { _tag: "InputRequired" } as const)
    )
    if (outcome._tag === "Complete") return outcome
    const pending: Record<string, string> = {}
    for (const [key, request] of needed) pending[key] = request.method
    const requestState = yield* codec.seal(fingerprint, { answered: Object.fromEntries(answered), pending })
    return {
      _tag: "InputRequired",
      result: { resultType: "input_required", inputRequests: Object.fromEntries(needed), requestState }
    } satisfies Outcome<A>
  })
