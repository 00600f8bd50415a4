/**
 * A circuit breaker per upstream: after `failures` failed requests in a row
 * an upstream's circuit opens, and every request for it is refused at once
 * (`Code.CircuitOpen`) instead of waiting on an upstream that is down or
 * overwhelmed. Once the open time has passed, one request goes through as a
 * trial (the others are still refused while it runs): if it succeeds the
 * circuit closes; if it fails the circuit opens again, for the schedule's next
 * delay.
 *
 * How long it stays open is an effect `Schedule`, stepped once per opening in
 * a row (`reset`, default: 1 second doubling up to 1 minute); a schedule that
 * ends keeps its last delay, and the schedule starts over once the circuit
 * closes. Time is the Clock's, so the TestClock drives it.
 *
 * What counts as a failure (`isFailure`, default `isUpstreamFailure`): the
 * upstream not connected, a request that timed out, a lost connection, an
 * upstream answering an internal error. An upstream that answers anything
 * else (a tool error, invalid params) is up, and a cancelled request says
 * nothing about it; nor does a request its caller made fail (`RunOptions.excused`).
 */
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Pull from "effect/Pull"
import * as Schedule from "effect/Schedule"

/** Options of `make`. */
export interface Options {
  /** Failed requests in a row that open the circuit. Default 5. */
  readonly failures?: number | undefined
  /** How long the circuit stays open, one delay per opening in a row. Default 1 second doubling, at most 1 minute. */
  readonly reset?: Schedule.Schedule<unknown, unknown> | undefined
  /** Which failures of a request count against its upstream. Default `isUpstreamFailure`. */
  readonly isFailure?: ((error: unknown) => boolean) | undefined
}

/**
 * The JSON-RPC code of a request refused by an open circuit (data:
 * `{ upstream, retryAfterMs }`), in the range JSON-RPC leaves to servers.
 */
export const Code = { CircuitOpen: -32030 } as const

/** Options of one request through the circuit. */
export interface RunOptions {
  /**
   * Whether the request's failure, whatever it is, is none of the upstream's: one its caller caused (the gateway
   * could not ask its client what the upstream asked). Asked once the request ended.
   */
  readonly excused?: (() => boolean) | undefined
}

/** A circuit's state: `Closed` (with the failures in a row so far), `Open` until a time, or `HalfOpen` (a trial may run). */
export type State =
  | { readonly _tag: "Closed"; readonly failures: number }
  | { readonly _tag: "Open"; readonly until: number }
  | { readonly _tag: "HalfOpen" }

/** The breakers of a gateway, one circuit per upstream. */
export interface CircuitBreaker {
  /**
   * Runs `effect`, a request for `upstream`, through its circuit. A failure `excused` says is not the upstream's
   * (asked once the request ended) counts as a cancelled request does: for nothing.
   */
  readonly run: <A, E, R>(
    upstream: string,
    effect: Effect.Effect<A, E, R>,
    options?: RunOptions
  ) => Effect.Effect<A, E | McpError.JsonRpcError, R>
  /** The circuit's state now. */
  readonly state: (upstream: string) => State
}

const upstreamCodes: ReadonlySet<number> = new Set([McpError.Code.InternalError, -32001])

/**
 * The default `isFailure`: the host's `Unavailable`, a request timeout, a
 * closed session or a transport error, or the upstream answering an
 * internal error (-32603) or a timeout (-32001).
 */
export const isUpstreamFailure = (error: unknown): boolean => {
  if (McpError.isMcpError(error)) return upstreamCodes.has(error.code)
  const e = error as { readonly _tag?: unknown; readonly reason?: unknown } | undefined
  switch (e?._tag) {
    case "HostError":
      return e.reason === "Unavailable"
    case "RequestTimeout":
    case "SessionClosed":
    case "TransportError":
      return true
    default:
      return false
  }
}

const defaultReset = Schedule.min([Schedule.exponential("1 second"), Schedule.spaced("1 minute")])

type Step = (now: number, input: unknown) => Pull.Pull<[unknown, Duration.Duration], unknown, unknown>

interface Circuit {
  state: "Closed" | "Open" | "HalfOpen"
  failures: number
  until: number
  /** The trial of a half-open circuit is running. */
  trial: boolean
  /** The reset schedule, stepped once per opening in a row (none while closed). */
  step: Step | undefined
  lastDelayMs: number
}

const refused = (upstream: string, retryAfterMs: number) =>
  new McpError.JsonRpcError({
    code: Code.CircuitOpen,
    message: `Upstream ${JSON.stringify(upstream)} is unavailable (circuit open)`,
    data: { upstream, retryAfterMs }
  })

/** The breakers: every circuit closed. */
export const make = (options: Options = {}): CircuitBreaker => {
  const threshold = Math.max(1, options.failures ?? 5)
  const reset = options.reset ?? defaultReset
  const isFailure = options.isFailure ?? isUpstreamFailure
  const circuits = new Map<string, Circuit>()
  const circuitOf = (upstream: string): Circuit => {
    let c = circuits.get(upstream)
    if (c === undefined) {
      c = { state: "Closed", failures: 0, until: 0, trial: false, step: undefined, lastDelayMs: 0 }
      circuits.set(upstream, c)
    }
    return c
  }
  const open = (upstream: string, c: Circuit, error: unknown) =>
    Effect.gen(function* () {
      if (c.step === undefined) c.step = (yield* Schedule.toStep(reset)) as Step
      const now = yield* Clock.currentTimeMillis
      const delay = yield* c.step(now, error).pipe(
        Effect.map(([, d]) => Duration.toMillis(d)),
        Pull.catchDone(() => Effect.succeed(c.lastDelayMs)),
        Effect.catchCause(() => Effect.succeed(c.lastDelayMs))
      )
      c.lastDelayMs = delay
      c.state = "Open"
      c.trial = false
      c.until = now + delay
      yield* Effect.logWarning("gateway circuit opened").pipe(
        Effect.annotateLogs({ upstream, openForMs: delay, failures: c.failures })
      )
    })
  const close = (upstream: string, c: Circuit) =>
    Effect.suspend(() => {
      const wasOpen = c.state !== "Closed"
      c.state = "Closed"
      c.failures = 0
      c.trial = false
      c.step = undefined
      return wasOpen ? Effect.logInfo("gateway circuit closed").pipe(Effect.annotateLogs({ upstream })) : Effect.void
    })
  const settle = (
    upstream: string,
    c: Circuit,
    trial: boolean,
    exit: Exit.Exit<unknown, unknown>,
    excused: (() => boolean) | undefined
  ) =>
    Effect.suspend(() => {
      if (trial) c.trial = false
      // A request started before the circuit opened says nothing of the upstream now: only the trial decides.
      else if (c.state !== "Closed") return Effect.void
      // Interrupted (the caller cancelled), or failed for its caller's sake: the upstream's health is unknown;
      // the next request may be the trial.
      if (Exit.isFailure(exit) && excused?.() === true) return Effect.void
      const failure = Exit.isFailure(exit) ? exit.cause.reasons.find(Cause.isFailReason) : undefined
      const counted =
        Exit.isFailure(exit) && (failure !== undefined ? isFailure(failure.error) : Cause.hasDies(exit.cause))
      if (Exit.isFailure(exit) && failure === undefined && !counted) return Effect.void
      if (!counted) {
        if (trial) return close(upstream, c)
        c.failures = 0
        return Effect.void
      }
      if (trial) return open(upstream, c, failure?.error)
      c.failures++
      return c.failures >= threshold ? open(upstream, c, failure?.error) : Effect.void
    })
  return {
    state: (upstream) => {
      const c = circuitOf(upstream)
      return c.state === "Closed"
        ? { _tag: "Closed", failures: c.failures }
        : c.state === "Open"
          ? { _tag: "Open", until: c.until }
          : { _tag: "HalfOpen" }
    },
    run: <A, E, R>(upstream: string, effect: Effect.Effect<A, E, R>, runOptions?: RunOptions) =>
      Effect.clockWith((clock): Effect.Effect<A, E | McpError.JsonRpcError, R> => {
        const c = circuitOf(upstream)
        const now = clock.currentTimeMillisUnsafe()
        if (c.state === "Open") {
          if (now < c.until) return Effect.fail(refused(upstream, c.until - now))
          c.state = "HalfOpen"
        }
        let trial = false
        if (c.state === "HalfOpen") {
          if (c.trial) return Effect.fail(refused(upstream, 0))
          c.trial = trial = true
        }
        return Effect.onExit(effect, (exit) => settle(upstream, c, trial, exit, runOptions?.excused))
      })
  }
}
