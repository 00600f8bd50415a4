/**
 * The contract cases of a transport's optional fast paths (`trySend`, and
 * push delivery through `attach` to a receiver with `push`): they must keep
 * the guarantees of `send` and `incoming`, order and backpressure.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import type * as Transport from "@effect-mcp/engine/Transport"
import { assert } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as TransportContract from "../TransportContract.ts"
import { type Config, methodIs, paramsOf, range, reader, startQuiet } from "./contractCases.ts"

/** Which fast paths a transport declares; an end that has one it did not declare fails the suite. */
export interface FastPaths {
  readonly trySend?: boolean | undefined
  readonly push?: boolean | undefined
}

const indexes = [0, 1] as const

/** Every fast path an end has is declared, and a declared one exists on some end. */
export const declared = (makePair: TransportContract.MakePair, fastPaths: FastPaths | undefined) =>
  Effect.gen(function* () {
    const pair = yield* makePair
    const has = {
      trySend: pair.some((end) => end.trySend !== undefined),
      push: pair.some((end) => end.attach !== undefined)
    }
    for (const key of ["trySend", "push"] as const) {
      assert.strictEqual(
        has[key],
        fastPaths?.[key] === true,
        has[key] ? `an end has the ${key} fast path: declare it in fastPaths` : `no end has the declared ${key}`
      )
    }
  })

/**
 * `trySend` and `send` interleaved arrive in the order taken; with nobody
 * reading, `trySend` refuses once the transport is full (backpressure), and a
 * refused frame is never delivered.
 */
export const trySend = (makePair: TransportContract.MakePair, config: Config) =>
  Effect.gen(function* () {
    for (const from of indexes) {
      const pair = yield* makePair
      const sender = pair[from]
      const other = pair[1 - from]!
      const take = sender.trySend
      if (take === undefined) continue
      const label = `trySend from end ${from}`

      // Backpressure: nobody reads yet.
      const pad = "p".repeat(config.fillSize)
      const accepted: Array<number> = []
      let refused = -1
      for (const i of range(config.fillFrames)) {
        if (take.call(sender, JsonRpc.notification("fill", { i, pad }))) accepted.push(i)
        else {
          refused = i
          break
        }
      }
      assert.isAtLeast(refused, 0, `${label}: ${config.fillFrames} frames taken without a reader: no backpressure`)

      // Interleaved with `send`, as a sender falls back when refused.
      const rb = yield* reader(other, label)
      for (const i of range(config.messages)) {
        const frame = JsonRpc.notification("mixed", { i })
        if (i % 2 === 1 || !take.call(sender, frame)) yield* sender.send(frame)
      }
      yield* sender.send(JsonRpc.notification("done"))
      const frames = yield* rb.takeThrough(`${label}: every frame`, methodIs("done"))
      const fills = frames.filter(methodIs("fill")).map((frame) => paramsOf(frame).i)
      const mixed = frames.filter(methodIs("mixed")).map((frame) => paramsOf(frame).i)
      assert.deepStrictEqual(fills, accepted, `${label}: exactly the frames trySend took, in order`)
      assert.deepStrictEqual(mixed, [...range(config.messages)], `${label}: trySend and send in one order`)
    }
  })

/**
 * Push delivery: frames arrive in order, exactly once; a `push` that returns
 * false holds every later frame until the receiver resumes; the end comes
 * after the last frame. A transport may hand frames to `offer` instead.
 */
export const push = (makePair: TransportContract.MakePair, config: Config) =>
  Effect.gen(function* () {
    for (const to of indexes) {
      const pair = yield* makePair
      const receiverEnd = pair[to]
      const sender = pair[1 - to]!
      if (receiverEnd.attach === undefined) continue
      const label = `push to end ${to}`
      const got: Array<unknown> = []
      const ended = Deferred.makeUnsafe<void>()
      let paused: Transport.PushSource | undefined
      let violations = 0
      // Completed when the receiver pauses or has every frame: a live transport whose frames cross
      // another process delivers them after the sender is done, so a live suite waits for this.
      let progressed = Deferred.makeUnsafe<void>()
      const take = (frame: Transport.Incoming) => {
        if (paused !== undefined) violations++
        got.push(methodIs("push")(frame) ? paramsOf(frame).i : "other")
        if (got.length >= config.messages) Deferred.doneUnsafe(progressed, Exit.void)
      }
      const receiver: Transport.Receiver = {
        push: (frame, source) => {
          take(frame)
          // Every seventh frame is handled "in a fiber": the source must wait.
          if (got.length % 7 !== 0) return true
          paused = source
          Deferred.doneUnsafe(progressed, Exit.void)
          return false
        },
        offer: (frame) =>
          Effect.sync(() => {
            take(frame)
            return true
          }),
        end: () => Deferred.doneUnsafe(ended, Exit.void),
        drained: Deferred.await(ended)
      }
      if (!receiverEnd.attach(receiver)) {
        // It could not push: `incoming` delivers instead.
        const rb = yield* reader(receiverEnd, label)
        yield* sender.send(JsonRpc.notification("push", { i: 0 }))
        yield* rb.take(1)
        continue
      }
      const sending = yield* startQuiet(
        config,
        Effect.forEach(range(config.messages), (i) => sender.send(JsonRpc.notification("push", { i })), {
          discard: true
        })
      )
      // Each step returns once everything has come to rest: the receiver then
      // waits (a frame pushed while it waited counts as a violation), or the
      // sender is done, or delivery is stuck.
      while (got.length < config.messages) {
        if (paused === undefined && config.settle !== undefined) yield* Deferred.await(progressed)
        if (got.length >= config.messages) break
        const source = paused
        if (source === undefined) {
          assert.fail(`${label}: ${got.length} of ${config.messages} frames arrived`)
        }
        paused = undefined
        progressed = Deferred.makeUnsafe<void>()
        yield* startQuiet(
          config,
          Effect.sync(() => source.resume())
        )
      }
      yield* Fiber.join(sending)
      assert.strictEqual(violations, 0, `${label}: frames pushed while paused`)
      assert.deepStrictEqual(got, [...range(config.messages)], `${label}: order`)
      if (paused !== undefined) paused.resume()
      yield* sender.close
      yield* Deferred.await(ended)
    }
  })
