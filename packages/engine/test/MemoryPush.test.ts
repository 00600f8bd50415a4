import { assert, describe, it } from "@effect/vitest"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { clientInfo, forkIdle, initializeRequest, runIdle, serverInfo } from "./fixtures.ts"

const echo: Session.Handler = (params) =>
  Effect.succeed({ content: [{ type: "text", text: String((params as { arguments: { n: number } }).arguments.n) }] })

/** A server session attached to one end of a pair of `capacity`, the other end read as a raw stream. */
const rawServer = (capacity: number, options: Partial<ServerSession.Options> = {}) =>
  Effect.gen(function* () {
    const [serverEnd, rawEnd] = yield* MemoryTransport.makePair({ capacity })
    const server = yield* ServerSession.make({ serverInfo, capabilities: { tools: {} }, ...options }).pipe(
      Effect.provideService(Transport.Transport, serverEnd)
    )
    const inbox = yield* Queue.unbounded<JsonRpc.Message>()
    yield* rawEnd.incoming.pipe(
      Stream.runForEach((frame) =>
        Result.isSuccess(frame) ? Queue.offer(inbox, frame.success as JsonRpc.Message) : Effect.void
      ),
      Effect.forkScoped
    )
    yield* rawEnd.send(initializeRequest(0))
    yield* Queue.take(inbox)
    yield* rawEnd.send(JsonRpc.notification("notifications/initialized"))
    return { server, serverEnd, rawEnd, inbox }
  })

describe("MemoryTransport push delivery", () => {
  it.effect("with room for 2 frames, 300 concurrent calls are each answered once with their own result", () =>
    Effect.gen(function* () {
      const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ capacity: 2 })
      yield* ServerSession.make({
        serverInfo,
        capabilities: { tools: {} },
        handlers: new Map([["tools/call", echo]])
      }).pipe(Effect.provideService(Transport.Transport, serverEnd))
      const client = yield* ClientSession.make({
        clientInfo,
        capabilities: {},
        supportedVersions: ["2025-11-25"]
      }).pipe(Effect.provideService(Transport.Transport, clientEnd))
      const results = yield* Effect.forEach(
        Array.from({ length: 300 }, (_, i) => i),
        (n) => client.request("tools/call", { name: "echo", arguments: { n } }),
        { concurrency: "unbounded" }
      )
      for (const [n, result] of results.entries()) {
        assert.deepStrictEqual(result, { content: [{ type: "text", text: String(n) }] })
      }
      assert.strictEqual(client.peer.inFlight(), 0)
    })
  )

  it.effect("responses that find the other side full wait for room and keep the order of the requests", () =>
    Effect.gen(function* () {
      const { rawEnd, inbox } = yield* rawServer(2, { handlers: new Map([["tools/call", echo]]) })
      // Sent without waiting for answers: the server answers faster than the raw side reads.
      yield* Effect.forEach(
        Array.from({ length: 60 }, (_, i) => i + 1),
        (id) => rawEnd.send(JsonRpc.request(id, "tools/call", { name: "echo", arguments: { n: id } })),
        { discard: true }
      )
      const ids: Array<unknown> = []
      for (let i = 0; i < 60; i++) {
        const message = (yield* Queue.take(inbox)) as JsonRpc.Response
        ids.push(message.id)
        assert.deepStrictEqual((message as { result?: unknown }).result, {
          content: [{ type: "text", text: String(message.id) }]
        })
      }
      assert.deepStrictEqual(
        ids,
        Array.from({ length: 60 }, (_, i) => i + 1)
      )
    })
  )

  it.effect("a notification handler that waits holds the frames behind it, which are then handled in order", () =>
    Effect.gen(function* () {
      const release = yield* Deferred.make<void>()
      const entered = yield* Deferred.make<void>()
      const seen: Array<string> = []
      const { rawEnd, inbox } = yield* rawServer(4, {
        handlers: new Map<string, Session.Handler>([
          [
            "tools/call",
            (params) =>
              Effect.andThen(
                Effect.sync(() => seen.push("call")),
                echo(params, undefined as never)
              )
          ]
        ]),
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
      yield* rawEnd.send(JsonRpc.notification("notifications/roots/list_changed"))
      // More frames than the mailbox holds: the later sends wait for room.
      // Returns once the sender has come to rest: waiting for room, or done.
      const sender = yield* forkIdle(
        Effect.forEach(
          [1, 2, 3, 4, 5, 6],
          (id) => rawEnd.send(JsonRpc.request(id, "tools/call", { name: "echo", arguments: { n: id } })),
          { discard: true }
        )
      )
      yield* Deferred.await(entered)
      assert.deepStrictEqual(seen, [])
      assert.isUndefined(sender.pollUnsafe(), "the sender waits for room")
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(sender)
      const ids: Array<unknown> = []
      for (let i = 0; i < 6; i++) ids.push(((yield* Queue.take(inbox)) as JsonRpc.Response).id)
      assert.deepStrictEqual(ids, [1, 2, 3, 4, 5, 6])
      assert.deepStrictEqual(seen, ["notification", "call", "call", "call", "call", "call", "call"])
    })
  )

  it.effect(
    "the other end closing while a handler holds the input: what came before is handled, then the session closes",
    () =>
      Effect.gen(function* () {
        const release = yield* Deferred.make<void>()
        const entered = yield* Deferred.make<void>()
        let calls = 0
        const { server, rawEnd } = yield* rawServer(8, {
          handlers: new Map<string, Session.Handler>([
            [
              "tools/call",
              (params) =>
                Effect.andThen(
                  Effect.sync(() => calls++),
                  echo(params, undefined as never)
                )
            ]
          ]),
          notificationHandlers: new Map<string, Session.NotificationHandler>([
            [
              "notifications/roots/list_changed",
              () => Effect.andThen(Deferred.succeed(entered, undefined), Deferred.await(release))
            ]
          ])
        })
        yield* rawEnd.send(JsonRpc.notification("notifications/roots/list_changed"))
        yield* rawEnd.send(JsonRpc.request(7, "tools/call", { name: "echo", arguments: { n: 7 } }))
        const closed = yield* Effect.forkChild(server.closed)
        yield* Deferred.await(entered)
        // Returns once all the close set going has come to rest.
        yield* runIdle(rawEnd.close)
        assert.isUndefined(closed.pollUnsafe(), "the input is not over while a frame waits")
        assert.strictEqual(calls, 0)
        yield* Deferred.succeed(release, undefined)
        assert.isTrue(Exit.isSuccess(yield* Fiber.join(closed)))
        assert.strictEqual(calls, 1)
        const error = yield* Effect.flip(server.request("ping"))
        assert.strictEqual(error._tag, "SessionClosed")
      })
  )

  it.effect("an end that was read is not attached again, nor one handed a receiver without `push`", () =>
    Effect.gen(function* () {
      const [a, b] = yield* MemoryTransport.makePair()
      const receiver: Transport.Receiver = {
        offer: () => Effect.succeed(true),
        end: () => {},
        drained: Effect.void
      }
      assert.isFalse(a.attach?.(receiver))
      const reader = yield* Stream.runHead(a.incoming).pipe(Effect.forkChild)
      yield* b.send(JsonRpc.notification("notifications/initialized"))
      const head = yield* Fiber.join(reader)
      assert.strictEqual(head._tag, "Some")
      // A session made on the end that was read falls back to reading it.
      const server = yield* ServerSession.make({ serverInfo, capabilities: {} }).pipe(
        Effect.provideService(Transport.Transport, a)
      )
      const answer = yield* Queue.unbounded<unknown>()
      yield* b.incoming.pipe(
        Stream.runForEach((frame) => Queue.offer(answer, frame)),
        Effect.forkScoped
      )
      yield* b.send(JsonRpc.request(1, "ping"))
      const frame = (yield* Queue.take(answer)) as Transport.Incoming
      assert.isTrue(Result.isSuccess(frame))
      if (Result.isSuccess(frame)) assert.deepStrictEqual(frame.success, { jsonrpc: "2.0", id: 1, result: {} })
      assert.strictEqual(server.state.phase, "New")
    })
  )

  it.effect("a wrapper made by spreading an end is read and written through, not bypassed", () =>
    Effect.gen(function* () {
      const [a, b] = yield* MemoryTransport.makePair()
      let read = 0
      let sent = 0
      const wrapper: Transport.TransportShape = {
        ...a,
        incoming: Stream.tap(a.incoming, () => Effect.sync(() => read++)),
        send: (frame, options) =>
          Effect.andThen(
            Effect.sync(() => sent++),
            a.send(frame, options)
          )
      }
      assert.isUndefined(wrapper.attach)
      yield* ServerSession.make({ serverInfo, capabilities: {} }).pipe(
        Effect.provideService(Transport.Transport, wrapper)
      )
      const answers = yield* Queue.unbounded<Transport.Incoming>()
      yield* b.incoming.pipe(
        Stream.runForEach((frame) => Queue.offer(answers, frame)),
        Effect.forkScoped
      )
      yield* b.send(JsonRpc.request(1, "ping"))
      const frame = yield* Queue.take(answers)
      assert.isTrue(Result.isSuccess(frame))
      assert.strictEqual(read, 1)
      assert.strictEqual(sent, 1)
    })
  )
})
