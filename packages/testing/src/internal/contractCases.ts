/**
 * The bodies of the transport contract tests (registered by
 * `TransportContract.suite`). Failures are `assert` failures, so a broken
 * transport fails the test with a description of what went wrong; a hanging
 * one is caught by the test timeout.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import type * as Transport from "@effect-mcp/engine/Transport"
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import { TestClock } from "effect/testing"
import type * as TransportContract from "../TransportContract.ts"
import * as Inbox from "./inbox.ts"
import * as Match from "./match.ts"

export interface Config {
  readonly messages: number
  readonly largeSize: number
  readonly fibers: number
  readonly perFiber: number
  readonly fillFrames: number
  readonly fillSize: number
  /** A live suite's real-time wait; undefined under `it.effect` (see `startQuiet`). */
  readonly settle: Effect.Effect<void> | undefined
  readonly solicitedResponses: 0 | 1 | undefined
  readonly closedOnPeerClose: 0 | 1 | undefined
}

export const config = (options: TransportContract.Options | undefined): Config => ({
  messages: options?.messages ?? 1_000,
  largeSize: options?.largeSize ?? 10 * 1024 * 1024,
  fibers: options?.fibers ?? 32,
  perFiber: 32,
  fillFrames: options?.fillFrames ?? 10_000,
  fillSize: options?.fillSize ?? 16,
  settle: options?.settle,
  solicitedResponses: options?.solicitedResponses,
  closedOnPeerClose: options?.closedOnPeerClose
})

const defaults = config(undefined)

export const range = (n: number): ReadonlyArray<number> => Array.from({ length: n }, (_, i) => i)

const quietTick = 1

/**
 * Forks `effect` and returns its fiber once all it set going has come to rest
 * (suspended or finished). Under `it.effect` the fiber starts on a TestClock
 * wake, and `TestClock.adjust` returns only once the woken fiber, and every
 * fiber it resumed or forked, has suspended: a signal, not a count of turns.
 * A live suite has no such signal for "nothing more will happen", so it waits
 * its `settle` (or less, if the fiber finishes first).
 */
export const startQuiet = <A, E>(config: Config, effect: Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const live = config.settle
    if (live !== undefined) {
      const fiber = yield* Effect.forkChild(effect)
      yield* Effect.raceFirst(Effect.asVoid(Fiber.await(fiber)), live)
      return fiber
    }
    const fiber = yield* Effect.forkChild(Effect.andThen(Effect.sleep(quietTick), effect))
    yield* TestClock.adjust(quietTick)
    return fiber
  })

// ---------------------------------------------------------------------------
// Reading an end
// ---------------------------------------------------------------------------

const describeExit = (exit: Exit.Exit<void, Transport.TransportError> | undefined) =>
  exit === undefined ? "still open" : Exit.isSuccess(exit) ? "ended" : `failed: ${String(exit.cause)}`

export const reader = Effect.fnUntraced(function* (end: TransportContract.End, label: string) {
  const inbox = yield* Inbox.make(end.incoming)

  const takeWith = <B>(what: string, check: () => B | undefined) =>
    Effect.flatMap(inbox.waitFor(check), (found) =>
      found === undefined
        ? Effect.sync(() =>
            assert.fail(
              `${label}: expected ${what}, but incoming ${describeExit(inbox.ended())} with ${inbox.pending.length} frames pending`
            )
          )
        : Effect.succeed(found)
    )

  /** The next `n` frames. */
  const take = (n: number) =>
    takeWith(`${n} frames`, () => (inbox.pending.length >= n ? inbox.pending.splice(0, n) : undefined))

  /** Every frame up to and including the first that satisfies `stop`. */
  const takeThrough = (what: string, stop: (frame: Transport.Incoming) => boolean) =>
    takeWith(what, () => {
      const index = inbox.pending.findIndex(stop)
      return index === -1 ? undefined : inbox.pending.splice(0, index + 1)
    })

  /** Waits for the end of `incoming` and returns how it ended. */
  const ended = Effect.map(
    inbox.waitFor(() => undefined),
    () => inbox.ended()!
  )

  return { take, takeThrough, ended, pending: inbox.pending }
})

const messageOf = (frame: Transport.Incoming): JsonRpc.Message => {
  if (Result.isFailure(frame)) return assert.fail(`expected a message, got a decode failure: ${frame.failure.message}`)
  if (JsonRpcCodec.isBatch(frame.success)) return assert.fail(`expected a message, got a batch`)
  return frame.success
}

export const paramsOf = (frame: Transport.Incoming): { readonly [key: string]: unknown } => {
  const message = messageOf(frame)
  const params = "params" in message ? message.params : undefined
  return Predicate.isObject(params) ? params : assert.fail(`expected object params in ${Match.describe(message)}`)
}

export const methodIs =
  (method: string) =>
  (frame: Transport.Incoming): boolean =>
    Result.isSuccess(frame) &&
    !JsonRpcCodec.isBatch(frame.success) &&
    (frame.success as { readonly method?: unknown }).method === method

const sendAll = (end: TransportContract.End, frames: ReadonlyArray<Transport.Outgoing>) =>
  Effect.forEach(frames, (frame) => end.send(frame), { discard: true })

const assertClosedSend = Effect.fnUntraced(function* (end: TransportContract.End, label: string) {
  const exit = yield* Effect.exit(end.send(JsonRpc.notification("late")))
  if (Exit.isSuccess(exit)) return assert.fail(`${label}: send after close succeeded`)
  const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  assert.isDefined(error, `${label}: send after close died or was interrupted: ${String(exit.cause)}`)
  if (error?._tag !== "Fail") return
  assert.strictEqual(error.error._tag, "TransportError", `${label}: send after close`)
  assert.strictEqual(error.error.reason, "Closed", `${label}: send after close: ${error.error.message}`)
})

// ---------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------

/**
 * Requests, notifications and responses, so every kind crosses in both
 * directions. An end that answers only requests it received sends no
 * responses here: its answers travel apart from its other messages (an HTTP
 * server's on each request's exchange), where no order across them exists.
 */
const sequence = (n: number, tag: string, responses: boolean): ReadonlyArray<JsonRpc.Message> =>
  range(n).map((i) =>
    i % 3 === 0
      ? JsonRpc.request(i, "seq", { i, tag })
      : i % 3 === 1 || !responses
        ? JsonRpc.notification("seq", { i, tag })
        : JsonRpc.success(i, { i, tag })
  )

export const ordering = (makePair: TransportContract.MakePair, config: Config) =>
  Effect.gen(function* () {
    const [a, b] = yield* makePair
    const ra = yield* reader(a, "first end")
    const rb = yield* reader(b, "second end")
    const toB = sequence(config.messages, "first->second", config.solicitedResponses !== 0)
    const toA = sequence(config.messages, "second->first", config.solicitedResponses !== 1)
    yield* Effect.all([sendAll(a, toB), sendAll(b, toA)], { concurrency: "unbounded", discard: true })
    const [atB, atA] = yield* Effect.all([rb.take(config.messages), ra.take(config.messages)], {
      concurrency: "unbounded"
    })
    assert.deepStrictEqual(atB.map(messageOf), toB)
    assert.deepStrictEqual(atA.map(messageOf), toA)
  })

// Quotes, escapes, control characters, multi-byte and astral characters: what
// a codec or a framing layer is most likely to damage.
const largeChunk = 'plain ascii "quoted" \\back\\slash\t\r\n\u0000 caf\u00e9 \u65e5\u672c \ud83d\ude00 \u2028\u2029 '

const largeString = (size: number): string => {
  let text = largeChunk.repeat(Math.ceil(size / largeChunk.length)).slice(0, size)
  // Never end on half a surrogate pair: that would not survive UTF-8 on a byte transport.
  const last = text.charCodeAt(text.length - 1)
  if (last >= 0xd800 && last <= 0xdbff) text = `${text.slice(0, -1)}x`
  return text
}

export const large = (makePair: TransportContract.MakePair, config: Config) =>
  Effect.gen(function* () {
    const [a, b] = yield* makePair
    const ra = yield* reader(a, "first end")
    const rb = yield* reader(b, "second end")
    const payload = largeString(config.largeSize)
    yield* a.send(JsonRpc.request(1, "large", { data: payload }))
    yield* a.send(JsonRpc.notification("after-large"))
    const answer = b.send(JsonRpc.success(1, { data: payload }))
    // An end that answers only requests it received waits for the request.
    if (config.solicitedResponses !== 1) yield* answer
    const [big, after] = yield* rb.take(2)
    if (config.solicitedResponses === 1) yield* answer
    const data = paramsOf(big!).data
    assert.strictEqual(typeof data, "string")
    assert.strictEqual((data as string).length, payload.length, "length of the large parameter")
    assert.isTrue(data === payload, "the large parameter arrived altered")
    assert.isTrue(methodIs("after-large")(after!), "the frame after the large one")
    const [back] = yield* ra.take(1)
    const result = messageOf(back!) as JsonRpc.SuccessResponse
    assert.isTrue((result.result as { readonly data?: unknown }).data === payload, "the large result arrived altered")
  })

export const concurrent = (makePair: TransportContract.MakePair, config: Config) =>
  Effect.gen(function* () {
    const [a, b] = yield* makePair
    const rb = yield* reader(b, "second end")
    yield* Effect.forEach(
      range(config.fibers),
      (fiber) =>
        Effect.forEach(range(config.perFiber), (i) => a.send(JsonRpc.notification("concurrent", { fiber, i })), {
          discard: true
        }),
      { concurrency: "unbounded", discard: true }
    )
    // Sent after every concurrent send returned, so a duplicate arrives before it.
    yield* a.send(JsonRpc.notification("concurrent-done"))
    const through = yield* rb.takeThrough("the frame sent after the concurrent ones", methodIs("concurrent-done"))
    const frames = through.slice(0, -1)
    const seen = new Map<number, Array<number>>()
    for (const frame of frames) {
      const params = paramsOf(frame)
      const list = seen.get(params.fiber as number) ?? []
      list.push(params.i as number)
      seen.set(params.fiber as number, list)
    }
    for (const fiber of range(config.fibers)) {
      assert.deepStrictEqual(seen.get(fiber), [...range(config.perFiber)], `messages of sender ${fiber}`)
    }
    assert.strictEqual(frames.length, config.fibers * config.perFiber, "frames beyond those sent (duplicates)")
  })

export const cancellation = (makePair: TransportContract.MakePair, config: Config) =>
  Effect.gen(function* () {
    const [a, b] = yield* makePair
    const pad = "p".repeat(config.fillSize)
    const sender = yield* startQuiet(
      config,
      Effect.forEach(range(config.fillFrames), (i) => a.send(JsonRpc.notification("fill", { i, pad })), {
        discard: true
      })
    )
    assert.isUndefined(
      sender.pollUnsafe(),
      `${config.fillFrames} frames were accepted without a reader: send never suspended on a full transport`
    )
    yield* Fiber.interrupt(sender)

    const rb = yield* reader(b, "second end")
    yield* a.send(JsonRpc.notification("after-interrupt"))
    const frames = yield* rb.takeThrough("the frame sent after the interrupt", methodIs("after-interrupt"))
    const filled = frames.slice(0, -1).map((frame) => paramsOf(frame).i)
    assert.isAbove(filled.length, 0, "no frame was delivered before the blocked one")
    assert.deepStrictEqual(filled, [...range(filled.length)], "frames sent before the interrupt")

    const ra = yield* reader(a, "first end")
    yield* b.send(JsonRpc.notification("reverse"))
    const [reverse] = yield* ra.take(1)
    assert.isTrue(methodIs("reverse")(reverse!), "the other direction after the interrupt")
  })

/**
 * Checks how an end's incoming finished after the other end closed: it ends,
 * or (for the end named by `closedOnPeerClose`) fails with `Closed`.
 */
const assertPeerClosed = (
  exit: Exit.Exit<void, Transport.TransportError>,
  index: 0 | 1,
  config: Config,
  label: string
) => {
  if (Exit.isSuccess(exit) || config.closedOnPeerClose !== index) {
    return assert.isTrue(Exit.isSuccess(exit), `${label} should end, it ${describeExit(exit)}`)
  }
  const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  assert.isTrue(
    error?._tag === "Fail" && error.error.reason === "Closed",
    `${label} should end or fail with Closed, it ${describeExit(exit)}`
  )
}

export const close = (makePair: TransportContract.MakePair, which: 0 | 1, config: Config = defaults) =>
  Effect.gen(function* () {
    const pair = yield* makePair
    const closer = pair[which]
    const otherIndex = which === 0 ? 1 : 0
    const other = pair[otherIndex]
    const rOther = yield* reader(other, "other end")
    const rCloser = yield* reader(closer, "closing end")
    yield* closer.send(JsonRpc.notification("before-close"))
    yield* closer.close
    const [last] = yield* rOther.take(1)
    assert.isTrue(methodIs("before-close")(last!), "the frame sent before close")
    assertPeerClosed(yield* rOther.ended, otherIndex, config, "the other end's incoming")
    yield* rCloser.ended
    yield* assertClosedSend(closer, "closing end")
    yield* assertClosedSend(other, "other end")
    // Closing twice is harmless.
    yield* closer.close
    yield* other.close
  })

export const endOfStream = (makePair: TransportContract.MakePair, config: Config = defaults) =>
  Effect.gen(function* () {
    const [a, b] = yield* makePair
    const rb = yield* reader(b, "second end")
    const sent = range(100).map((i) => JsonRpc.notification("eof", { i }))
    yield* sendAll(a, sent)
    yield* a.close
    const frames = yield* rb.take(sent.length)
    assert.deepStrictEqual(frames.map(messageOf), sent)
    assertPeerClosed(yield* rb.ended, 1, config, "incoming")
    assert.strictEqual(rb.pending.length, 0, "frames after end of stream")
  })

const assertFailure = (
  frame: Transport.Incoming | undefined,
  tag: "ParseError" | "InvalidRequest",
  id: JsonRpc.RequestId | null,
  label: string
) => {
  if (frame === undefined || Result.isSuccess(frame)) {
    return assert.fail(
      `${label}: expected a decode failure, got ${frame === undefined ? "nothing" : Match.describe(frame.success)}`
    )
  }
  assert.strictEqual(frame.failure.error._tag, tag, label)
  assert.strictEqual(frame.failure.id, id, `${label}: id to answer`)
}

// Objects a JSON-RPC sender must never produce; the codec path turns them into failures.
const invalid = (u: object): JsonRpc.Message => u as JsonRpc.Message

export const malformed = (makePair: TransportContract.MakePair, how: TransportContract.Malformed) =>
  Effect.gen(function* () {
    const [a, b] = yield* makePair
    const rb = yield* reader(b, "second end")
    const badBatch = [JsonRpc.notification("ok"), invalid({ jsonrpc: "2.0", id: null, method: "bad" })]
    if (how === "objects") {
      yield* a.send(invalid({ jsonrpc: "1.0", id: 7, method: "x" }))
      yield* a.send(invalid({ jsonrpc: "2.0", id: null, method: "x" }))
      yield* a.send(badBatch)
    } else {
      yield* how.sendRaw(a, "{not json")
      yield* how.sendRaw(a, '{"jsonrpc":"1.0","id":7,"method":"x"}')
      yield* how.sendRaw(a, "[]")
      yield* how.sendRaw(a, JSON.stringify(badBatch))
    }
    yield* a.send(JsonRpc.notification("still-alive"))
    const frames = yield* rb.takeThrough("the valid frame after the malformed ones", methodIs("still-alive"))
    if (how === "objects") {
      assert.strictEqual(frames.length, 4, "frames received")
      assertFailure(frames[0], "InvalidRequest", 7, "wrong jsonrpc version")
      assertFailure(frames[1], "InvalidRequest", null, "null request id")
    } else {
      assert.strictEqual(frames.length, 5, "frames received")
      assertFailure(frames[0], "ParseError", null, "invalid JSON")
      assertFailure(frames[1], "InvalidRequest", 7, "wrong jsonrpc version")
      assertFailure(frames[2], "InvalidRequest", null, "empty batch")
    }
    const batch = frames[frames.length - 2]!
    if (Result.isFailure(batch) || !JsonRpcCodec.isBatch(batch.success)) {
      return assert.fail(`expected a batch with one invalid entry, got ${Match.describe(batch)}`)
    }
    assert.strictEqual(batch.success.length, 2)
    assert.deepStrictEqual(batch.success[0], JsonRpc.notification("ok"))
    const entry = batch.success[1]
    assert.isTrue(JsonRpcCodec.isDecodeFailure(entry), "the invalid batch entry is a decode failure")
    if (JsonRpcCodec.isDecodeFailure(entry)) assert.strictEqual(entry.error._tag, "InvalidRequest")
  })
