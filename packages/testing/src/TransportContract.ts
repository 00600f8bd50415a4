/**
 * The contract every transport passes: ordering, large messages, concurrent
 * senders, cancellation of a blocked send, close from either side, end of
 * stream, and malformed frames surfacing as decode failures instead of
 * ending the stream. `suite` registers the tests with @effect/vitest; in-memory
 * transports run them under `it.effect`, transports over real processes and
 * sockets under `it.live`.
 *
 * Each test reads every end through one subscription to `incoming`, so
 * transports whose incoming stream can be run only once pass as well.
 */
import type * as Transport from "@effect-mcp/engine/Transport"
import { describe, it, type Vitest } from "@effect/vitest"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Cases from "./internal/contractCases.ts"
import * as FastPathCases from "./internal/fastPathCases.ts"

/** One end of a connected pair: a transport that can be closed from this side. */
export interface End extends Transport.TransportShape {
  /** Closes this side: the other side's incoming ends and later sends fail with `Closed`. */
  readonly close: Effect.Effect<void>
}

/** Builds a fresh connected pair for one test; the test's scope owns it. */
export type MakePair = Effect.Effect<readonly [End, End], unknown, Scope.Scope>

/** How the malformed-frame test injects bad frames. */
export type Malformed =
  | {
      /** Raw text written as one frame by the transport under test (text transports). */
      readonly sendRaw: (end: End, text: string) => Effect.Effect<void, Transport.TransportError>
    }
  /** Invalid JSON-RPC objects sent through `send`; for object transports running their codec path. */
  | "objects"

/** Settings of the contract suite. */
export interface Options {
  /** Registers each test: `it.effect` (default, TestClock) or `it.live` (real processes and sockets). */
  readonly test?: Vitest.Tester<Scope.Scope> | undefined
  /** Messages per direction in the ordering test. Default 1,000. */
  readonly messages?: number | undefined
  /** Length of the large string parameter. Default 10 MiB. */
  readonly largeSize?: number | undefined
  /** Senders and messages per sender in the concurrency test. Default 32 × 32. */
  readonly fibers?: number | undefined
  /** Frames written without reading, to fill the transport in the cancellation test. Default 10,000. */
  readonly fillFrames?: number | undefined
  /** Payload length of each filling frame. Default 16; raise it for transports with large OS buffers. */
  readonly fillSize?: number | undefined
  /**
   * How long a live suite waits for a sender to run out of room before the
   * cancellation test checks that it is blocked (and the push test that the
   * receiver's wait holds). Only waiting can show that a send never completes,
   * so live transports (`it.live`) pass a real-time sleep, long enough for a
   * sender that never suspends to get through every filling frame. Leave it
   * out under `it.effect`: a sender then starts on a TestClock wake, and the
   * check runs once it, and every fiber it woke, has suspended.
   */
  readonly settle?: Effect.Effect<void> | undefined
  /**
   * The optional fast paths of `Transport.TransportShape` the transport has
   * (`trySend`; `push`: `attach`): each declared one is tested for order and
   * backpressure, and an end with one not declared fails the suite.
   */
  readonly fastPaths?: FastPathCases.FastPaths | undefined
  /** Omit for transports that carry objects and cannot see a malformed frame. */
  readonly malformed?: Malformed | undefined
  /**
   * The end (index in the pair) that sends a response only to a request it
   * received, as an HTTP server does: it routes each response to the exchange
   * that carried its request. That end sends no responses in the ordering
   * test, and answers the large request only after receiving it.
   */
  readonly solicitedResponses?: 0 | 1 | undefined
  /**
   * The end (index in the pair) whose incoming may fail with `Closed` instead
   * of ending when the other end closes: a Streamable HTTP client learns that
   * the server ended the session only from a 404, which it reports as
   * `SessionExpired` so the session can start over.
   */
  readonly closedOnPeerClose?: 0 | 1 | undefined
  /**
   * Cases the transport is known to fail, each with the reason. They are
   * registered with `fails`, so they turn red once the transport is fixed
   * (then remove the entry).
   */
  readonly knownFailures?: { readonly [K in Case]?: string } | undefined
}

/** The contract's cases, as named in `knownFailures`. */
export type Case =
  | "ordering"
  | "large"
  | "concurrent"
  | "cancellation"
  | "closeFirst"
  | "closeSecond"
  | "endOfStream"
  | "malformed"
  | "fastPaths"
  | "trySend"
  | "push"

/** Registers the contract tests for a transport under `describe(name)`. */
export const suite = (name: string, makePair: MakePair, options?: Options): void => {
  const tester = options?.test ?? it.effect
  const config = Cases.config(options)
  const test = (key: Case, title: string, body: () => Effect.Effect<void, unknown, Scope.Scope>) => {
    const known = options?.knownFailures?.[key]
    if (known === undefined) tester(title, body)
    else tester.fails(`${title} [known failure: ${known}]`, body)
  }
  describe(name, () => {
    test("ordering", "preserves order in both directions", () => Cases.ordering(makePair, config))
    test("large", "delivers a large message intact", () => Cases.large(makePair, config))
    test("concurrent", "delivers concurrent sends exactly once, each sender in order", () =>
      Cases.concurrent(makePair, config)
    )
    test("cancellation", "interrupting a send blocked on a full transport leaves it usable", () =>
      Cases.cancellation(makePair, config)
    )
    test("closeFirst", "closing the first end ends the second end's incoming; later sends fail with Closed", () =>
      Cases.close(makePair, 0, config)
    )
    test("closeSecond", "closing the second end ends the first end's incoming; later sends fail with Closed", () =>
      Cases.close(makePair, 1, config)
    )
    test("endOfStream", "delivers every frame sent before close, then ends", () => Cases.endOfStream(makePair, config))
    test("fastPaths", "declares the fast paths its ends have", () =>
      FastPathCases.declared(makePair, options?.fastPaths)
    )
    if (options?.fastPaths?.trySend === true) {
      test("trySend", "trySend keeps send's order, refuses when full and never delivers a refused frame", () =>
        FastPathCases.trySend(makePair, config)
      )
    }
    if (options?.fastPaths?.push === true) {
      test("push", "push delivery keeps order, holds frames while the receiver waits, then ends", () =>
        FastPathCases.push(makePair, config)
      )
    }
    const malformed = options?.malformed
    if (malformed !== undefined) {
      test("malformed", "malformed frames arrive as decode failures and the stream goes on", () =>
        Cases.malformed(makePair, malformed)
      )
    }
  })
}
