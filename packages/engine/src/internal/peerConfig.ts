/**
 * What a Peer derives from its options (`Peer.Options`, `Peer.CallOptions`):
 * the deadlines of its outgoing requests; and what it takes from its context:
 * the clock that times them and what is observed of requests. Derived once
 * per options object (and clock and observation) and shared by every Peer
 * made with it: a server makes many sessions from one.
 */
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import type * as Peer from "../Peer.ts"
import type { Timing } from "./pending.ts"

/** The timeout of an outgoing request when the Peer's options do not say (`Peer.defaultRequestTimeout`). */
export const defaultRequestTimeout = Duration.seconds(60)

/** What a Peer derives from its options: the same for every Peer made with the same options and clock. */
export interface Config {
  readonly timeoutMs: number
  readonly defaultTiming: Timing
  /** The Clock of the Peer's context: kept here, a field fewer in each of a server's many idle sessions. */
  readonly clock: Clock.Clock
  /** What is observed of requests (`IncomingRequests.Host.observe`): kept here for the same reason. */
  readonly observe: number
}

/** The deadlines of one request: the call's own, else the Peer's `timeoutMs`. */
export const timingOf = (timeoutMs: number, options: Peer.CallOptions | undefined): Timing => ({
  idleMs: options?.timeout === undefined ? timeoutMs : Duration.toMillis(Duration.fromInputUnsafe(options.timeout)),
  totalMs:
    options?.maxTotalTimeout === undefined
      ? Number.POSITIVE_INFINITY
      : Duration.toMillis(Duration.fromInputUnsafe(options.maxTotalTimeout)),
  resetOnProgress: options?.resetTimeoutOnProgress === true
})

const configOf = (options: Peer.Options | undefined, clock: Clock.Clock, observe: number): Config => {
  const timeoutMs = Duration.toMillis(Duration.fromInputUnsafe(options?.requestTimeout ?? defaultRequestTimeout))
  return { timeoutMs, defaultTiming: timingOf(timeoutMs, undefined), clock, observe }
}
// One Config per options object (and one for none), for the clock and observation its Peers were last made
// with: the Peers of a server share them; another clock (a test's) gets a Config of its own.
const noOptions = {}
const configs = new WeakMap<Peer.Options, Config>()

/** The Config of `options`, `clock` and `observe`, made once per options object while those stay the same. */
export const sharedConfig = (options: Peer.Options | undefined, clock: Clock.Clock, observe: number): Config => {
  const key = options ?? noOptions
  let config = configs.get(key)
  if (config === undefined || config.clock !== clock || config.observe !== observe) {
    config = configOf(options, clock, observe)
    configs.set(key, config)
  }
  return config
}
