/**
 * The Peer's outgoing requests, a base class of `PeerImpl` (whose host is the
 * Peer itself): request ids and the table of pending requests (made when the
 * first request starts), the one timer of their deadlines, a deadline that
 * covers the send, progress, the cancel notice of a request given up, and the
 * responses and progress that settle them.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"
import * as McpMetrics from "../McpMetrics.ts"
import type * as Peer from "../Peer.ts"
import * as PeerError from "../PeerError.ts"
import * as ProgressStream from "../ProgressStream.ts"
import * as Tracing from "../Tracing.ts"
import type * as Transport from "../Transport.ts"
import * as Inbound from "./inbound.ts"
import * as Incoming from "./incomingRequests.ts"
import { type Config, timingOf } from "./peerConfig.ts"
import { type Outcome, type Pending, PendingTable, type TimeoutReason, type Timer } from "./pending.ts"

/** The progress callback of a request that asked for progress only to restart its timeout. */
const ignoreProgress = (): void => {}

/** The requests a Peer sends, and what settles them. */
export abstract class OutgoingRequests extends Incoming.IncomingRequests implements Timer {
  /** What the Peer derived from its options, shared with the Peers made from the same ones. */
  protected abstract readonly config: Config
  /** The error a request started now fails with: the Peer is closed. Undefined while it is open. */
  protected abstract refusal(method: string): PeerError.SessionClosed | undefined
  /** The table of requests sent and not yet settled, made when the first one starts. */
  protected table: PendingTable | undefined = undefined

  // ---- the shared response timer (Timer, for the PendingTable) --------------

  // The clock of its context and what is observed of its requests: kept in its shared config, two fields
  // fewer in each idle session.
  protected get clock(): Clock.Clock {
    return this.config.clock
  }
  get observe(): number {
    return this.config.observe
  }

  now(): number {
    return this.clock.currentTimeMillisUnsafe()
  }

  schedule(delayMs: number, f: () => void): () => void {
    // One Clock timer for every pending request's timeout, run in the Peer's context.
    const fiber = Effect.runForkWith(this.context)(
      Effect.andThen(this.clock.sleep(Duration.millis(delayMs)), Effect.sync(f))
    )
    return () => fiber.interruptUnsafe()
  }

  onTimeout(entry: Pending, now: number, reason: TimeoutReason): Outcome {
    return this.timedOut(entry, now, reason)
  }

  protected get pending(): PendingTable {
    if (this.table === undefined) {
      const dispatcher = this.dispatcher
      const taken = dispatcher.requestIdTaken === undefined ? undefined : (id: number) => dispatcher.requestIdTaken!(id)
      this.table = new PendingTable(this, dispatcher.firstRequestId?.() ?? 1, taken)
    }
    return this.table
  }

  // ---- outgoing requests -------------------------------------------------

  // The other side is told a request was given up, unless its method may not be
  // cancelled (the lifecycle forbids cancelling `initialize`). The caller never waits on
  // the peer for it: a transport that takes the frame as a plain call sends it at once;
  // otherwise it goes on a fiber of its own, bounded by the Peer's request timeout (an
  // HTTP server that stopped answering would hold a POST of the notice forever).
  private cancelNotice(entry: Pending, reason: string): Effect.Effect<void> {
    if (!this.dispatcher.cancellable(entry.method)) return Effect.void
    const frame = JsonRpc.notification("notifications/cancelled", { requestId: entry.id, reason })
    return Effect.suspend(() => {
      if (this.transport.trySend?.(frame, entry.relatedRequestId) === true) return Effect.void
      return Effect.asVoid(
        Effect.forkDetach(
          Effect.ignore(Effect.timeoutOption(this.send(frame, entry.relatedRequestId), this.config.timeoutMs))
        )
      )
    })
  }

  // The waiting caller runs this effect: it tells the other side, then fails.
  private timedOut(entry: Pending, now: number, reason: TimeoutReason) {
    return Effect.andThen(
      this.cancelNotice(entry, "timeout"),
      Effect.fail(
        new PeerError.RequestTimeout({
          method: entry.method,
          requestId: entry.id,
          elapsedMs: now - entry.start,
          reason
        })
      )
    )
  }

  request(method: string, params?: object, options?: Peer.CallOptions): Effect.Effect<unknown, Peer.CallError> {
    return Effect.suspend(() => this.requestNow(method, params, options))
  }

  /**
   * Starts a request now, in the running caller: sends it and returns the
   * wait for its outcome. Over a transport that takes the frame as a plain
   * call, the wait is a single suspension; the caller being interrupted
   * while it waits tells the other side (unless a response or timeout came first).
   */
  requestNow(
    method: string,
    params: object | undefined,
    options: Peer.CallOptions | undefined
  ): Effect.Effect<unknown, Peer.CallError> {
    if (this.observe !== 0) return this.observedRequest(method, params, options)
    return this.start(method, params, options, undefined)
  }

  /** A request under its span and/or timed, as tracing and metrics are on. */
  private observedRequest(
    method: string,
    params: object | undefined,
    options: Peer.CallOptions | undefined
  ): Effect.Effect<unknown, Peer.CallError> {
    const request =
      (this.observe & Incoming.TRACING) !== 0
        ? Tracing.outgoing(method, params, this, (traced, span) =>
            Effect.suspend(() => this.start(method, traced, options, span))
          )
        : Effect.suspend(() => this.start(method, params, options, undefined))
    return (this.observe & Incoming.METRICS) !== 0 ? McpMetrics.timed("client", method, params, request) : request
  }

  private start(
    method: string,
    params: object | undefined,
    options: Peer.CallOptions | undefined,
    span: Tracer.Span | undefined
  ): Effect.Effect<unknown, Peer.CallError> {
    const refused = this.refusal(method)
    if (refused !== undefined) return Effect.fail(refused)
    const pending = this.pending
    const entry = pending.open(
      method,
      options?.relatedRequestId,
      options === undefined ? this.config.defaultTiming : timingOf(this.config.timeoutMs, options)
    )
    options?.onRequestId?.(entry.id)
    if (span !== undefined) Tracing.recordRequestId(span, entry.id)
    // Progress that may restart the timeout must be asked for, so the request carries a token even when
    // nobody reads the updates.
    const onProgress = options?.onProgress ?? (options?.resetTimeoutOnProgress === true ? ignoreProgress : undefined)
    if (onProgress !== undefined) {
      entry.onProgress = onProgress
      params = Inbound.withProgressToken(params, entry.id)
    }
    const frame = JsonRpc.request(entry.id, method, params as JsonRpc.Params | undefined)
    const abandon = Effect.suspend(() => this.abandon(entry))
    if (this.transport.trySend?.(frame, options?.relatedRequestId) === true) {
      // Sent as a plain call: no time passed since the request started.
      pending.startTimer(entry)
      return pending.wait(entry, abandon)
    }
    return this.sendAndWait(entry, frame, options?.relatedRequestId, abandon)
  }

  /**
   * A request whose send may take time (an HTTP POST, a write to a child that
   * stopped reading): the deadline starts before the first byte is written and
   * covers the send. The send runs on a fiber of its own so that the caller
   * leaves when the request settles (timed out, the session closed) or is
   * interrupted, whatever the send is waiting on; a send that fails settles
   * the request with its error.
   */
  private sendAndWait(
    entry: Pending,
    frame: Transport.Outgoing,
    relatedRequestId: JsonRpc.RequestId | undefined,
    abandon: Effect.Effect<void>
  ): Effect.Effect<unknown, Peer.CallError> {
    const pending = this.pending
    pending.startTimer(entry)
    if (entry.settled) return pending.wait(entry, abandon)
    const sending = Effect.catch(this.send(frame, relatedRequestId), (error) =>
      Effect.sync(() => {
        pending.settle(entry, Effect.fail(error))
      })
    )
    // Started at once, in this turn: the frame goes out as early as a send in the caller would.
    return Effect.flatMap(Effect.forkDetach(sending, { startImmediately: true }), (fiber) =>
      Effect.onExit(
        pending.wait(
          entry,
          Effect.andThen(
            Effect.sync(() => fiber.interruptUnsafe()),
            abandon
          )
        ),
        // A request that ended without its answer (timed out, the session closed) stops its send.
        (exit) => (Exit.isFailure(exit) ? Effect.sync(() => fiber.interruptUnsafe()) : Effect.void)
      )
    )
  }

  /** The caller gave up: the request leaves the table, and the other side is told unless it was decided. */
  private abandon(entry: Pending): Effect.Effect<void> {
    return this.pending.abandon(entry) ? this.cancelNotice(entry, "request interrupted by caller") : Effect.void
  }

  requestWithProgress(
    method: string,
    params?: object,
    options?: Omit<Peer.CallOptions, "onProgress">
  ): Stream.Stream<Peer.ProgressEvent, Peer.CallError> {
    return ProgressStream.make((onProgress) => this.request(method, params, { ...options, onProgress }))
  }

  ping(options?: Peer.CallOptions): Effect.Effect<void, Peer.CallError> {
    return Effect.asVoid(this.request("ping", undefined, options))
  }

  // ---- what settles them ----------------------------------------------------

  protected onResponse(response: JsonRpc.Response): undefined {
    const table = this.table
    const entry = response.id === null ? undefined : table?.get(response.id)
    // A response for a request we gave up on (cancelled, timed out) is dropped.
    if (entry === undefined || entry.settled) return undefined
    table!.settle(
      entry,
      JsonRpc.isSuccess(response) ? Exit.succeed(response.result) : Exit.fail(McpError.fromErrorObject(response.error))
    )
    return undefined
  }

  protected onProgress(params: unknown): Effect.Effect<void> | undefined {
    const parsed = Inbound.progressOf(params)
    if (parsed === undefined) return undefined
    const entry = this.table?.get(parsed.token)
    if (entry === undefined || entry.settled || entry.onProgress === undefined) return undefined
    if (!(parsed.update.progress > entry.lastProgress)) {
      return Effect.logDebug(`dropped non-increasing progress ${parsed.update.progress} for request ${entry.id}`)
    }
    // Synchronous, so an update is delivered before a response in the same chunk.
    entry.lastProgress = parsed.update.progress
    entry.lastProgressAt = this.clock.currentTimeMillisUnsafe()
    entry.onProgress(parsed.update)
    return undefined
  }
}
