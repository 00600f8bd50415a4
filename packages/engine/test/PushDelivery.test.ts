import { assert, describe, it } from "@effect/vitest"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import type * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { forkIdle, initializeRequest, runIdle, serverInfo } from "./fixtures.ts"

/** A transport that pushes frames to its receiver; it counts every attempt to read `incoming`. */
const pushTransport = () => {
  const sent: Array<Transport.Outgoing> = []
  const waiters: Array<{ readonly count: number; readonly done: Deferred.Deferred<void> }> = []
  /** Waits until `count` messages have been sent. */
  const sentCount = (count: number) =>
    Effect.suspend(() => {
      if (ids(sent).length >= count) return Effect.void
      const done = Deferred.makeUnsafe<void>()
      waiters.push({ count, done })
      return Deferred.await(done)
    })
  const state = { reads: 0, receiver: undefined as Transport.Receiver | undefined }
  const transport: Transport.TransportShape = {
    incoming: Stream.unwrap(
      Effect.sync(() => {
        state.reads++
        return Stream.never
      })
    ),
    send: (frame) =>
      Effect.sync(() => {
        sent.push(frame)
        for (const waiter of waiters.splice(0)) {
          if (ids(sent).length >= waiter.count) Deferred.doneUnsafe(waiter.done, Exit.void)
          else waiters.push(waiter)
        }
      }),
    attach: (receiver) => {
      state.receiver = receiver
      return true
    }
  }
  const offer = (message: JsonRpcCodec.Decoded) => state.receiver!.offer(Result.succeed(message))
  return { transport, sent, sentCount, state, offer }
}

const ready = (
  push: ReturnType<typeof pushTransport>,
  options: Partial<ServerSession.Options> = {}
): Effect.Effect<Session.SessionShape, never, Scope.Scope> =>
  Effect.gen(function* () {
    const session = yield* ServerSession.make({ serverInfo, capabilities: { tools: {} }, ...options }).pipe(
      Effect.provideService(Transport.Transport, push.transport)
    )
    assert.isTrue(yield* push.offer(initializeRequest(1)))
    assert.isTrue(yield* push.offer(JsonRpc.notification("notifications/initialized")))
    yield* push.sentCount(1)
    // The session handles frames in order: once it answers a ping, it has handled
    // `initialized`. The ping's answer is taken out again so tests count from here.
    assert.isTrue(yield* push.offer(JsonRpc.request("ready", "ping")))
    yield* push.sentCount(2)
    push.sent.pop()
    return session
  })

const ids = (sent: ReadonlyArray<Transport.Outgoing>) =>
  sent.flatMap((frame) => (Array.isArray(frame) ? frame : [frame])).map((m) => (m as { readonly id?: unknown }).id)

describe("push delivery (Transport.attach)", () => {
  it.effect("a session over a pushing transport never reads incoming, and serves what is pushed", () =>
    Effect.gen(function* () {
      const push = pushTransport()
      const session = yield* ready(push)
      assert.strictEqual(session.state.phase, "Ready")
      assert.isTrue(yield* push.offer(JsonRpc.request(2, "ping")))
      // Handled a tick later, not inside `offer`: the offering side finishes what it does around it first.
      assert.deepStrictEqual(ids(push.sent), [1])
      yield* push.sentCount(2)
      // That wait ended inside the handler fiber's send; the fiber has yet to end
      // and leave the in-flight table. It ends once this fiber suspends to rest.
      yield* runIdle(Effect.void)
      assert.deepStrictEqual(ids(push.sent), [1, 2])
      assert.strictEqual(push.state.reads, 0)
      assert.strictEqual(session.peer.inFlight(), 0)
    })
  )

  it.effect("a slow notification handler holds the frames behind it, in order, and a full backlog suspends", () =>
    Effect.gen(function* () {
      const release = yield* Deferred.make<void>()
      const entered = yield* Deferred.make<void>()
      const seen: Array<string> = []
      const push = pushTransport()
      yield* ready(push, {
        notificationHandlers: new Map<string, Session.NotificationHandler>([
          [
            "notifications/roots/list_changed",
            () =>
              Deferred.succeed(entered, undefined).pipe(
                Effect.andThen(Deferred.await(release)),
                Effect.andThen(Effect.sync(() => seen.push("notification")))
              )
          ]
        ])
      })
      assert.isTrue(yield* push.offer(JsonRpc.notification("notifications/roots/list_changed")))
      yield* Deferred.await(entered)
      // 256 frames wait behind the handler; the next offer suspends until there is room.
      for (let i = 0; i < 256; i++) assert.isTrue(yield* push.offer(JsonRpc.request(100 + i, "ping")))
      const blocked = yield* forkIdle(push.offer(JsonRpc.request(999, "ping")))
      assert.isUndefined(blocked.pollUnsafe())
      assert.deepStrictEqual(ids(push.sent), [1])
      yield* Deferred.succeed(release, undefined)
      assert.isTrue(yield* Fiber.join(blocked))
      yield* push.sentCount(258)
      assert.deepStrictEqual(seen, ["notification"])
      const answered = ids(push.sent)
      assert.strictEqual(answered.length, 258)
      assert.deepStrictEqual(answered.slice(0, 3), [1, 100, 101])
      assert.strictEqual(answered[257], 999)
    })
  )

  it.effect("ending the input handles what was offered, then closes the session; later offers are refused", () =>
    Effect.gen(function* () {
      const release = yield* Deferred.make<void>()
      const entered = yield* Deferred.make<void>()
      let handled = 0
      const push = pushTransport()
      const session = yield* ready(push, {
        notificationHandlers: new Map<string, Session.NotificationHandler>([
          [
            "notifications/roots/list_changed",
            () =>
              Deferred.succeed(entered, undefined).pipe(
                Effect.andThen(Deferred.await(release)),
                Effect.andThen(Effect.sync(() => handled++))
              )
          ]
        ])
      })
      yield* push.offer(JsonRpc.notification("notifications/roots/list_changed"))
      yield* push.offer(JsonRpc.notification("notifications/roots/list_changed"))
      yield* Deferred.await(entered)
      push.state.receiver!.end()
      const drained = yield* forkIdle(push.state.receiver!.drained)
      assert.isUndefined(drained.pollUnsafe())
      assert.isFalse(yield* push.offer(JsonRpc.request(5, "ping")))
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(drained)
      assert.strictEqual(handled, 2)
      const closed = yield* session.closed
      assert.isTrue(Exit.isSuccess(closed))
      const error = yield* Effect.flip(session.request("ping"))
      assert.strictEqual(error._tag, "SessionClosed")
    })
  )

  it.effect("closing the session's scope interrupts a running notification handler and refuses later frames", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      let finalized = 0
      const push = pushTransport()
      const scope = yield* Scope.make()
      yield* ready(push, {
        notificationHandlers: new Map<string, Session.NotificationHandler>([
          [
            "notifications/roots/list_changed",
            () =>
              Effect.andThen(Deferred.succeed(started, undefined), Effect.never).pipe(
                Effect.ensuring(Effect.sync(() => finalized++))
              )
          ]
        ])
      }).pipe(Scope.provide(scope))
      yield* push.offer(JsonRpc.notification("notifications/roots/list_changed"))
      yield* Deferred.await(started)
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual(finalized, 1)
      assert.isFalse(yield* push.offer(JsonRpc.request(7, "ping")))
      yield* push.state.receiver!.drained
    })
  )
})
