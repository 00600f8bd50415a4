/**
 * The table of outgoing requests awaiting a response. Ids are integers that
 * double as progress tokens, so one map serves both lookups.
 *
 * Response timeouts share one timer per table instead of one per request: it
 * sleeps until the earliest deadline, times out whatever is due then and
 * sleeps again until the next. A request costs no timer of its own, and the
 * deadlines are the same instants a per-request timer would use (they are
 * recomputed at every wake-up, so progress that resets a timeout is seen).
 */
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import type * as McpError from "@effect-mcp/protocol/McpError"
import * as Deferred from "effect/Deferred"
import * as Exit from "effect/Exit"
import type * as CurrentRequest from "../CurrentRequest.ts"
import type * as PeerError from "../PeerError.ts"

export interface Pending {
  readonly id: number
  readonly method: string
  readonly relatedRequestId: JsonRpc.RequestId | undefined
  readonly deferred: Deferred.Deferred<unknown, McpError.McpError | PeerError.SessionClosed | PeerError.RequestTimeout>
  onProgress: ((update: CurrentRequest.ProgressUpdate) => void) | undefined
  lastProgress: number
  lastProgressAt: number
  /** A response, timeout or cancellation has decided this request; later answers are dropped. */
  settled: boolean
  /** Idle timeout, milliseconds. */
  readonly idleMs: number
  /** Upper bound progress cannot extend, milliseconds (infinite when none). */
  readonly totalMs: number
  /** Whether progress restarts the idle timeout. */
  readonly resetOnProgress: boolean
  /** Clock time the wait for the response started (after sending); NaN until then. */
  start: number
}

export interface Timing {
  readonly idleMs: number
  readonly totalMs: number
  readonly resetOnProgress: boolean
}

/** Which bound ran out. */
export type TimeoutReason = "Idle" | "Total"

export interface Timer {
  /** Clock time, milliseconds. */
  readonly now: () => number
  /** Calls `f` after `delayMs` of Clock time; the returned function cancels it. */
  readonly schedule: (delayMs: number, f: () => void) => () => void
  /** Settles a request whose time ran out (the table has marked it settled). */
  readonly onTimeout: (entry: Pending, now: number, reason: TimeoutReason) => void
}

const idleDeadlineOf = (entry: Pending): number =>
  (entry.resetOnProgress ? Math.max(entry.start, entry.lastProgressAt) : entry.start) + entry.idleMs

export class PendingTable {
  private nextId = 1
  private readonly entries = new Map<JsonRpc.RequestId, Pending>()
  private readonly timer: Timer
  /** When the shared timer fires next (infinite when it is not set). */
  private wakeAt = Number.POSITIVE_INFINITY
  private cancelTimer: (() => void) | undefined = undefined

  constructor(timer: Timer) {
    this.timer = timer
  }

  open(method: string, relatedRequestId: JsonRpc.RequestId | undefined, timing: Timing): Pending {
    const entry: Pending = {
      id: this.nextId++,
      method,
      relatedRequestId,
      deferred: Deferred.makeUnsafe(),
      onProgress: undefined,
      lastProgress: Number.NEGATIVE_INFINITY,
      lastProgressAt: Number.NEGATIVE_INFINITY,
      settled: false,
      idleMs: timing.idleMs,
      totalMs: timing.totalMs,
      resetOnProgress: timing.resetOnProgress,
      start: Number.NaN
    }
    this.entries.set(entry.id, entry)
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
    const deadline = Math.min(idle, now + entry.totalMs)
    if (now >= deadline) {
      entry.settled = true
      this.timer.onTimeout(entry, now, deadline === idle ? "Idle" : "Total")
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
    for (const entry of this.entries.values()) {
      if (entry.settled || Number.isNaN(entry.start)) continue
      const idle = idleDeadlineOf(entry)
      const deadline = Math.min(idle, entry.start + entry.totalMs)
      if (now >= deadline) {
        entry.settled = true
        due.push([entry, deadline === idle ? "Idle" : "Total"])
      } else if (deadline < next) next = deadline
    }
    if (next !== Number.POSITIVE_INFINITY) this.wake(next, now)
    // Settled last: a caller resumed here may send (and time) another request at once.
    for (const [entry, reason] of due) this.timer.onTimeout(entry, now, reason)
  }

  get(id: JsonRpc.RequestId): Pending | undefined {
    return this.entries.get(id)
  }

  remove(entry: Pending): void {
    this.entries.delete(entry.id)
  }

  failAll(error: (entry: Pending) => PeerError.SessionClosed): void {
    this.cancelTimer?.()
    this.cancelTimer = undefined
    this.wakeAt = Number.POSITIVE_INFINITY
    for (const entry of this.entries.values()) {
      if (!entry.settled) {
        entry.settled = true
        Deferred.doneUnsafe(entry.deferred, Exit.fail(error(entry)))
      }
    }
    this.entries.clear()
  }

  get size(): number {
    return this.entries.size
  }
}
