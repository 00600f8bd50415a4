/**
 * What a Peer derives from its options (`Peer.Options`, `Peer.CallOptions`):
 * the deadlines of its outgoing requests. Derived once per options object and
 * shared by every Peer made with it: a server makes many sessions from one.
 */
import * as Duration from "effect/Duration"
import type * as Peer from "../Peer.ts"
import type { Timing } from "./pending.ts"

const defaultTimeout = Duration.seconds(60)

/** What a Peer derives from its options: the same for every Peer made with the same options. */
export interface Config {
  readonly timeoutMs: number
  readonly defaultTiming: Timing
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

const configOf = (options: Peer.Options | undefined): Config => {
  const timeoutMs = Duration.toMillis(Duration.fromInputUnsafe(options?.requestTimeout ?? defaultTimeout))
  return { timeoutMs, defaultTiming: timingOf(timeoutMs, undefined) }
}
const defaultConfig = configOf(undefined)
const configs = new WeakMap<Peer.Options, Config>()

/** The Config of `options`, made once per options object. */
export const sharedConfig = (options: Peer.Options | undefined): Config => {
  if (options === undefined) return defaultConfig
  let config = configs.get(options)
  if (config === undefined) {
    config = configOf(options)
    configs.set(options, config)
  }
  return config
}
