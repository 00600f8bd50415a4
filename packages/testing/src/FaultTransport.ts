/**
 * A transport wrapper that injects faults, configured per direction: drop,
 * duplicate, reorder, delay (by Clock, so the TestClock drives it) and cutting
 * the connection after a number of frames. Everything is deterministic:
 * frames are chosen by index, predicate or a seeded PRNG, never Math.random.
 *
 * `outgoing` faults apply to what this side sends, `incoming` faults to what
 * it receives. Without a delay an outgoing frame reaches the wrapped
 * transport inside `send` (its errors and backpressure reach the caller);
 * with one, `send` returns once the frame is queued and a later `send`
 * reports a failure of the wrapped transport.
 */
import * as Transport from "@effect-mcp/engine/Transport"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as FaultStage from "./internal/faultStage.ts"

/** Which frames a fault applies to. */
export type Selector<F> = FaultStage.Selector<F>
/** The faults of one direction. */
export type Faults<F> = FaultStage.Faults<F>
/** One kind of fault: drop, delay, duplicate, reorder or cut. */
export type Fault = FaultStage.Fault

/** The faults to inject, per direction. */
export interface Options {
  /** Faults on frames this side sends. */
  readonly outgoing?: Faults<Transport.Outgoing> | undefined
  /** Faults on frames this side receives. */
  readonly incoming?: Faults<Transport.Incoming> | undefined
  /**
   * Received frames buffered before the wrapper stops reading the wrapped
   * transport, so backpressure still reaches the sender. Default 1024.
   */
  readonly capacity?: number | undefined
}

/** Which way a frame was going. */
export type Direction = "outgoing" | "incoming"

/** One injected fault, for asserting that it happened. */
export interface FaultEvent {
  readonly direction: Direction
  readonly fault: Fault
  /** Index of the frame in its direction (for `cut`, of the last frame delivered; -1 when cut at once). */
  readonly index: number
  /** Clock time, in milliseconds. */
  readonly at: number
}

/** A transport that may be closed: memory ends, or anything offering `close`. */
export interface Closable extends Transport.TransportShape {
  readonly close?: Effect.Effect<void> | undefined
}

/** A transport that injects faults into a wrapped one, and records what it did. */
export interface FaultTransport extends Transport.TransportShape {
  /**
   * Closes this side: the outgoing frames still held back (reorder) or on their delay are sent at once, in
   * order, as a closed link still delivers what was written to it; then the wrapped transport is closed if it can be.
   */
  readonly close: Effect.Effect<void>
  /** The faults injected so far, in order. */
  readonly events: Effect.Effect<ReadonlyArray<FaultEvent>>
}

interface OutItem {
  readonly frame: Transport.Outgoing
  readonly options: Transport.SendOptions | undefined
}

type Timed<T> = { readonly passed: FaultStage.Passed<T>; readonly dueAt: number } | { readonly end: true }

const closedError = new Transport.TransportError({ reason: "Closed", message: "fault transport closed" })

/**
 * Wraps `inner`. Fibers that deliver delayed frames live in the current scope.
 *
 * @example
 * ```ts
 * import * as McpClient from "@effect-mcp/client/McpClient"
 * import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
 * import * as Transport from "@effect-mcp/engine/Transport"
 * import * as McpServer from "@effect-mcp/server/McpServer"
 * import * as FaultTransport from "@effect-mcp/testing/FaultTransport"
 * import * as Effect from "effect/Effect"
 *
 * const Server = McpServer.layer({ name: "under-test", version: "1.0.0" })
 *
 * // Every frame the client receives arrives 2 seconds late (Clock time: use TestClock.adjust in tests).
 * export const slowLink = Effect.gen(function* () {
 *   const [serverEnd, clientEnd] = yield* MemoryTransport.makePair()
 *   yield* McpServer.serve.pipe(
 *     Effect.provideService(Transport.Transport, serverEnd),
 *     Effect.provide(Server),
 *     Effect.forkScoped
 *   )
 *   const faulty = yield* FaultTransport.make(clientEnd, { incoming: { delay: { duration: "2 seconds" } } })
 *   const client = yield* McpClient.make({ clientInfo: { name: "test", version: "1.0.0" } }).pipe(
 *     Effect.provideService(Transport.Transport, faulty)
 *   )
 *   return { client, events: faulty.events }
 * })
 * ```
 */
export const make = Effect.fnUntraced(function* (
  inner: Closable,
  options: Options
): Effect.fn.Return<FaultTransport, never, Scope.Scope> {
  const clock = yield* Effect.clockWith(Effect.succeed)
  const events: Array<FaultEvent> = []
  const recorder = (direction: Direction) => (fault: Fault, index: number) => {
    events.push({ direction, fault, index, at: clock.currentTimeMillisUnsafe() })
  }
  const out = yield* Queue.bounded<Transport.Incoming, Transport.TransportError | Cause.Done>(options.capacity ?? 1024)
  let closed = false
  let cutError: Transport.TransportError | undefined
  let outgoingFailure: Transport.TransportError | undefined
  let incomingFailure: Transport.TransportError | undefined

  const cut = (direction: Direction, index: number, error: Transport.TransportError | undefined) =>
    Effect.suspend(() => {
      if (cutError !== undefined) return Effect.void
      cutError = error ?? closedError
      recorder(direction)("cut", index)
      return Effect.andThen(error === undefined ? Queue.end(out) : Queue.fail(out, error), inner.close ?? Effect.void)
    })

  /** Counts deliveries of one direction and cuts the connection at the configured count. */
  const counting = <T>(direction: Direction, sink: (item: T) => Effect.Effect<void, Transport.TransportError>) => {
    const limit = (direction === "outgoing" ? options.outgoing : options.incoming)?.cut
    let delivered = 0
    return (passed: FaultStage.Passed<T>): Effect.Effect<void, Transport.TransportError> =>
      Effect.suspend(() => {
        if (cutError !== undefined) return direction === "outgoing" ? Effect.fail(cutError) : Effect.void
        const sent = sink(passed.item)
        if (limit === undefined) return sent
        return Effect.andThen(
          sent,
          Effect.suspend(() => (++delivered >= limit.after ? cut(direction, passed.index, limit.error) : Effect.void))
        )
      })
  }

  // Completed by `close`: frames still on an outgoing delay line are then sent at once, as a link that is closed
  // still delivers what was already written to it, rather than lost (or left waiting for a clock nobody moves).
  const closing = Deferred.makeUnsafe<void>()

  /** Delivers passed frames in order, each not before its due time (at once after `close`). */
  const delayLine = <T>(deliver: (passed: FaultStage.Passed<T>) => Effect.Effect<void, Transport.TransportError>) =>
    Effect.gen(function* () {
      const line = yield* Queue.unbounded<Timed<T>>()
      const worker = (onEnd: Effect.Effect<void>, onError: (error: Transport.TransportError) => Effect.Effect<void>) =>
        Effect.gen(function* () {
          while (true) {
            const next = yield* Queue.take(line)
            if ("end" in next) return yield* onEnd
            const wait = next.dueAt - clock.currentTimeMillisUnsafe()
            if (wait > 0) yield* Effect.raceFirst(Effect.sleep(Duration.millis(wait)), Deferred.await(closing))
            const exit = yield* Effect.exit(deliver(next.passed))
            const failure = exit._tag === "Failure" ? exit.cause.reasons.find(Cause.isFailReason) : undefined
            if (failure !== undefined) return yield* onError(failure.error)
          }
        })
      const enqueue = (passed: ReadonlyArray<FaultStage.Passed<T>>, delayMs: number) =>
        Effect.sync(() => {
          const now = clock.currentTimeMillisUnsafe()
          for (const p of passed) Queue.offerUnsafe(line, { passed: p, dueAt: p.delayed ? now + delayMs : now })
        })
      const end = Effect.sync(() => {
        Queue.offerUnsafe(line, { end: true })
      })
      return { worker, enqueue, end }
    })

  // ---- outgoing --------------------------------------------------------------

  const outFaults = options.outgoing
  const outStage = FaultStage.make<Transport.Outgoing, OutItem>(outFaults, (item) => item.frame, recorder("outgoing"))
  const deliverOut = counting<OutItem>("outgoing", (item) =>
    item.options === undefined ? inner.send(item.frame) : inner.send(item.frame, item.options)
  )
  const outDelayMs = outFaults?.delay === undefined ? undefined : Duration.toMillis(outFaults.delay.duration)
  const outLine = outDelayMs === undefined ? undefined : yield* delayLine(deliverOut)
  const outWorker =
    outLine === undefined
      ? undefined
      : yield* outLine
          .worker(Effect.void, (error) =>
            Effect.sync(() => {
              outgoingFailure = error
            })
          )
          .pipe(Effect.forkScoped)

  const forward = (passed: ReadonlyArray<FaultStage.Passed<OutItem>>) =>
    outLine === undefined || outDelayMs === undefined
      ? Effect.forEach(passed, deliverOut, { discard: true })
      : outLine.enqueue(passed, outDelayMs)

  const send = (frame: Transport.Outgoing, sendOptions?: Transport.SendOptions) =>
    Effect.suspend(() => {
      if (closed) return Effect.fail(closedError)
      if (cutError !== undefined) return Effect.fail(cutError)
      if (outgoingFailure !== undefined) return Effect.fail(outgoingFailure)
      return forward(outStage.push({ frame, options: sendOptions }))
    })

  // ---- incoming --------------------------------------------------------------

  const inFaults = options.incoming
  const inStage = FaultStage.make<Transport.Incoming, Transport.Incoming>(
    inFaults,
    (frame) => frame,
    recorder("incoming")
  )
  const deliverIn = counting<Transport.Incoming>("incoming", (frame) => Effect.asVoid(Queue.offer(out, frame)))
  const inDelayMs = inFaults?.delay === undefined ? undefined : Duration.toMillis(inFaults.delay.duration)
  const inLine = inDelayMs === undefined ? undefined : yield* delayLine(deliverIn)

  const finishIncoming = (error: Transport.TransportError | undefined) =>
    error === undefined ? Effect.asVoid(Queue.end(out)) : Effect.asVoid(Queue.fail(out, error))

  const pump = Effect.gen(function* () {
    const exit = yield* Stream.runForEach(inner.incoming, (frame) => {
      const passed = inStage.push(frame)
      return inLine === undefined || inDelayMs === undefined
        ? Effect.forEach(passed, deliverIn, { discard: true })
        : inLine.enqueue(passed, inDelayMs)
    }).pipe(Effect.exit)
    const rest = inStage.flush()
    incomingFailure = exit._tag === "Failure" ? exit.cause.reasons.find(Cause.isFailReason)?.error : undefined
    if (inLine === undefined || inDelayMs === undefined) {
      yield* Effect.forEach(rest, deliverIn, { discard: true })
      return yield* finishIncoming(incomingFailure)
    }
    yield* inLine.enqueue(rest, inDelayMs)
    yield* inLine.end
  })
  if (inLine !== undefined) {
    yield* inLine
      .worker(
        Effect.suspend(() => finishIncoming(incomingFailure)),
        () => Effect.void
      )
      .pipe(Effect.forkScoped)
  }
  yield* pump.pipe(Effect.forkScoped)

  // A cut at zero frames happens before anything moves.
  for (const [direction, faults] of [
    ["outgoing", outFaults],
    ["incoming", inFaults]
  ] as const) {
    if (faults?.cut !== undefined && faults.cut.after <= 0) yield* cut(direction, -1, faults.cut.error)
  }

  const close = Effect.suspend(() => {
    if (closed) return Effect.void
    closed = true
    const held = outStage.flush()
    // Behind the frames already on the delay line, if there is one: it sends them all at once now, then ends.
    const release =
      outLine === undefined || outWorker === undefined
        ? cutError === undefined
          ? Effect.ignore(Effect.forEach(held, deliverOut, { discard: true }))
          : Effect.void
        : outLine
            .enqueue(held, 0)
            .pipe(
              Effect.andThen(outLine.end),
              Effect.andThen(Deferred.succeed(closing, undefined)),
              Effect.andThen(Fiber.await(outWorker))
            )
    return release.pipe(Effect.andThen(inner.close ?? Effect.void), Effect.andThen(Queue.end(out)), Effect.asVoid)
  })

  return {
    incoming: Stream.fromQueue(out),
    send,
    close,
    events: Effect.sync(() => [...events])
  } satisfies FaultTransport
})

/**
 * Wraps the current `Transport`.
 *
 * @example
 * ```ts
 * import * as McpClient from "@effect-mcp/client/McpClient"
 * import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
 * import * as FaultTransport from "@effect-mcp/testing/FaultTransport"
 * import * as Layer from "effect/Layer"
 *
 * // The client's fourth outgoing frame is lost.
 * export const Client = McpClient.layer({ clientInfo: { name: "test", version: "1.0.0" } }).pipe(
 *   Layer.provide(FaultTransport.layer({ outgoing: { drop: { at: [3] } } })),
 *   Layer.provide(NodeStdio.layerClient({ command: "node", args: ["server.js"] }))
 * )
 * ```
 */
export const layer = (options: Options): Layer.Layer<Transport.Transport, never, Transport.Transport> =>
  Layer.effect(
    Transport.Transport,
    Effect.gen(function* () {
      const inner = yield* Transport.Transport
      const wrapped = yield* make(inner, options)
      return Transport.Transport.of({ incoming: wrapped.incoming, send: wrapped.send })
    })
  )
