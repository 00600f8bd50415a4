/**
 * The Peer's pushed input: frames a transport hands over instead of being
 * read through `incoming`. Two ways in share one state: `offer` (the
 * Transport.Receiver contract, for transports that run effects, such as the
 * HTTP session) and `push` (synchronous, for in-process transports that call
 * it from their own delivery turn). Frames are handled in order; one whose
 * handling needs a fiber (a notification handler, a batch) holds the frames
 * behind it until it completes.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Context from "effect/Context"
import type * as PeerError from "../PeerError.ts"
import type * as Transport from "../Transport.ts"

export type ClosedExit = Exit.Exit<void, Transport.TransportError | PeerError.KeepaliveFailed>

/** What the input needs from the Peer it feeds. */
export interface Host {
  readonly context: Context.Context<never>
  /** Handles one frame: synchronously, or by returning the effect that handles it. */
  readonly onFrame: (frame: Transport.Incoming) => Effect.Effect<void> | undefined
  /** Every frame offered before the end was handled: the input is over, so is the Peer. */
  readonly inputFinished: (exit: ClosedExit) => void
}

/** Where pushed frames come from: it stops pushing when `push` says so, until `resume`. */
export interface Source {
  readonly resume: () => void
}

/** Frames offered while one is being handled wait here, up to this many; then `offer` suspends. */
const pushCapacity = 256
const accepted: Effect.Effect<boolean> = Exit.succeed(true)
const refused: Effect.Effect<boolean> = Exit.succeed(false)

interface Writer {
  readonly frame: Transport.Incoming
  readonly resume: (effect: Effect.Effect<boolean>) => void
}

export class PeerInput implements Transport.Receiver {
  private readonly host: Host
  // The backlog's drainer (or the fiber handling a pushed frame) exists only
  // while there are frames, so an idle session has none.
  private busy = false
  private drainer: Fiber.Fiber<void> | undefined = undefined
  private backlog: Array<Transport.Incoming> | undefined = undefined
  private writers: Array<Writer> | undefined = undefined
  private inputEnd: ClosedExit | undefined = undefined
  private drainedSignal: Deferred.Deferred<void> | undefined = undefined
  private source: Source | undefined = undefined
  // The Peer closed, or the input ended and was handled: pushed frames are dropped.
  private stopped = false

  constructor(host: Host) {
    this.host = host
  }

  // ---- synchronous push (in-process transports) -------------------------------

  /** Makes `source` the one pushing frames: it is resumed after `push` asked it to wait. */
  bind(source: Source): void {
    this.source = source
  }

  /**
   * Handles one frame now. False when its handling went on in a fiber: the
   * source must push nothing more until it is resumed. Frames pushed after
   * the Peer closed are dropped.
   */
  push(frame: Transport.Incoming): boolean {
    if (this.stopped) return true
    const effect = this.host.onFrame(frame)
    if (effect === undefined) return true
    const fiber = Effect.runForkWith(this.host.context)(effect)
    if (fiber.pollUnsafe() !== undefined) return true
    this.busy = true
    this.drainer = fiber
    fiber.addObserver(() => {
      if (this.drainer !== fiber) return
      this.busy = false
      this.drainer = undefined
      if (this.inputEnd !== undefined) this.finishInput()
      else this.source?.resume()
    })
    return false
  }

  // ---- Transport.Receiver ---------------------------------------------------

  offer(frame: Transport.Incoming): Effect.Effect<boolean> {
    return Effect.suspend(() => {
      if (this.inputEnd !== undefined) return refused
      if (this.backlog === undefined) this.backlog = []
      if ((this.writers === undefined || this.writers.length === 0) && this.backlog.length < pushCapacity) {
        this.backlog.push(frame)
        if (!this.busy) this.startDrainer()
        return accepted
      }
      return Effect.callback<boolean>((resume) => {
        if (this.inputEnd !== undefined) return resume(refused)
        const writer: Writer = { frame, resume }
        if (this.writers === undefined) this.writers = []
        const writers = this.writers
        writers.push(writer)
        return Effect.sync(() => {
          const index = writers.indexOf(writer)
          if (index >= 0) writers.splice(index, 1)
        })
      })
    })
  }

  end(error?: Transport.TransportError): void {
    if (this.inputEnd !== undefined) return
    this.inputEnd = error === undefined ? Exit.void : Exit.fail(error)
    this.refuseWriters()
    if (!this.busy) this.finishInput()
  }

  get drained(): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (this.inputEnd !== undefined && !this.busy) return Effect.void
      if (this.drainedSignal === undefined) this.drainedSignal = Deferred.makeUnsafe()
      return Deferred.await(this.drainedSignal)
    })
  }

  /**
   * Starts the fiber that handles the backlog. It starts a tick later, as a
   * waiting reader would resume: the offering exchange finishes what it does
   * around `offer` (opening its reply stream) before its frame is handled.
   */
  private startDrainer(): void {
    this.busy = true
    const fiber = Effect.runForkWith(this.host.context)(
      Effect.andThen(
        Effect.yieldNow,
        Effect.suspend(() => this.drainBacklog())
      )
    )
    // A drainer that finished synchronously has cleared `busy` already.
    if (this.busy) this.drainer = fiber
  }

  private drainBacklog(): Effect.Effect<void> {
    for (;;) {
      const backlog = this.backlog
      if (backlog === undefined || backlog.length === 0) break
      const frame = backlog.shift()!
      const writer = this.writers?.shift()
      if (writer !== undefined) {
        backlog.push(writer.frame)
        writer.resume(accepted)
      }
      const effect = this.host.onFrame(frame)
      if (effect !== undefined)
        return Effect.andThen(
          effect,
          Effect.suspend(() => this.drainBacklog())
        )
    }
    this.busy = false
    this.drainer = undefined
    this.backlog = undefined
    if (this.inputEnd !== undefined) this.finishInput()
    return Effect.void
  }

  private refuseWriters(): void {
    const writers = this.writers
    if (writers === undefined) return
    this.writers = undefined
    for (const writer of writers) writer.resume(refused)
  }

  private finishInput(): void {
    const exit = this.inputEnd!
    this.stopped = true
    if (this.drainedSignal !== undefined) Deferred.doneUnsafe(this.drainedSignal, Exit.void)
    this.host.inputFinished(exit)
  }

  // ---- the Peer closing ------------------------------------------------------

  /**
   * Stops the input as the Peer closes: later frames are refused (or
   * dropped), waiting writers are refused, and `drained` completes. Returns
   * the fiber handling a frame, for the Peer to interrupt with its handlers.
   */
  stop(exit: ClosedExit): Fiber.Fiber<void> | undefined {
    this.stopped = true
    if (this.inputEnd === undefined) {
      this.inputEnd = exit
      this.refuseWriters()
    }
    const drainer = this.drainer
    this.busy = false
    this.drainer = undefined
    this.backlog = undefined
    if (this.drainedSignal !== undefined) Deferred.doneUnsafe(this.drainedSignal, Exit.void)
    return drainer !== undefined && drainer !== Fiber.getCurrent() ? drainer : undefined
  }
}
