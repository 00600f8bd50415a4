/**
 * The incoming side of a stdio transport: bytes are split into lines and
 * decoded as they arrive, and the frames wait for the one reader (the Peer's
 * read loop), which takes all of them in one pull.
 *
 * The bytes are read from a stream by a fiber started on the first pull, or
 * come straight from a platform's `DirectReader` (no fiber at all); either is
 * paused while `capacity` frames wait. The frames wait in a PushQueue, which
 * wakes the reader on a microtask (not a macrotask per wake-up), and stopping the
 * frames (`halt`) is a method call: racing every pull against a close signal
 * (`Stream.interruptWhen`) would put a fiber and a queue between the bytes and
 * the reader.
 *
 * A receiver may attach itself instead of reading (push delivery, over a
 * `DirectReader` only): the queue then hands it a chunk's frames as soon as
 * the chunk is decoded, in the reader's own event, with no reader fiber to
 * resume per frame.
 */
import * as Ndjson from "@effect-mcp/protocol/Ndjson"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as McpMetrics from "../McpMetrics.ts"
import * as Transport from "../Transport.ts"
import { PushQueue } from "../PushQueue.ts"

type Batch = readonly [Transport.Incoming, ...Array<Transport.Incoming>]

/** What a `DirectReader` reports to. */
export interface DirectHandlers {
  /**
   * Bytes read; `text` is the same chunk as text when the reader knows it is
   * ASCII (it then costs the splitter no UTF-8 decoding).
   */
  readonly chunk: (chunk: Uint8Array, text?: string) => void
  readonly end: () => void
  readonly fail: (cause: unknown) => void
}

/** A started `DirectReader`. */
export interface DirectSubscription {
  readonly pause: () => void
  readonly resume: () => void
  /** Stops reporting (and reading); the underlying stream is left open. */
  readonly stop: () => void
}

/** A push source of bytes, for platforms that have one (Node's `process.stdin`). */
export interface DirectReader {
  readonly start: (handlers: DirectHandlers) => DirectSubscription
}

export type Source<E> = Stream.Stream<Uint8Array, E> | DirectReader

export interface Options {
  /** Longest line accepted, terminator excluded, in UTF-8 bytes. */
  readonly maxFrameBytes: number
  /** Frames waiting before the source is paused. */
  readonly capacity: number
  /** The scope the reading fiber lives in. */
  readonly scope: Scope.Scope
  /** The message of the `Io` error a failure of the source becomes (the failure is its cause). */
  readonly failureMessage: string
  /** Counts the bytes read, when metrics are on. */
  readonly meter?: McpMetrics.TransportMeter | undefined
}

const resumed: Effect.Effect<void> = Exit.void

export class Inbox<E> {
  // The decoded frames wait for the one reader here; the queue wakes it on a microtask.
  private readonly queue: PushQueue<Transport.Incoming, Transport.TransportError>
  // The stream-reading fiber, paused while `capacity` frames wait.
  private paused: ((effect: Effect.Effect<void>) => void) | undefined = undefined
  private fiber: Fiber.Fiber<void> | undefined = undefined
  private subscription: DirectSubscription | undefined = undefined
  private started = false
  private attached = false
  // Push delivery: told once how the input ended (after the last frame), or that it was halted.
  private onEnd: ((error: Transport.TransportError | undefined) => void) | undefined = undefined
  // The failure the queue was closed with, for an attached receiver (the queue tells it only the end).
  private error: Transport.TransportError | undefined = undefined
  private readonly splitter: Ndjson.Splitter
  private readonly source: Source<E>
  private readonly options: Options

  constructor(source: Source<E>, options: Options) {
    this.source = source
    this.options = options
    this.splitter = Ndjson.makeSplitter({ maxLineLength: options.maxFrameBytes })
    this.queue = new PushQueue(options.capacity, this.onTaken)
  }

  /** The frames, in order; ends after the source ends or `halt`, fails after the source fails. Read it once. */
  readonly stream: Stream.Stream<Transport.Incoming, Transport.TransportError> = Stream.fromPull(
    Effect.sync(() => this.pull)
  )

  /**
   * Hands every frame to `receiver` from now on, as a plain call (its
   * `push`), instead of `stream` (which then never emits). `onEnd` is told
   * once, after the last frame, how the input ended (the source's failure, or
   * none), or that it was halted (none); the owner then ends the receiver.
   * False when push delivery is not possible (the stream was read already,
   * the source is a stream that needs a reading fiber, or the receiver has no
   * `push`): the receiver reads `stream`. The source is stopped by `halt`,
   * which the owner runs when its scope closes.
   */
  attach(receiver: Transport.Receiver, onEnd: (error: Transport.TransportError | undefined) => void): boolean {
    const push = receiver.push
    const source = this.source
    if (this.started || this.queue.closed || push === undefined || Stream.isStream(source)) return false
    this.started = true
    this.attached = true
    this.onEnd = onEnd
    const queue = this.queue
    queue.attach({ push: (frame) => push.call(receiver, frame, queue), end: () => this.ended() })
    this.subscription = source.start(this.handlers)
    return true
  }

  /** Ends the stream now: frames not yet taken are dropped and the source is no longer read. */
  halt(): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.queue.halt()
      this.resumeSource()
      this.subscription?.stop()
      // The queue tells an attached receiver nothing once halted.
      this.ended()
      const fiber = this.fiber
      return fiber === undefined ? Effect.void : Fiber.interrupt(fiber)
    })
  }

  private ended(): void {
    const onEnd = this.onEnd
    if (onEnd === undefined) return
    this.onEnd = undefined
    onEnd(this.error)
  }

  private readonly pull: Effect.Effect<Batch, Transport.TransportError | Cause.Done> = Effect.suspend(() => {
    // An attached receiver takes every frame.
    if (this.attached) return Effect.never
    if (this.started || this.queue.closed) return this.queue.take
    this.started = true
    const source = this.source
    if (Stream.isStream(source)) {
      return Effect.flatMap(Effect.forkIn(this.read(source), this.options.scope), (fiber) => {
        this.fiber = fiber
        return this.queue.take
      })
    }
    const subscription = source.start(this.handlers)
    this.subscription = subscription
    return Effect.andThen(
      Scope.addFinalizer(
        this.options.scope,
        Effect.sync(() => subscription.stop())
      ),
      this.queue.take
    )
  })

  private readonly handlers: DirectHandlers = {
    chunk: (chunk, text) => {
      if (this.queue.closed) return
      this.decode(chunk, text, this.attached)
      // An attached receiver takes the chunk's frames now, in the reader's event, rather than on a microtask:
      // Node's own follow-up of a read (a `nextTick`) would otherwise run first, on the path of every message.
      if (this.attached) this.queue.deliverNow()
      if (this.queue.size >= this.options.capacity) this.subscription?.pause()
    },
    end: () => {
      this.flush()
      this.queue.close()
    },
    fail: (cause) => this.close(this.failure(cause))
  }

  private close(error: Transport.TransportError): void {
    if (this.queue.closed) return
    this.error = error
    this.queue.close(error)
  }

  // The reader took the frames: a paused source reads again.
  private readonly onTaken = (): void => {
    this.resumeSource()
    this.subscription?.resume()
  }

  private resumeSource(): void {
    const paused = this.paused
    if (paused === undefined) return
    this.paused = undefined
    paused(resumed)
  }

  private failure(cause: unknown): Transport.TransportError {
    return new Transport.TransportError({ reason: "Io", message: this.options.failureMessage, cause })
  }

  private decode(chunk: Uint8Array, text?: string, delivered = false): void {
    this.options.meter?.received(chunk.length)
    const queue = this.queue
    // ASCII text has as many UTF-16 units as bytes: the splitter's limit on text lines is the byte limit.
    const lines = this.splitter.push(text ?? chunk)
    // Frames handed to an attached receiver by the `deliverNow` that follows (`handlers.chunk`) need no wake-up.
    if (delivered) for (const line of lines) queue.offerBeforeDelivery(Ndjson.decodeLine(line))
    else for (const line of lines) queue.offerNow(Ndjson.decodeLine(line))
  }

  // The final line counts even without a terminator; a failed source's partial line does not.
  private flush(): void {
    if (this.queue.closed) return
    for (const line of this.splitter.end()) this.queue.offerNow(Ndjson.decodeLine(line))
  }

  private read(source: Stream.Stream<Uint8Array, E>): Effect.Effect<void> {
    return Stream.runForEachArray(source, (chunks) => this.push(chunks)).pipe(
      Effect.mapError((cause) => this.failure(cause)),
      Effect.onExit((exit) =>
        Effect.sync(() => {
          if (Exit.isSuccess(exit)) {
            this.flush()
            this.queue.close()
          } else if (!Cause.hasInterruptsOnly(exit.cause)) {
            const error = Cause.findErrorOption(exit.cause)
            this.queue.close(Option.isSome(error) ? error.value : this.failure(Cause.squash(exit.cause)))
          }
        })
      ),
      Effect.exit,
      Effect.asVoid
    )
  }

  // Decodes the chunks; waits (the source is not read meanwhile) while `capacity` frames wait.
  private push(chunks: ReadonlyArray<Uint8Array>): Effect.Effect<void> {
    if (this.queue.closed) return Effect.void
    for (const chunk of chunks) this.decode(chunk)
    if (this.queue.size < this.options.capacity) return Effect.void
    return Effect.callback<void>((resume) => {
      if (this.queue.size === 0 || this.queue.closed) return resume(resumed)
      this.paused = resume
    })
  }
}
