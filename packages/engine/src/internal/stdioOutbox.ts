/**
 * The outgoing side of a stdio transport: frames are encoded to NDJSON lines
 * when sent, queued in a bounded buffer (a full buffer suspends `send`) and
 * written in order by one writer fiber into a byte sink (stdout, or a child's
 * stdin). Ending the buffer lets the writer drain it and then ends the sink.
 *
 * With a `DirectWriter` on the sink's stream, a frame sent while nothing is
 * queued or being written goes straight to the stream, skipping the wake-up
 * of the writer fiber (a scheduler turn per frame); the sink still owns the
 * stream, so write failures and the end are handled in one place.
 *
 * `tryOffer` is `offer` without the wait, for the Transport's `trySend`: the
 * frame is written straight out or queued while there is room, else refused
 * and the sender falls back to `offer`.
 */
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import type * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import type * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import type * as McpMetrics from "../McpMetrics.ts"
import * as Transport from "../Transport.ts"

declare const TextEncoder: new () => { encode(input: string): Uint8Array }

const utf8Encoder = new TextEncoder()

export interface Options {
  /** Frames queued before `offer` suspends. */
  readonly capacity: number
  /** Longest line accepted, terminator excluded, in UTF-8 bytes. */
  readonly maxFrameBytes: number
  /** What the sink is, for error messages ("stdout", "the server's stdin"). */
  readonly target: string
  /** Counts the bytes written, when metrics are on. */
  readonly meter?: McpMetrics.TransportMeter | undefined
}

/**
 * Synchronous access to the stream behind a sink, for platforms that have it
 * (Node's `process.stdout`).
 */
export interface DirectWriter {
  /** Whether a write now would be accepted without waiting: the stream is open and below its buffer limit. */
  readonly ready: () => boolean
  /** Writes one chunk after everything written before; failures surface through the sink, which listens for them. */
  readonly write: (chunk: Uint8Array) => void
  /**
   * Optional: `write` for a line given as text, which the platform encodes as
   * UTF-8 on its way out (Node does it in native code), so the outbox skips
   * encoding it in JavaScript.
   */
  readonly writeText?: ((line: string) => void) | undefined
}

export interface Outbox {
  /** Encodes and queues one frame; suspends while the buffer is full. */
  readonly offer: (frame: Transport.Outgoing) => Effect.Effect<void, Transport.TransportError>
  /**
   * Takes one frame as a plain call when that needs no wait: written straight
   * out, or queued while the buffer has room. False when nothing was taken
   * (the buffer is full, the outbox refuses, the frame cannot be encoded or
   * is too large): `offer` then waits, or fails with the reason.
   */
  readonly tryOffer: (frame: Transport.Outgoing) => boolean
  /**
   * Fails every later `offer` with `error`; queued frames are still written.
   * The first refusal wins, except that `Closed` replaces an `Io` write
   * failure: a broken pipe is how a departed reader usually shows first.
   */
  readonly refuse: (error: Transport.TransportError) => void
  /** Stops accepting frames and waits until the queued ones are written and the sink has ended. */
  readonly drain: Effect.Effect<void>
  /** Drops whatever is still queued and stops the writer (the sink is released, not ended). */
  readonly abort: Effect.Effect<void>
  /** Completes when the writer stops on a write error. */
  readonly failed: Effect.Effect<Transport.TransportError>
}

export const closedError = (message: string) => new Transport.TransportError({ reason: "Closed", message })

export const make = Effect.fnUntraced(function* (
  // The sink's failure only becomes the cause of the `Io` error.
  sink: Sink.Sink<void, Uint8Array, never, unknown>,
  options: Options,
  direct?: DirectWriter | undefined
): Effect.fn.Return<Outbox, never, Scope.Scope> {
  const queue = yield* Queue.bounded<Uint8Array, Cause.Done>(Math.max(1, options.capacity))
  const failure = Deferred.makeUnsafe<Transport.TransportError>()
  let refusal: Transport.TransportError | undefined
  // Lines offered to the queue and not yet through the sink (a suspended
  // sender's line counts too), and the lines of the batch the writer holds.
  // A direct write is in order only when both are zero: the sink writes a
  // batch synchronously and takes the next one only after its last write.
  let pending = 0
  let taken = 0
  // The sink listens for the stream's errors once the writer has asked for its first batch.
  let listening = false
  const take = Effect.suspend(() => {
    listening = true
    pending -= taken
    taken = 0
    return Effect.map(Queue.takeAll(queue), (batch) => {
      taken = batch.length
      return batch
    })
  })

  const refuse = (error: Transport.TransportError) => {
    if (refusal === undefined || (refusal.reason === "Io" && error.reason === "Closed")) refusal = error
  }

  const writer = yield* Stream.fromPull(Effect.succeed(take)).pipe(
    Stream.run(sink),
    Effect.onExit((exit) =>
      Effect.suspend(() => {
        if (Exit.isSuccess(exit)) return Effect.void
        const error = new Transport.TransportError({
          reason: "Io",
          message: `writing to ${options.target} failed`,
          cause: exit.cause
        })
        refuse(error)
        // Senders suspended on the full buffer are released and see the refusal.
        return Effect.andThen(Queue.shutdown(queue), Deferred.succeed(failure, error))
      })
    ),
    Effect.ignore,
    Effect.forkScoped
  )

  // An interrupted suspended sender leaves its line counted: direct writes stop, order is kept.
  const refused = (accepted: boolean): Effect.Effect<void, Transport.TransportError> => {
    if (accepted) return Effect.void
    pending--
    return Effect.fail(refusal ?? closedError(`${options.target} is closed`))
  }

  // Lines are handed over as text while a direct write takes them and no byte count is needed (no meter):
  // a line of at most maxFrameBytes / 3 UTF-16 units is within the limit whatever its characters.
  const textLimit = direct?.writeText === undefined || options.meter !== undefined ? -1 : options.maxFrameBytes / 3

  // The frame as one NDJSON line (as text when it may be written so), or the error `offer` fails with.
  const lineOf = (frame: Transport.Outgoing): Uint8Array | string | Transport.TransportError => {
    const encoded = JsonRpcCodec.encodeResult(frame)
    if (Result.isFailure(encoded)) {
      return new Transport.TransportError({
        reason: "Protocol",
        message: encoded.failure.message,
        cause: encoded.failure
      })
    }
    const text = `${encoded.success}\n`
    if (text.length <= textLimit) return text
    const line = utf8Encoder.encode(text)
    if (line.length - 1 > options.maxFrameBytes) {
      return new Transport.TransportError({
        reason: "FrameTooLarge",
        message: `frame of ${line.length - 1} bytes exceeds the limit of ${options.maxFrameBytes}`
      })
    }
    return line
  }

  // Writes `line` at once when nothing is queued before it; false when it must be queued.
  const writeNow = (line: Uint8Array | string): boolean => {
    if (direct === undefined || pending !== 0 || !listening || !direct.ready()) return false
    if (typeof line === "string") direct.writeText!(line)
    else {
      options.meter?.sent(line.length)
      direct.write(line)
    }
    return true
  }

  // A text line that could not be written at once is queued as bytes.
  const bytesOf = (line: Uint8Array | string): Uint8Array =>
    typeof line === "string" ? utf8Encoder.encode(line) : line

  const tryOffer = (frame: Transport.Outgoing): boolean => {
    if (refusal !== undefined) return false
    const line = lineOf(frame)
    if (line instanceof Transport.TransportError) return false
    if (writeNow(line)) return true
    const bytes = bytesOf(line)
    pending++
    if (Queue.offerUnsafe(queue, bytes)) {
      options.meter?.sent(bytes.length)
      return true
    }
    // Full: the sender falls back to `offer`, which encodes the frame again (a
    // rare path, not worth holding a possibly large line for).
    pending--
    return false
  }

  const offer = (frame: Transport.Outgoing): Effect.Effect<void, Transport.TransportError> =>
    Effect.suspend(() => {
      if (refusal !== undefined) return Effect.fail(refusal)
      const line = lineOf(frame)
      if (line instanceof Transport.TransportError) return Effect.fail(line)
      if (writeNow(line)) return Effect.void
      const bytes = bytesOf(line)
      options.meter?.sent(bytes.length)
      pending++
      return Effect.flatMap(Queue.offer(queue, bytes), refused)
    })

  return {
    offer,
    tryOffer,
    refuse,
    drain: Effect.andThen(Queue.end(queue), Effect.asVoid(Fiber.await(writer))),
    abort: Effect.andThen(Queue.shutdown(queue), Fiber.interrupt(writer)),
    failed: Deferred.await(failure)
  }
})

/** `drain` bounded by `timeout`; on timeout what is left is dropped. Returns whether everything was written. */
export const drainWithin = (outbox: Outbox, timeout: Duration.Input): Effect.Effect<boolean> =>
  Effect.timeoutOption(outbox.drain, timeout).pipe(
    Effect.flatMap((drained) => (Option.isSome(drained) ? Effect.succeed(true) : Effect.as(outbox.abort, false)))
  )
