/**
 * The Peer's pushed input: frames a transport hands over instead of being
 * read through `incoming`. Two ways in share one state: `offer` (effects, for
 * transports that run them, such as the HTTP session), whose frames wait in a
 * PushQueue, and `push` (a plain call, for transports that deliver from their
 * own turn, such as the memory transport). Frames are handled in order; one
 * whose handling needs a fiber (a notification handler, a batch) holds the
 * frames behind it until it completes: its source is paused and resumed then.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Context from "effect/Context"
import type * as PeerError from "../PeerError.ts"
import type * as Transport from "../Transport.ts"
import { PushQueue } from "../PushQueue.ts"

export type ClosedExit = Exit.Exit<void, Transport.TransportError | PeerError.KeepaliveFailed>

/**
 * Hands the queue's frames to the input. A class, not an object of two
 * closures: a server keeps one per idle session.
 */
class QueueConsumer {
  private readonly input: PeerInput
  private readonly queue: PushQueue<Transport.Incoming>
  constructor(input: PeerInput, queue: PushQueue<Transport.Incoming>) {
    this.input = input
    this.queue = queue
  }
  push(frame: Transport.Incoming): boolean {
    return this.input.push(frame, this.queue)
  }
  end(): void {
    this.input.finishInput()
  }
  idle(): void {
    this.input.queueEmptied(this.queue)
  }
}

/** Frames offered while one is being handled wait here, up to this many; then `offer` suspends. */
const offerCapacity = 256

const refused: Effect.Effect<boolean> = Exit.succeed(false)

/** `PeerInput.drain` once the input stopped. */
const stoppedMark = "stopped"
const accepted: Effect.Effect<boolean> = Exit.succeed(true)

/** An offer waiting to hear that its frame was handed over. */
interface Handover {
  readonly frame: Transport.Incoming
  readonly resume: (outcome: Effect.Effect<boolean>) => void
}

/**
 * The pushed input, a base class of the Peer it feeds (see `IncomingRequests`):
 * a server keeps a Peer per idle session, and the input as an object of its
 * own cost each one 40 bytes. A Peer whose transport does not push frames
 * leaves it unused.
 */
export abstract class PeerInput implements Transport.Receiver {
  abstract readonly context: Context.Context<never>
  /** Handles one frame: synchronously, or by returning the effect that handles it. */
  abstract onFrame(frame: Transport.Incoming): Effect.Effect<void> | undefined
  /** Every frame offered before the end was handled: the input is over, so is the Peer. */
  abstract inputFinished(exit: ClosedExit): void

  // The fiber handling a frame exists only while one is handled, so an idle session has none.
  private busy = false
  private handler: Fiber.Fiber<void> | undefined = undefined
  // Made by an `offer` and dropped once it is empty again (a transport that
  // pushes never needs it): a server keeps a PeerInput per idle session, and a
  // queue kept would cost each one ~390 bytes, ~14% of an idle session.
  private queue: PushQueue<Transport.Incoming> | undefined = undefined
  private inputEnd: ClosedExit | undefined = undefined
  // The signal `drained` waits on while the input goes on (made by its first waiter), or `stoppedMark` once
  // the Peer closed, or the input ended and was handled: pushed frames are dropped then. One field for
  // both: a server keeps a PeerInput per idle session.
  private drain: Deferred.Deferred<void> | typeof stoppedMark | undefined = undefined
  private source: Transport.PushSource | undefined = undefined
  // Offers waiting to hear that their frame was handed over, in the queue's order (see `offer`).
  private handovers: Array<Handover> | undefined = undefined

  /** The Peer closed, or the input ended and was handled: pushed frames are dropped. */
  private get stopped(): boolean {
    return this.drain === stoppedMark
  }

  /**
   * Handles one frame now. False when its handling went on in a fiber:
   * `source` must push nothing more until it is resumed. Frames pushed after
   * the Peer closed are dropped.
   */
  push(frame: Transport.Incoming, source: Transport.PushSource): boolean {
    const handover = this.handovers?.[0]?.frame === frame ? this.takeHandover() : undefined
    if (handover === undefined) return this.handle(frame, source)
    const dropped = this.stopped
    const taken = this.handle(frame, source)
    // After the frame's handling started (a handler that needs no wait has answered already), never before.
    handover(dropped ? refused : accepted)
    return taken
  }

  private takeHandover(): Handover["resume"] {
    const handovers = this.handovers!
    const { resume } = handovers.shift()!
    // Not kept while empty: a server keeps a PeerInput per idle session.
    if (handovers.length === 0) this.handovers = undefined
    return resume
  }

  private handle(frame: Transport.Incoming, source: Transport.PushSource): boolean {
    if (this.stopped) return true
    const effect = this.onFrame(frame)
    if (effect === undefined) return true
    // The fiber records itself as its first step: the handler may resume other
    // fibers synchronously (completing a Deferred), which may close the Peer
    // before runFork returns; the close must find the fiber to interrupt.
    const fiber = Effect.runForkWith(this.context)(Effect.withFiber(this.started(effect)))
    if (fiber.pollUnsafe() !== undefined || this.stopped) {
      if (this.handler === fiber) this.handler = undefined
      return true
    }
    this.busy = true
    this.source = source
    fiber.addObserver(() => {
      if (this.handler === fiber) this.handled()
    })
    return false
  }

  private started(effect: Effect.Effect<void>) {
    return (self: Fiber.Fiber<unknown, unknown>): Effect.Effect<void> => {
      this.handler = self as Fiber.Fiber<void>
      return effect
    }
  }

  offer(frame: Transport.Incoming): Effect.Effect<boolean> {
    return Effect.suspend(() => {
      if (this.queue !== undefined) return this.queue.offer(frame)
      if (this.inputEnd !== undefined) return refused
      return this.makeQueue().offer(frame)
    })
  }

  /**
   * `offer`, succeeding only once the frame was handed to the Peer (false
   * when it was refused or dropped): its handling has started, and a request
   * whose handler needs no wait has been answered. The HTTP server shapes
   * its reply by that (a whole body for an answer that is there, the head
   * first otherwise): a rule, not a scheduler turn. The frame is still
   * handled from the queue's wake-up, never on the caller's stack.
   */
  offerHandedOver(frame: Transport.Incoming): Effect.Effect<boolean> {
    return Effect.flatMap(this.offer(frame), (queued) => (queued ? this.handedOver(frame) : refused))
  }

  /** Waits until `frame`, queued, is handed over (see `offer`); registered before the queue's wake-up delivers it. */
  private handedOver(frame: Transport.Incoming): Effect.Effect<boolean> {
    return Effect.callback<boolean>((resume) => {
      if (this.stopped) return resume(refused)
      const handover: Handover = { frame, resume }
      if (this.handovers === undefined) this.handovers = [handover]
      else this.handovers.push(handover)
      // Interrupted while it waits: the frame is still handled, nobody hears when.
      return Effect.sync(() => {
        const index = this.handovers?.indexOf(handover) ?? -1
        if (index >= 0) this.handovers!.splice(index, 1)
        if (this.handovers?.length === 0) this.handovers = undefined
      })
    })
  }

  end(error?: Transport.TransportError): void {
    if (this.inputEnd !== undefined) return
    this.inputEnd = error === undefined ? Exit.void : Exit.fail(error)
    // Offered frames are handled first: the queue's consumer learns the end after them.
    if (this.queue !== undefined) this.queue.close()
    else if (!this.busy) this.finishInput()
  }

  get drained(): Effect.Effect<void> {
    return Effect.suspend(() => {
      const drain = this.drain
      if (drain === stoppedMark) return Effect.void
      if (drain !== undefined) return Deferred.await(drain)
      const signal = Deferred.makeUnsafe<void>()
      this.drain = signal
      return Deferred.await(signal)
    })
  }

  private makeQueue(): PushQueue<Transport.Incoming> {
    const queue = new PushQueue<Transport.Incoming>(offerCapacity)
    this.queue = queue
    queue.attach(new QueueConsumer(this, queue))
    return queue
  }

  /**
   * The queue handed every frame over and none waits: it is dropped, and the
   * next `offer` makes a new one. Frames keep their order: a frame is queued
   * only while the queue exists, and it is dropped only when empty.
   */
  queueEmptied(queue: PushQueue<Transport.Incoming>): void {
    if (this.queue === queue && !this.busy) this.queue = undefined
  }

  private handled(): void {
    this.busy = false
    this.handler = undefined
    // Not kept past its use: a source may be a queue that is dropped once empty.
    const source = this.source
    this.source = undefined
    if (this.inputEnd !== undefined && this.queue === undefined) this.finishInput()
    else source?.resume()
  }

  /** Every offered frame was handled and the input ended (the queue's consumer calls it then). */
  finishInput(): void {
    const drain = this.drain
    if (drain === stoppedMark) return
    this.drain = stoppedMark
    // Later offers are refused by `inputEnd`; the closed queue is not needed for that.
    this.queue = undefined
    if (drain !== undefined) Deferred.doneUnsafe(drain, Exit.void)
    this.inputFinished(this.inputEnd ?? Exit.void)
  }

  // ---- the Peer closing ------------------------------------------------------

  /**
   * Stops the input as the Peer closes: later frames are refused (or
   * dropped), waiting writers are refused, and `drained` completes. Returns
   * the fiber handling a frame, for the Peer to interrupt with its handlers.
   */
  stopInput(exit: ClosedExit): Fiber.Fiber<void> | undefined {
    const drain = this.drain
    this.drain = stoppedMark
    if (this.inputEnd === undefined) this.inputEnd = exit
    this.queue?.halt()
    this.queue = undefined
    // Frames the halted queue dropped were never handed over.
    const handovers = this.handovers
    this.handovers = undefined
    if (handovers !== undefined) for (const handover of handovers) handover.resume(refused)
    const handler = this.handler
    this.busy = false
    this.handler = undefined
    if (drain !== undefined && drain !== stoppedMark) Deferred.doneUnsafe(drain, Exit.void)
    return handler !== undefined && handler !== Fiber.getCurrent() ? handler : undefined
  }
}
