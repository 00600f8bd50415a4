/**
 * The table of outgoing requests awaiting a response. Ids are integers that
 * double as progress tokens, so one map serves both lookups.
 *
 * Response timeouts share one timer per table instead of one per request: it
 * sleeps until the earliest deadline, times out whatever is due then and
 * sleeps again until the next. A request costs no timer of its own, and the
 * deadlines are the same instants a per-request timer would use (they are
 * recomputed at every wake-up, so progress that resets a timeout is seen).
 *
 * The waiting caller is resumed straight from the table (no Deferred): a
 * request settles exactly once, with a response, a timeout, an abandonment
 * by its caller or the session closing, and leaves the table as it does.
 */
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import type * as McpError from "@effect-mcp/protocol/McpError"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as CurrentRequest from "../CurrentRequest.ts"
import type * as PeerError from "../PeerError.ts"
import type * as Transport from "../Transport.ts"
import { IdTable } from "./idTable.ts"

export type Outcome = Effect.Effect<
  unknown,
  McpError.McpError | PeerError.SessionClosed | PeerError.RequestTimeout | Transport.TransportError
>

export interface Pending {
  readonly id: number
  readonly method: string
  readonly relatedRequestId: JsonRpc.RequestId | undefined
  /** The waiting caller; undefined until it waits. */
  resume: ((outcome: Outcome) => void) | undefined
  /** What settled the request before its caller waited. */
  outcome: Outcome | undefined
  onProgress: ((update: CurrentRequest.ProgressUpdate) => void) | undefined
  lastProgress: number
  lastProgressAt: number
  /** A response, timeout or cancellation has decided this request; later answers are dropped. */
  settled: boolean
  /** Its timeouts: shared by every request made with the Peer's defaults. */
  readonly timing: Timing
  /** Clock time the request's deadline started (before sending); NaN until then. */
  start: number
}

export interface Timing {
  /** Idle timeout, milliseconds. */
  readonly idleMs: number
  /** Upper bound progress cannot extend, milliseconds (infinite when none). */
  readonly totalMs: number
  /** Whether progress restarts the idle timeout. */
  readonly resetOnProgress: boolean
}

/** Which bound ran out. */
export type TimeoutReason = "Idle" | "Total"

export interface Timer {
  /** Clock time, milliseconds. */
  readonly now: () => number
  /** Calls `f` after `delayMs` of Clock time; the returned function cancels it. */
  readonly schedule: (delayMs: number, f: () => void) => () => void
  /** What a request whose time ran out settles with (the caller runs it). */
  readonly onTimeout: (entry: Pending, now: number, reason: TimeoutReason) => Outcome
}

const idleDeadlineOf = (entry: Pending): number =>
  (entry.timing.resetOnProgress ? Math.max(entry.start, entry.lastProgressAt) : entry.start) + entry.timing.idleMs

export class PendingTable {
  private nextId = 1
  private readonly entries = new IdTable<Pending>()
  private readonly timer: Timer
  /** When the shared timer fires next (infinite when it is not set). */
  private wakeAt = Number.POSITIVE_INFINITY
  private cancelTimer: (() => void) | undefined = undefined

  /** Told each id as it is taken. */
  private readonly taken: ((id: number) => void) | undefined

  constructor(timer: Timer, firstId = 1, taken?: ((id: number) => void) | undefined) {
    this.timer = timer
    this.nextId = firstId
    this.taken = taken
  }

  open(method: string, relatedRequestId: JsonRpc.RequestId | undefined, timing: Timing): Pending {
    const id = this.nextId++
    this.taken?.(id)
    const entry: Pending = {
      id,
      method,
      relatedRequestId,
      resume: undefined,
      outcome: undefined,
      onProgress: undefined,
      lastProgress: Number.NEGATIVE_INFINITY,
      lastProgressAt: Number.NEGATIVE_INFINITY,
      settled: false,
      timing,
      start: Number.NaN
    }
    this.entries.add(entry)
    return entry
  }

  /**
   * Starts the response timeout of a sent request. When its time has already
   * run out (a zero timeout) it is settled with `onTimeout` at once.
   */
  startTimer(entry: Pending): void {
    if (entry.settled) return
    const now = this.timer.now()
    entry.start = now
    const idle = idleDeadlineOf(entry)
    const deadline = Math.min(idle, now + entry.timing.totalMs)
    if (now >= deadline) {
      this.settle(entry, this.timer.onTimeout(entry, now, deadline === idle ? "Idle" : "Total"))
      return
    }
    if (deadline < this.wakeAt) this.wake(deadline, now)
  }

  private wake(at: number, now: number): void {
    this.cancelTimer?.()
    this.wakeAt = at
    this.cancelTimer = this.timer.schedule(at - now, this.expire)
  }

  private readonly expire = (): void => {
    this.cancelTimer = undefined
    this.wakeAt = Number.POSITIVE_INFINITY
    const now = this.timer.now()
    let next = Number.POSITIVE_INFINITY
    const due: Array<readonly [Pending, TimeoutReason]> = []
    for (const entry of oldestFirst(this.entries.values())) {
      if (entry.settled || Number.isNaN(entry.start)) continue
      const idle = idleDeadlineOf(entry)
      const deadline = Math.min(idle, entry.start + entry.timing.totalMs)
      if (now >= deadline) {
        due.push([entry, deadline === idle ? "Idle" : "Total"])
      } else if (deadline < next) next = deadline
    }
    if (next !== Number.POSITIVE_INFINITY) this.wake(next, now)
    // Settled last: a caller resumed here may send (and time) another request at once.
    for (const [entry, reason] of due) {
      if (!entry.settled) this.settle(entry, this.timer.onTimeout(entry, now, reason))
    }
  }

  /**
   * Decides a request: it leaves the table and its caller resumes with
   * `outcome` (at once, or when it comes to wait). False when it was decided already.
   */
  settle(entry: Pending, outcome: Outcome): boolean {
    if (entry.settled) return false
    entry.settled = true
    this.delete(entry)
    const resume = entry.resume
    if (resume === undefined) entry.outcome = outcome
    else {
      entry.resume = undefined
      resume(outcome)
    }
    return true
  }

  /**
   * Waits for the request's outcome. `abandon` runs if the caller is
   * interrupted while it waits.
   */
  wait(entry: Pending, abandon: Effect.Effect<void>): Outcome {
    return Effect.callback((resume) => {
      const outcome = entry.outcome
      if (outcome !== undefined) return resume(outcome)
      entry.resume = resume
      return abandon
    })
  }

  get(id: JsonRpc.RequestId): Pending | undefined {
    return this.entries.get(id)
  }

  /** The caller gave up on the request: it leaves the table. False when it was decided already. */
  abandon(entry: Pending): boolean {
    if (entry.settled) return false
    entry.settled = true
    entry.resume = undefined
    this.delete(entry)
    return true
  }

  failAll(error: (entry: Pending) => PeerError.SessionClosed): void {
    this.cancelTimer?.()
    this.cancelTimer = undefined
    this.wakeAt = Number.POSITIVE_INFINITY
    const entries = oldestFirst(this.entries.takeAll())
    for (const entry of entries) this.settle(entry, Exit.fail(error(entry)))
  }

  get size(): number {
    return this.entries.size
  }

  private delete(entry: Pending): void {
    this.entries.remove(entry)
  }
}

/** Requests in the order they were made (their ids count up). */
const oldestFirst = (entries: Array<Pending>): Array<Pending> => entries.sort((a, b) => a.id - b.id)
