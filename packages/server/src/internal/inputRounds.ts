/**
 * Multi-round-trip requests (2026-07-28). The handler runs as on any
 * revision; its asks are numbered in the order it makes them, and ask `n`
 * is answered from the `n`-th key's response when the retried request (or the
 * signed `requestState` of earlier rounds) has one. The first ask without an
 * answer stops the run: the handler is interrupted (its finalizers run; the
 * ask is not an error it could catch), and the request is answered with an
 * `input_required` result listing the asks made so far without an answer and
 * a `requestState` that carries the answers already received. An ask with a
 * key of its own (`AskOptions.key`) is also answered by the client's
 * `inputResponses` entry under that key when no `requestState` lists it, so
 * a client that answers known keys directly needs no extra round.
 */
import type * as InputRequired from "@effect-mcp/protocol/InputRequired"
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Predicate from "effect/Predicate"
import type { AskMethod } from "../ServerRequest.ts"
import type * as RequestState from "./requestState.ts"

type Obj = { readonly [key: string]: unknown }

export type Outcome<A> =
  | { readonly _tag: "Complete"; readonly value: A }
  | { readonly _tag: "InputRequired"; readonly result: InputRequired.InputRequiredResult }

export type Ask = (method: AskMethod, params: Obj, key?: string) => Effect.Effect<unknown>

const prefixes: { readonly [M in AskMethod]: string } = {
  "sampling/createMessage": "sampling",
  "elicitation/create": "elicitation",
  "roots/list": "roots"
}

// Lets asks made concurrently with the first unanswered one register before the run stops.
const settle = Effect.repeat(Effect.yieldNow, { times: 8 })

/**
 * Runs `body` in a fiber of its own (so an ask can stop it) and waits for it,
 * unless `onStop` is called first: then the body is interrupted and the run
 * ends with `InputRequired`. One fiber per request rather than a race of two;
 * a handler that finishes synchronously is done before anything waits.
 */
const raceInput = <A, E, R>(
  body: Effect.Effect<Outcome<A>, E, R>,
  onStop: (stop: () => void) => void
): Effect.Effect<Outcome<A> | { readonly _tag: "InputRequired" }, E, R> =>
  Effect.withFiber((parent) => {
    const fiber = Effect.runForkWith(parent.context as Context.Context<R>)(body)
    const done = fiber.pollUnsafe()
    if (done !== undefined) return done
    return Effect.callback<Outcome<A> | { readonly _tag: "InputRequired" }, E>((resume) => {
      let settled = false
      fiber.addObserver((exit) => {
        if (settled) return
        settled = true
        resume(exit)
      })
      onStop(() => {
        if (settled) return
        settled = true
        resume(Effect.as(Fiber.interrupt(fiber), { _tag: "InputRequired" } as const))
      })
      // The request was cancelled: its handler stops too, finalizers included.
      return Fiber.interrupt(fiber)
    })
  })

// One generator function for every request: an inline `Effect.gen` would create one per request.
export const run = Effect.fnUntraced(function* <A, E, R>(options: {
  readonly codec: RequestState.Codec
  readonly method: string
  readonly params: Obj
  readonly body: (ask: Ask) => Effect.Effect<A, E, R>
}): Effect.fn.Return<Outcome<A>, E | McpError.InvalidParams, R> {
  const { codec, method, params } = options
  // Keyed (an HMAC): computed only when a requestState is opened or sealed,
  // so a request that never asks for input costs no signature.
  let fingerprint: string | undefined
  const fingerprintOf = Effect.suspend(() =>
    fingerprint === undefined
      ? Effect.map(codec.fingerprint(method, params), (f) => (fingerprint = f))
      : Effect.succeed(fingerprint)
  )
  const answered = new Map<string, unknown>()
  const responses = Predicate.isObject(params.inputResponses) ? (params.inputResponses as Obj) : {}
  // Every answer is a result object; anything else is a malformed request, not a missing answer.
  for (const [key, value] of Object.entries(responses)) {
    if (!Predicate.isObject(value) || Array.isArray(value)) {
      return yield* new McpError.InvalidParams({
        message: `Invalid params: inputResponses.${key} must be a result object`,
        data: { key }
      })
    }
  }
  const token = params.requestState
  if (typeof token === "string") {
    const state = yield* codec.open(yield* fingerprintOf, token)
    for (const [key, value] of Object.entries(state.answered)) answered.set(key, value)
    for (const key of Object.keys(state.pending)) {
      if (responses[key] !== undefined) answered.set(key, responses[key])
    }
  }
  let counter = 0
  const needed = new Map<string, InputRequired.InputRequest>()
  // Set once the run has to stop for input; the handler is interrupted after `settle`.
  let stopForInput: (() => void) | undefined
  let stopping = false
  const ask: Ask = (askMethod, askParams, ownKey) =>
    Effect.suspend(() => {
      const key = ownKey ?? `${prefixes[askMethod]}-${counter++}`
      if (!answered.has(key) && ownKey !== undefined && responses[ownKey] !== undefined) {
        answered.set(key, responses[ownKey])
      }
      if (answered.has(key)) return Effect.succeed(answered.get(key))
      needed.set(key, { method: askMethod, params: askParams } as InputRequired.InputRequest)
      if (!stopping) {
        stopping = true
        Effect.runFork(
          Effect.andThen(
            settle,
            Effect.sync(() => stopForInput?.())
          )
        )
      }
      return Effect.never
    })
  const outcome = yield* raceInput(
    Effect.map(options.body(ask), (value): Outcome<A> => ({ _tag: "Complete", value })),
    (stop) => {
      stopForInput = stop
    }
  )
  if (outcome._tag === "Complete") return outcome
  const pending: Record<string, string> = {}
  for (const [key, request] of needed) pending[key] = request.method
  const requestState = yield* codec.seal(yield* fingerprintOf, { answered: Object.fromEntries(answered), pending })
  return {
    _tag: "InputRequired",
    result: { resultType: "input_required", inputRequests: Object.fromEntries(needed), requestState }
  } satisfies Outcome<A>
})
