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
 *
 * A handler may instead run its own rounds (`ServerRequest.requireInput`, a
 * proxy passing another server's rounds on): its round's input requests go
 * out as given, the state it carries is sealed with the rest, and on the
 * retry it reads the client's answers and that state (`retry`) rather than
 * being answered ask by ask.
 */
import type * as InputRequired from "@effect-mcp/protocol/InputRequired"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Baggage from "@effect-mcp/engine/Baggage"
import * as Tracing from "@effect-mcp/engine/Tracing"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Predicate from "effect/Predicate"
import * as Tracer from "effect/Tracer"
import type * as ServerRequest from "../ServerRequest.ts"
import type { AskMethod } from "../ServerRequest.ts"
import { echo } from "./params.ts"
import type * as RequestState from "./requestState.ts"

type Obj = { readonly [key: string]: unknown }

export type Outcome<A> =
  | { readonly _tag: "Complete"; readonly value: A }
  | { readonly _tag: "InputRequired"; readonly result: InputRequired.InputRequiredResult }

export type Ask = (method: AskMethod, params: Obj, key?: string) => Effect.Effect<unknown>

/** A handler's own rounds (`ServerRequest.retry` and `requireInput`). */
export interface Own {
  readonly retry: ServerRequest.Retry | undefined
  readonly require: (inputRequests: InputRequired.InputRequests, state: string | undefined) => Effect.Effect<never>
}

const prefixes: { readonly [M in AskMethod]: string } = {
  "sampling/createMessage": "sampling",
  "elicitation/create": "elicitation",
  "roots/list": "roots"
}

// Lets asks made concurrently with the first unanswered one register before the run stops.
const settle = Effect.repeat(Effect.yieldNow, { times: 8 })

export interface Options<A, E, R> {
  readonly codec: RequestState.Codec
  readonly method: string
  readonly params: Obj
  /** The handler, given the ask it must use (and its own rounds); it ends in a complete outcome. */
  readonly body: (ask: Ask, own: Own) => Effect.Effect<Outcome<A>, E, R>
}

/**
 * One request's rounds: what it was answered so far, what it still needs,
 * and the handler's fiber. An object per request with its behaviour on the
 * prototype and no generator: most requests never ask, and for them the
 * rounds cost little more than the handler's fiber.
 */
class Rounds<A, E, R> {
  readonly options: Options<A, E, R>
  readonly responses: Obj
  readonly answered = new Map<string, unknown>()
  readonly needed = new Map<string, InputRequired.InputRequest>()
  // Keyed (an HMAC): computed only when a requestState is opened or sealed,
  // so a request that never asks for input costs no signature.
  fingerprint: string | undefined = undefined
  counter = 0
  // Set once the run has to stop for input; the handler is interrupted after `settle`.
  stopForInput: (() => void) | undefined = undefined
  stopping = false
  // A handler running its own rounds: the state its last round carried, and the one its next round carries.
  carried: string | undefined = undefined
  carrying: string | undefined = undefined

  constructor(options: Options<A, E, R>, responses: Obj) {
    this.options = options
    this.responses = responses
  }

  fingerprintOf(): Effect.Effect<string> {
    return this.fingerprint === undefined
      ? Effect.map(this.options.codec.fingerprint(this.options.method, this.options.params), (f) => {
          this.fingerprint = f
          return f
        })
      : Effect.succeed(this.fingerprint)
  }

  /** Takes in the answers of earlier rounds carried by `token`. */
  open(token: string): Effect.Effect<void, McpError.InvalidParams> {
    return Effect.flatMap(this.fingerprintOf(), (fingerprint) =>
      Effect.map(this.options.codec.open(fingerprint, token), (state) => {
        for (const [key, value] of Object.entries(state.answered)) this.answered.set(key, value)
        this.carried = state.own
        // The answers to a round the handler ended itself are its own to read (`retry`), not the server's asks'.
        if (state.own !== undefined) return
        for (const key of Object.keys(state.pending)) {
          if (this.responses[key] !== undefined) this.answered.set(key, this.responses[key])
        }
      })
    )
  }

  readonly ask: Ask = (askMethod, askParams, ownKey) =>
    Effect.withFiber((fiber) => {
      const key = ownKey ?? `${prefixes[askMethod]}-${this.counter++}`
      if (!this.answered.has(key) && ownKey !== undefined && this.responses[ownKey] !== undefined) {
        this.answered.set(key, this.responses[ownKey])
      }
      if (this.answered.has(key)) return Effect.succeed(this.answered.get(key))
      // The request the client answers continues the trace of the handler that asked (as a request would).
      const span = Tracing.enabled(fiber.context) ? Context.getOrUndefined(fiber.context, Tracer.ParentSpan) : undefined
      const params =
        span === undefined ? askParams : Tracing.withTraceContext(askParams, span, fiber.getRef(Baggage.Current))
      this.needed.set(key, { method: askMethod, params } as InputRequired.InputRequest)
      return this.stop(fiber)
    })

  /**
   * Stops the run for input, once: after `settle`, so that asks made at the
   * same time join the round. The settling fiber runs with the asking fiber's
   * context (its scheduler, clock and tracer), not effect's default runtime:
   * under a TestClock its turns are the test's, as the rest of the request's.
   */
  stop(fiber: Fiber.Fiber<unknown, unknown>): Effect.Effect<never> {
    if (!this.stopping) {
      this.stopping = true
      Effect.runForkWith(fiber.context)(
        Effect.andThen(
          settle,
          Effect.sync(() => this.stopForInput?.())
        )
      )
    }
    return Effect.never
  }

  /** The handler's own rounds: the retry it continues from, and the round it ends with. */
  own(): Own {
    const responses = this.responses as InputRequired.InputResponses
    const retry =
      this.carried === undefined && Object.keys(responses).length === 0
        ? undefined
        : { inputResponses: responses, state: this.carried }
    return {
      retry,
      require: (inputRequests, state) =>
        Effect.withFiber((fiber) => {
          for (const [key, request] of Object.entries(inputRequests)) this.needed.set(key, request)
          this.carrying = state
          return this.stop(fiber)
        })
    }
  }

  /** The `input_required` outcome: the asks still unanswered and the state of this round. */
  inputRequired(): Effect.Effect<Outcome<A>> {
    const pending: Record<string, string> = {}
    for (const [key, request] of this.needed) pending[key] = request.method
    return Effect.flatMap(this.fingerprintOf(), (fingerprint) =>
      Effect.map(
        this.options.codec.seal(
          fingerprint,
          this.carrying === undefined
            ? { answered: Object.fromEntries(this.answered), pending }
            : { answered: Object.fromEntries(this.answered), pending, own: this.carrying }
        ),
        (requestState): Outcome<A> => ({
          _tag: "InputRequired",
          result: { resultType: "input_required", inputRequests: Object.fromEntries(this.needed), requestState }
        })
      )
    )
  }

  /**
   * Runs the handler in a fiber of its own (so an ask can stop it) and waits
   * for it, unless an ask stops it first: then the handler is interrupted and
   * the run ends with `InputRequired`. One fiber per request rather than a
   * race of two; a handler that finishes synchronously is done before
   * anything waits.
   */
  start(parent: Fiber.Fiber<unknown, unknown>): Effect.Effect<Outcome<A>, E, R> {
    const fiber = Effect.runForkWith(parent.context as Context.Context<R>)(this.options.body(this.ask, this.own()))
    const done = fiber.pollUnsafe()
    if (done !== undefined) return done
    return Effect.callback<Outcome<A>, E>((resume) => {
      let settled = false
      fiber.addObserver((exit) => {
        if (settled) return
        settled = true
        resume(exit)
      })
      this.stopForInput = () => {
        if (settled) return
        settled = true
        resume(
          Effect.andThen(
            Fiber.interrupt(fiber),
            Effect.suspend(() => this.inputRequired())
          )
        )
      }
      // The request was cancelled: its handler stops too, finalizers included.
      return Fiber.interrupt(fiber)
    })
  }
}

/** Runs a retryable request's handler from the fiber serving the request (`parent`, with the handler's context). */
export const run = <A, E, R>(
  options: Options<A, E, R>,
  parent: Fiber.Fiber<unknown, unknown>
): Effect.Effect<Outcome<A>, E | McpError.InvalidParams, R> => {
  const params = options.params
  const responses = Predicate.isObject(params.inputResponses) ? (params.inputResponses as Obj) : {}
  // Every answer is a result object; anything else is a malformed request, not a missing answer.
  for (const [key, value] of Object.entries(responses)) {
    if (!Predicate.isObject(value) || Array.isArray(value)) {
      return Effect.fail(
        new McpError.InvalidParams({
          // The key is the client's: quoted once, cut, so a huge one does not come back.
          message: `Invalid params: inputResponses.${echo(key)} must be a result object`
        })
      )
    }
  }
  const rounds = new Rounds(options, responses)
  const token = params.requestState
  if (typeof token !== "string") return rounds.start(parent)
  return Effect.andThen(
    rounds.open(token),
    Effect.suspend(() => rounds.start(parent))
  )
}
