import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as Peer from "@effect-mcp/engine/Peer"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import * as Transport from "@effect-mcp/engine/Transport"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import * as TestPeer from "../src/TestPeer.ts"

const serverInfo = { name: "server-under-test", version: "1.0.0" }

/** A Peer under test that echoes every request's params and records notifications. */
const echoPeer = (transport: Transport.TransportShape) =>
  Effect.gen(function* () {
    const notifications: Array<JsonRpc.Notification> = []
    const peer = yield* Peer.make(transport, {
      request: (request) => Effect.succeed({ echo: request.params ?? null }),
      notification: (notification) =>
        Effect.sync(() => {
          notifications.push(notification)
        }),
      errorObject: (_request, error) => McpError.toErrorObject(error),
      refuseBatch: () => undefined,
      refuseInBatch: () => undefined,
      cancellable: () => true
    })
    return { peer, notifications }
  })

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) return assert.fail("expected a failure")
  const reason = exit.cause.reasons.find((r) => r._tag === "Fail")
  return reason !== undefined && reason._tag === "Fail" ? reason.error : assert.fail(`not a failure: ${exit.cause}`)
}

describe("TestPeer", () => {
  for (const codec of [false, true]) {
    describe(codec ? "codec mode" : "object mode", () => {
      it.effect("scripts a request/response exchange with a Peer", () =>
        Effect.gen(function* () {
          const tp = yield* TestPeer.make({ codec })
          const { peer } = yield* echoPeer(tp.transport)
          const response = yield* tp.call("tools/list", { cursor: "c1" })
          assert.deepStrictEqual(response, JsonRpc.success(1, { echo: { cursor: "c1" } }))

          const outgoing = yield* Effect.forkChild(peer.request("roots/list", { a: 1 }))
          const request = yield* tp.expectRequest("roots/list", { params: { a: 1 } })
          yield* tp.respond(request, { roots: [] })
          assert.deepStrictEqual(yield* Fiber.join(outgoing), { roots: [] })
          yield* tp.expectNothing()
        })
      )

      it.effect("raw malformed text reaches the code under test as a decode failure", () =>
        Effect.gen(function* () {
          const tp = yield* TestPeer.make({ codec })
          yield* echoPeer(tp.transport)
          yield* tp.send("{this is not json")
          yield* tp.expectResponse(null, { error: { code: McpError.Code.ParseError } })
          yield* tp.send('{"jsonrpc":"2.0","id":9,"method":7}')
          yield* tp.expectResponse(9, { error: { code: McpError.Code.InvalidRequest } })
          // The stream survived both.
          yield* tp.call("ping")
        })
      )
    })
  }

  it.effect("what the code under test sends is decoded as it would be on the wire in codec mode", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make({ codec: true })
      yield* tp.transport.send({ jsonrpc: "2.0", method: "n", params: { kept: 1, dropped: undefined } })
      const message = yield* tp.expectNotification("n")
      assert.deepStrictEqual(message, { jsonrpc: "2.0", method: "n", params: { kept: 1 } })
      assert.isFalse("dropped" in (message.params as object))
      const error = yield* Effect.flip(tp.transport.send(JsonRpc.notification("big", { n: BigInt(1) as never })))
      assert.strictEqual(error.reason, "Protocol")
    })
  )

  it.effect("what the test sends in object mode arrives untouched", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make()
      const params = { nested: { list: [1, 2] } }
      yield* tp.notify("n", params)
      const [frame] = yield* Stream.runCollect(Stream.take(tp.transport.incoming, 1))
      assert.isTrue(frame !== undefined && Result.isSuccess(frame))
      assert.strictEqual((frame as Result.Success<JsonRpc.Notification, never>).success.params, params)
    })
  )

  it.effect("expect fails with Mismatch when the next frame differs, and leaves it pending", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make()
      yield* tp.transport.send(JsonRpc.notification("first"))
      const error = yield* Effect.flip(tp.expectRequest("first"))
      assert.strictEqual(error.reason, "Mismatch")
      assert.include(error.message, "first")
      assert.strictEqual((yield* tp.pending).length, 1)
      yield* tp.expectNotification("first")
    })
  )

  it.effect("partial patterns match deeply; undefined asserts absence", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make()
      yield* tp.transport.send(JsonRpc.success(3, { content: [{ type: "text", text: "hi" }], extra: true }))
      const mismatch = yield* Effect.flip(tp.expect({ id: 3, error: undefined, result: { extra: false } }))
      assert.strictEqual(mismatch.reason, "Mismatch")
      const absent = yield* Effect.flip(tp.expect({ id: 3, result: { extra: undefined } }))
      assert.strictEqual(absent.reason, "Mismatch")
      yield* tp.expect({ id: 3, error: undefined, result: { content: [{ text: "hi" }] } })
    })
  )

  it.effect("inOrder: false takes the first match and leaves the rest pending, in order", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make()
      yield* tp.transport.send(JsonRpc.notification("a"))
      yield* tp.transport.send(JsonRpc.notification("b"))
      yield* tp.transport.send(JsonRpc.notification("c"))
      yield* tp.expectNotification("c", undefined, { inOrder: false })
      yield* tp.expectNotification("a")
      yield* tp.expectNotification("b")
      assert.deepStrictEqual(
        (yield* tp.messages).map((m) => (m as JsonRpc.Notification).method),
        ["a", "b", "c"]
      )
    })
  )

  it.effect("an expectation times out exactly when the TestClock passes its timeout", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make()
      const fiber = yield* Effect.forkChild(Effect.exit(tp.expectRequest("never", undefined, { timeout: "2 seconds" })))
      yield* TestClock.adjust("1999 millis")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      const error = failureOf(yield* Fiber.join(fiber))
      assert.strictEqual(error.reason, "Timeout")
    })
  )

  it.effect("a frame arriving before the timeout satisfies a waiting expectation", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make({ timeout: "10 seconds" })
      const fiber = yield* Effect.forkChild(tp.expectNotification("late"))
      yield* TestClock.adjust("9 seconds")
      yield* tp.transport.send(JsonRpc.notification("late"))
      const message = yield* Fiber.join(fiber)
      assert.strictEqual(message.method, "late")
    })
  )

  it.effect("expectNothing fails with Unexpected when a frame is pending", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make({ ping: false })
      yield* tp.expectNothing()
      yield* tp.transport.send(JsonRpc.notification("surprise"))
      const error = yield* Effect.flip(tp.expectNothing())
      assert.strictEqual(error.reason, "Unexpected")
      assert.include(error.message, "surprise")
    })
  )

  it.effect("expectNothing within a duration sees frames sent during that time", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make()
      yield* Effect.forkChild(Effect.delay(tp.transport.send(JsonRpc.notification("delayed")), "3 seconds"))
      const quiet = yield* Effect.forkChild(Effect.exit(tp.expectNothing({ within: "2 seconds" })))
      yield* TestClock.adjust("2 seconds")
      assert.isTrue(Exit.isSuccess(yield* Fiber.join(quiet)))
      const noisy = yield* Effect.forkChild(Effect.exit(tp.expectNothing({ within: "2 seconds" })))
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(failureOf(yield* Fiber.join(noisy)).reason, "Unexpected")
    })
  )

  it.effect("settle waits for what the code under test sent before answering its ping", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make()
      // Code under test that reads in order and, on "go", works for far more
      // scheduler turns than any fixed count would wait before it sends "late".
      // The turns are the subject: settle must not depend on how many there are.
      yield* Stream.runForEach(tp.transport.incoming, (frame) => {
        if (Result.isFailure(frame)) return Effect.void
        const message = frame.success as JsonRpc.Message
        if (JsonRpc.isNotification(message) && message.method === "go") {
          return Effect.andThen(
            Effect.repeat(Effect.yieldNow, { times: 500 }),
            tp.transport.send(JsonRpc.notification("late"))
          )
        }
        return JsonRpc.isRequest(message) ? tp.transport.send(JsonRpc.success(message.id, {})) : Effect.void
      }).pipe(Effect.forkScoped)
      yield* tp.notify("go")
      const error = yield* Effect.flip(tp.expectNothing())
      assert.strictEqual(error.reason, "Unexpected")
      assert.include(error.message, "late")
      // The barrier's own answer is neither pending nor recorded.
      assert.deepStrictEqual(yield* tp.messages, [JsonRpc.notification("late")])
      yield* tp.expectNotification("late")
      yield* tp.expectNothing()
    }).pipe(Effect.scoped)
  )

  it.effect("settle without ping waits until every frame the code under test sent has arrived", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make({ ping: false })
      for (let i = 0; i < 100; i++) yield* tp.transport.send(JsonRpc.notification("n", { i }))
      yield* tp.settle
      // Read at once: the inbox's reader must already have taken all of them.
      assert.strictEqual((yield* tp.received).length, 100)
    })
  )

  it.effect("settle returns at once when the code under test has closed its end", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make()
      yield* tp.transport.close
      yield* tp.settle
      yield* tp.expectNothing()
    })
  )

  it.effect("ignored messages are recorded but never expected", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make({
        ping: false,
        ignore: (m) => JsonRpc.isNotification(m) && m.method === "notifications/message"
      })
      yield* tp.transport.send(JsonRpc.notification("notifications/message", { level: "info" }))
      yield* tp.transport.send(JsonRpc.notification("real"))
      yield* tp.expectNotification("real")
      yield* tp.expectNothing()
      assert.strictEqual((yield* tp.received).length, 2)
    })
  )

  it.effect("expectClosed sees the code under test close its end; expectations then fail with Closed", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make()
      yield* tp.transport.close
      yield* tp.expectClosed()
      const error = yield* Effect.flip(tp.expectNotification("anything"))
      assert.strictEqual(error.reason, "Closed")
    })
  )

  it.effect("expectClosed times out while the code under test keeps its end open", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make()
      const fiber = yield* Effect.forkChild(Effect.exit(tp.expectClosed({ timeout: "1 second" })))
      yield* TestClock.adjust("1 second")
      assert.strictEqual(failureOf(yield* Fiber.join(fiber)).reason, "Timeout")
    })
  )

  it.effect("close ends the code under test's incoming", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make()
      yield* tp.notify("last")
      yield* tp.close
      const frames = yield* Stream.runCollect(tp.transport.incoming)
      assert.strictEqual(frames.length, 1)
      const error = yield* Effect.flip(tp.notify("after"))
      assert.strictEqual(error.reason, "Closed")
    })
  )

  it.effect("expectBatch and expectFrame see batches and decode failures", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make({ codec: true })
      yield* tp.transport.send([JsonRpc.notification("x"), JsonRpc.request(1, "y")])
      const batch = yield* tp.expectBatch((b) => b.length === 2)
      assert.deepStrictEqual(batch, [JsonRpc.notification("x"), JsonRpc.request(1, "y")])
      yield* tp.transport.send({ jsonrpc: "2.0", id: null, method: "bad" } as unknown as JsonRpc.Message)
      const frame = yield* tp.expectFrame(Result.isFailure)
      assert.isTrue(Result.isFailure(frame) && frame.failure.error._tag === "InvalidRequest")
    })
  )

  it.effect("initialize drives a server session through the handshake", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make({ codec: true })
      const server = yield* ServerSession.make({ serverInfo, capabilities: { tools: {} } }).pipe(
        Effect.provideService(Transport.Transport, tp.transport)
      )
      const result = yield* tp.initialize({ protocolVersion: "2025-06-18" })
      assert.deepStrictEqual(result, { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo })
      yield* tp.settle
      assert.strictEqual(server.state.phase, "Ready")
      assert.strictEqual(server.state.revision?.version, "2025-06-18")
    })
  )

  it.effect("initialize fails with Mismatch when the server refuses", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make()
      yield* ServerSession.make({ serverInfo, capabilities: {} }).pipe(
        Effect.provideService(Transport.Transport, tp.transport)
      )
      yield* tp.initialize()
      // A repeat that would change the session's capabilities is refused.
      const error = yield* Effect.flip(tp.initialize({ capabilities: { roots: {} } }))
      assert.strictEqual(error._tag, "TestPeerError")
      assert.include(error.message, "refused")
    })
  )

  it.effect("acceptInitialize answers a client session's handshake (after its discovery probe)", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make({ codec: true })
      const client = yield* Effect.forkChild(
        ClientSession.make({ clientInfo: { name: "c", version: "1" }, capabilities: { roots: {} } }).pipe(
          Effect.provideService(Transport.Transport, tp.transport)
        )
      )
      const request = yield* tp.acceptInitialize({ capabilities: { prompts: {} }, instructions: "be nice" })
      assert.deepStrictEqual((request.params as { capabilities: unknown }).capabilities, { roots: {} })
      const session = yield* Fiber.join(client)
      assert.strictEqual(session.state.phase, "Ready")
      assert.deepStrictEqual(session.state.peerCapabilities, { prompts: {} })
      assert.strictEqual(session.state.peerExtras.instructions, "be nice")
      const discover = (yield* tp.messages).find((m) => JsonRpc.isRequest(m) && m.method === "server/discover")
      assert.isDefined(discover, "the client probed server/discover first")
    })
  )

  it.effect("request ids count up unless given; respondError accepts McpError values", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make()
      const first = yield* tp.request("a")
      const second = yield* tp.request("b")
      const forced = yield* tp.request("c", undefined, { id: "mine" })
      assert.deepStrictEqual([first.id, second.id, forced.id], [1, 2, "mine"])
      yield* tp.respondError(7, new McpError.MethodNotFound({ message: "nope" }))
      const frames = yield* Stream.runCollect(Stream.take(tp.transport.incoming, 4))
      const last = frames[3]
      assert.isTrue(last !== undefined && Result.isSuccess(last))
      assert.deepStrictEqual((last as Result.Success<JsonRpc.Message, never>).success, {
        jsonrpc: "2.0",
        id: 7,
        error: { code: -32601, message: "nope" }
      })
    })
  )
})
