/**
 * The contract suite must be able to fail: each case runs here against a
 * transport broken in the way that case exists to catch.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as FaultTransport from "../src/FaultTransport.ts"
import * as Cases from "../src/internal/contractCases.ts"
import * as FastPathCases from "../src/internal/fastPathCases.ts"
import * as TestPeer from "../src/TestPeer.ts"
import type * as TransportContract from "../src/TransportContract.ts"

const config = Cases.config({ messages: 60, largeSize: 4096, fibers: 4, fillFrames: 5_000 })

/** A memory pair whose first end is wrapped in faults. */
const faultyPair = (
  options: FaultTransport.Options,
  pairOptions?: MemoryTransport.Options
): TransportContract.MakePair =>
  Effect.gen(function* () {
    const [a, b] = yield* MemoryTransport.makePair(pairOptions)
    const fa = yield* FaultTransport.make(a, options)
    return [fa, b] as const
  })

/** A memory pair whose second end is replaced by `f(end)`. */
const alteredPair = (
  f: (end: MemoryTransport.End) => TransportContract.End,
  pairOptions?: MemoryTransport.Options
): TransportContract.MakePair => Effect.map(MemoryTransport.makePair(pairOptions), ([a, b]) => [a, f(b)] as const)

/**
 * A TestPeer as the first end (raw text goes through the real codec) and its
 * counterpart, altered by `f`, as the second. Only the second end is read.
 */
let currentPeer: TestPeer.TestPeer | undefined
const rawPair = (f: (end: MemoryTransport.End) => TransportContract.End): TransportContract.MakePair =>
  Effect.map(TestPeer.make(), (tp) => {
    currentPeer = tp
    return [{ incoming: Stream.never, send: (frame) => tp.send(frame), close: tp.close }, f(tp.transport)] as const
  })
const raw: TransportContract.Malformed = { sendRaw: (_, text) => currentPeer!.send(text) }

const assertFails = <A, E>(label: string, effect: Effect.Effect<A, E, Scope.Scope>) =>
  Effect.gen(function* () {
    const exit = yield* Effect.exit(Effect.scoped(effect))
    assert.isTrue(Exit.isFailure(exit), `${label}: the case passed against a broken transport`)
  })

describe("TransportContract cases catch broken transports", () => {
  it.effect("ordering catches a transport that reorders", () =>
    assertFails("ordering", Cases.ordering(faultyPair({ outgoing: { reorder: { select: { at: [10] } } } }), config))
  )

  it.effect("large catches a transport that alters long strings", () =>
    assertFails(
      "large",
      Cases.large(
        alteredPair((end) => ({
          ...end,
          incoming: Stream.map(end.incoming, (frame) => {
            if (Result.isFailure(frame)) return frame
            const message = frame.success as JsonRpc.Request
            const data = (message.params as { data?: unknown } | undefined)?.data
            return typeof data === "string"
              ? Result.succeed(JsonRpc.request(message.id, message.method, { data: data.slice(0, -1) }))
              : frame
          })
        })),
        config
      )
    )
  )

  it.effect("concurrent catches a transport that duplicates", () =>
    assertFails("concurrent", Cases.concurrent(faultyPair({ outgoing: { duplicate: { at: [17] } } }), config))
  )

  it.effect("concurrent catches a transport that drops", () =>
    assertFails(
      "concurrent",
      Cases.concurrent(
        faultyPair({ outgoing: { drop: { at: [3] }, cut: { after: config.fibers * config.perFiber - 1 } } }),
        config
      )
    )
  )

  it.effect("cancellation catches a transport without backpressure", () =>
    assertFails("cancellation", Cases.cancellation(faultyPair({}, { capacity: 1_000_000 }), config))
  )

  it.effect("close catches a transport whose sends after close succeed", () =>
    assertFails(
      "close",
      Cases.close(
        alteredPair((end) => ({ ...end, send: (frame, options) => Effect.ignore(end.send(frame, options)) })),
        1
      )
    )
  )

  it.effect("end of stream catches a transport that loses a frame", () =>
    assertFails("endOfStream", Cases.endOfStream(faultyPair({ outgoing: { drop: { at: [50] } } })))
  )

  it.effect("malformed catches a transport whose stream ends at the first bad frame", () =>
    assertFails(
      "malformed",
      Cases.malformed(
        alteredPair((end) => ({ ...end, incoming: Stream.takeWhile(end.incoming, Result.isSuccess) }), { codec: true }),
        "objects"
      )
    )
  )

  it.effect("malformed (raw text) passes over a TestPeer's codec path", () =>
    Effect.scoped(
      Cases.malformed(
        rawPair((end) => end),
        raw
      )
    )
  )

  it.effect("malformed (raw text) catches a transport that drops undecodable frames", () =>
    assertFails(
      "malformed",
      Cases.malformed(
        rawPair((end) => ({ ...end, incoming: Stream.filter(end.incoming, Result.isSuccess) })),
        raw
      )
    )
  )

  it.effect("trySend catches a transport whose trySend ignores the bound", () =>
    assertFails(
      "trySend",
      FastPathCases.trySend(
        alteredPair((end) => ({
          ...end,
          trySend: (frame) => {
            Effect.runFork(Effect.ignore(end.send(frame)))
            return true
          }
        })),
        config
      )
    )
  )

  it.effect("push catches a transport that pushes while the receiver waits", () =>
    assertFails(
      "push",
      FastPathCases.push(
        alteredPair((end) => ({
          ...end,
          attach: (receiver) => {
            const ignored = { resume: () => {} }
            Effect.runFork(
              Stream.runForEach(end.incoming, (frame) => Effect.sync(() => receiver.push?.(frame, ignored)))
            )
            return true
          }
        })),
        config
      )
    )
  )

  it.effect("fastPaths catches a transport that has a fast path it does not declare", () =>
    assertFails("fastPaths", FastPathCases.declared(MemoryTransport.makePair(), undefined))
  )
})
