/**
 * An operation on the cluster's database that a runner repeats for as long as
 * it runs (the change feed's poll, its LISTEN, its writes), through the
 * database's outages: while the database is down every attempt fails, the
 * same way, on every runner. Logged as each failure came, that was several
 * multi-line warnings a second per runner (a 30 s outage: 196 warnings,
 * 205 KB per runner).
 *
 * An `Outage` logs the first failure as one line (the messages of the error
 * and its causes; the whole error, stack included, only at debug level), and
 * after it only a failure saying something else (at most `MAX_LINES` lines
 * per outage); the next success ends the outage with one line saying how long
 * it lasted and how many attempts failed. `retrying` runs an operation until
 * it succeeds, told to the outage, waiting `backoff` between attempts: twice
 * as long each time, up to a cap.
 */
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"

/** Lines one outage logs at most (its first failure, then failures saying something else). */
const MAX_LINES = 3

/** What an outage's lines say. */
export interface Wording {
  /** What failed, the start of a failure's line: `cluster changes not read`. */
  readonly failed: string
  /** What works again, the start of the recovery's line: `cluster changes read again`. */
  readonly recovered: string
  /** One attempt, counted in the recovery's line (`read`: `17 failed reads`). */
  readonly attempt: string
}

/** The messages of an error and of its causes, on one line, each once: what an operator needs of it. */
export const messageOf = (error: unknown): string => {
  const parts: Array<string> = []
  let current: unknown = error
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    const message =
      typeof current === "object" && "message" in current && typeof current.message === "string"
        ? current.message
        : depth === 0
          ? String(current)
          : ""
    const line = message.replace(/\s+/g, " ").trim()
    // A wrapper's message often repeats its cause's (`SQLite execute failed: no such table: t`, then `no such table: t`).
    if (line !== "" && !parts.some((part) => part.includes(line))) parts.push(line)
    current = typeof current === "object" && "cause" in current ? current.cause : undefined
  }
  return parts.length === 0 ? "unknown error" : parts.join(": ")
}

/** The failures of one repeated operation, logged once per outage (see the module's documentation). */
export class Outage {
  private readonly wording: Wording
  /** When the current outage began (Clock time); undefined while the operation works. */
  private since: number | undefined = undefined
  private failures = 0
  /** What this outage's lines said. */
  private readonly said = new Set<string>()

  constructor(wording: Wording) {
    this.wording = wording
  }

  /** Counts a failure; logs it when it begins an outage or says something new. */
  failed(error: unknown): Effect.Effect<void> {
    return Effect.flatMap(Clock.currentTimeMillis, (now) => {
      this.since ??= now
      this.failures++
      const message = messageOf(error)
      const debug = Effect.logDebug(this.wording.failed, error)
      if (this.said.has(message) || this.said.size >= MAX_LINES) return debug
      this.said.add(message)
      const first = this.said.size === 1
      return Effect.andThen(
        debug,
        Effect.logWarning(
          `${this.wording.failed}: ${message}${first ? " (retried; logged again once it recovers)" : ""}`
        )
      )
    })
  }

  /** Ends the outage, if one is under way: one line saying how long it lasted and how many attempts failed. */
  get recovered(): Effect.Effect<void> {
    return Effect.suspend(() => {
      const since = this.since
      if (since === undefined) return Effect.void
      const failures = this.failures
      this.since = undefined
      this.failures = 0
      this.said.clear()
      return Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.logInfo(
          `${this.wording.recovered}: recovered after ${((now - since) / 1000).toFixed(1)} s, ${failures} failed ${this.wording.attempt}${failures === 1 ? "" : "s"}`
        )
      )
    })
  }

  /** Runs `effect` once: a failure is told to the outage and dropped, a success ends the outage. */
  attempt<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<void, never, R> {
    return Effect.matchEffect(effect, {
      onFailure: (error) => this.failed(error),
      onSuccess: () => this.recovered
    })
  }
}

/** Waits `base` after a first failure, then twice as long after each next one, never more than `cap`. */
export const backoff = (base: Duration.Input, cap: Duration.Input): Schedule.Schedule<Duration.Duration> =>
  Schedule.min([Schedule.exponential(base, 2), Schedule.spaced(cap)])

/**
 * Runs `effect` until it succeeds, each failure told to `outage` and retried
 * on `schedule` (a `backoff`, restarted at each call); the success ends the
 * outage.
 */
export const retrying = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  outage: Outage,
  schedule: Schedule.Schedule<Duration.Duration>
): Effect.Effect<A, never, R> =>
  effect.pipe(
    Effect.tapError((error) => outage.failed(error)),
    Effect.retry(schedule),
    // The schedule never ends: a failure never gets past it.
    Effect.orDie,
    Effect.tap(() => outage.recovered)
  )
