/**
 * What a Peer derives from its options (`Peer.Options`, `Peer.CallOptions`):
 * the deadlines of its outgoing requests, and the clock that times them.
 * Derived once per options object (and clock) and shared by every Peer made
 * with it: a server makes many sessions from one.
 */
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import type * as Peer from "../Peer.ts"
import type { Timing } from "./pending.ts"

const defaultTimeout = Duration.seconds(60)

/** What a Peer derives from its options: the same for every Peer made with the same options and clock. */
export interface Config {
  readonly timeoutMs: number
  readonly defaultTiming: Timing
  /** The Clock of the Peer's context: kept here, a field fewer in each of a server's many idle sessions. */
  readonly clock: Clock.Clock
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

const configOf = (options: Peer.Options | undefined, clock: Clock.Clock): Config => {
  const timeoutMs = Duration.toMillis(Duration.fromInputUnsafe(options?.requestTimeout ?? defaultTimeout))
  return { timeoutMs, defaultTiming: timingOf(timeoutMs, undefined), clock }
}
// One Config per options object (and one for none), for the clock its Peers were last made with: the
// Peers of a server share one clock; another clock (a test's) gets a Config of its own.
const noOptions = {}
const configs = new WeakMap<Peer.Options, Config>()

/** The Config of `options` and `clock`, made once per options object while the clock stays the same. */
export const sharedConfig = (options: Peer.Options | undefined, clock: Clock.Clock): Config => {
  const key = options ?? noOptions
  let config = configs.get(key)
  if (config === undefined || config.clock !== clock) {
    config = configOf(options, clock)
    configs.set(key, config)
  }
  return config
}
