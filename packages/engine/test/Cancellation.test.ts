import { assert, describe, it } from "@effect/vitest"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import type * as Session from "@effect-mcp/engine/Session"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { TestClock } from "effect/testing"
import {
  clientInfo,
  forkIdle,
  initializeRequest,
  linked,
  rawAgainstClient,
  rawAgainstServer,
  rawInitialized,
  runIdle
} from "./fixtures.ts"

const call = (id: JsonRpc.RequestId, name: string) =>
  ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {} } }) as const

describe("cancellation", () => {
  it.effect("notifications/cancelled interrupts the handler, runs its finalizer and sends no response", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const finalized = yield* Deferred.make<void>()
      const handler: Session.Handler = (params) =>
        (params as { name: string }).name === "slow"
          ? Effect.acquireRelease(Deferred.succeed(started, undefined), () =>
              Deferred.succeed(finalized, undefined)
            ).pipe(Effect.andThen(Effect.never), Effect.scoped)
          : Effect.succeed({ content: [{ type: "text", text: "fast" }] })
      const { send, next, server } = yield* rawInitialized({
        capabilities: { tools: {} },
        handlers: new Map([["tools/call", handler]])
      })
      yield* send(call(2, "slow"))
      yield* Deferred.await(started)
      assert.strictEqual(server.peer.inFlight(), 1)
      yield* send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2, reason: "user" } })
      yield* Deferred.await(finalized)
      yield* send(call(3, "fast"))
      const response = yield* next
      // The first message after the cancel is the answer to request 3: request 2 got none.
      assert.deepStrictEqual(response, {
        jsonrpc: "2.0",
        id: 3,
        result: { content: [{ type: "text", text: "fast" }] }
      })
      assert.strictEqual(server.peer.inFlight(), 0)
    })
  )

  it.effect("cancels for unknown ids and for initialize are ignored", () =>
    Effect.gen(function* () {
      const { send, next } = yield* rawAgainstServer()
      yield* send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 99 } })
      yield* send(initializeRequest(1))
      yield* send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } })
      const response = (yield* next) as { id: number; result: { protocolVersion: string } }
      assert.strictEqual(response.id, 1)
      assert.strictEqual(response.result.protocolVersion, "2025-11-25")
    })
  )

  it.effect("interrupting the caller sends exactly one notifications/cancelled; a late response is dropped", () =>
    Effect.gen(function* () {
      const { client, send, next } = yield* rawAgainstClient({}, { tools: {} })
      const fiber = yield* client.request("tools/call", { name: "x", arguments: {} }).pipe(Effect.forkChild)
      const call = (yield* next) as { id: number; method: string }
      assert.strictEqual(call.method, "tools/call")
      yield* Fiber.interrupt(fiber)
      const cancel = yield* next
      assert.deepStrictEqual(cancel, {
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: call.id, reason: "request interrupted by caller" }
      })
      // The late answer is dropped; the next message on the wire is the ping, not a second cancel.
      yield* send({ jsonrpc: "2.0", id: call.id, result: { content: [] } })
      const ping = yield* client.request("ping").pipe(Effect.forkChild)
      const pingRequest = (yield* next) as { id: number; method: string }
      assert.strictEqual(pingRequest.method, "ping")
      yield* send({ jsonrpc: "2.0", id: pingRequest.id, result: {} })
      assert.deepStrictEqual(yield* Fiber.join(ping), {})
    })
  )
})

describe("timeouts", () => {
  it.effect("a 5 s timeout fails with RequestTimeout at exactly 5 s and the server handler is cancelled", () =>
    Effect.gen(function* () {
      const interrupted = yield* Deferred.make<void>()
      const { client, server } = yield* linked({
        server: {
          capabilities: { tools: {} },
          handlers: new Map<string, Session.Handler>([
            ["tools/call", () => Effect.onInterrupt(Effect.never, () => Deferred.succeed(interrupted, undefined))]
          ])
        }
      })
      const fiber = yield* client
        .request("tools/call", { name: "x" }, { timeout: "5 seconds" })
        .pipe(Effect.flip, Effect.forkChild)
      yield* TestClock.adjust("4999 millis")
      assert.isUndefined(fiber.pollUnsafe())
      assert.strictEqual(server.peer.inFlight(), 1)
      yield* TestClock.adjust("1 millis")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "RequestTimeout")
      if (error._tag === "RequestTimeout") {
        assert.strictEqual(error.elapsedMs, 5000)
        assert.strictEqual(error.reason, "Idle")
      }
      // The server received notifications/cancelled and stopped the handler. The wait ends inside
      // the handler's finalizer (a Deferred resumes its waiter at once); coming to rest lets the
      // handler's fiber end and leave the in-flight table.
      yield* Deferred.await(interrupted)
      yield* runIdle(Effect.void)
      assert.strictEqual(server.peer.inFlight(), 0)
    })
  )

  const progressing = (steps: ReadonlyArray<number>) => ({
    capabilities: { tools: {} },
    handlers: new Map<string, Session.Handler>([
      [
        "tools/call",
        () =>
          Effect.gen(function* () {
            const current = yield* CurrentRequest.CurrentRequest
            let at = 0
            for (const [i, step] of steps.entries()) {
              yield* Effect.sleep(step - at)
              at = step
              yield* current.progress({ progress: i + 1 })
            }
            return yield* Effect.never
          })
      ]
    ])
  })

  it.effect("progress at 4 s and 8 s resets a 5 s timeout until 13 s", () =>
    Effect.gen(function* () {
      const { client } = yield* linked({ server: progressing([4000, 8000]) })
      const fiber = yield* client
        .request(
          "tools/call",
          { name: "x" },
          {
            timeout: "5 seconds",
            resetTimeoutOnProgress: true,
            onProgress: () => {}
          }
        )
        .pipe(Effect.flip, Effect.forkChild)
      yield* TestClock.adjust("12999 millis")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "RequestTimeout")
      if (error._tag === "RequestTimeout") assert.strictEqual(error.elapsedMs, 13000)
    })
  )

  it.effect("resetTimeoutOnProgress alone asks for progress: the request carries a token and progress resets", () =>
    Effect.gen(function* () {
      const { client } = yield* linked({ server: progressing([4000, 8000]) })
      const fiber = yield* client
        .request("tools/call", { name: "x" }, { timeout: "5 seconds", resetTimeoutOnProgress: true })
        .pipe(Effect.flip, Effect.forkChild)
      yield* TestClock.adjust("12999 millis")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "RequestTimeout")
      if (error._tag === "RequestTimeout") assert.strictEqual(error.elapsedMs, 13000)
    })
  )

  it.effect("the maximum total time wins over progress resets", () =>
    Effect.gen(function* () {
      const { client } = yield* linked({ server: progressing([4000, 8000]) })
      const fiber = yield* client
        .request(
          "tools/call",
          { name: "x" },
          {
            timeout: "5 seconds",
            resetTimeoutOnProgress: true,
            maxTotalTimeout: "10 seconds",
            onProgress: () => {}
          }
        )
        .pipe(Effect.flip, Effect.forkChild)
      yield* TestClock.adjust("9999 millis")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "RequestTimeout")
      if (error._tag === "RequestTimeout") {
        assert.strictEqual(error.elapsedMs, 10000)
        assert.strictEqual(error.reason, "Total")
      }
    })
  )

  it.effect(
    "an initialize that times out is not cancelled: no notifications/cancelled for it (2025-03-26 lifecycle)",
    () =>
      Effect.gen(function* () {
        const [clientEnd, rawEnd] = yield* MemoryTransport.makePair()
        const seen: Array<JsonRpc.Message> = []
        yield* rawEnd.incoming.pipe(
          Stream.runForEach((frame) =>
            Effect.sync(() => {
              if (Result.isSuccess(frame)) seen.push(frame.success as JsonRpc.Message)
            })
          ),
          Effect.forkScoped
        )
        // Returns once the client has sent its initialize and waits for the answer.
        const client = yield* forkIdle(
          ClientSession.make({
            clientInfo,
            capabilities: {},
            supportedVersions: ["2025-03-26"],
            handshakeTimeout: "5 seconds"
          }).pipe(Effect.provideService(Transport.Transport, clientEnd), Effect.exit)
        )
        // Returns once the woken handshake timeout, and all it set going, has come to rest:
        // a cancel it sent would be in `seen` by then.
        yield* TestClock.adjust("6 seconds")
        const exit = yield* Fiber.join(client)
        assert.isTrue(Exit.isFailure(exit), "the handshake failed")
        const methods = seen.map((m) => ("method" in m ? m.method : "response"))
        assert.include(methods, "initialize")
        assert.notInclude(methods, "notifications/cancelled")
      })
  )
})

describe("cancellation, many in flight", () => {
  it.effect(
    "with many requests in flight (ids sharing ring slots, string ids), each cancel hits its own request only",
    () =>
      Effect.gen(function* () {
        const gate = yield* Deferred.make<void>()
        const all = yield* Deferred.make<void>()
        let started = 0
        // Ids 2..201 fill the server's ring of 64 slots three times over (the rest go to its map), and strings
        // never have a slot: a cancel of one must not reach another keeping the same slot.
        const ids: Array<JsonRpc.RequestId> = [
          ...Array.from({ length: 200 }, (_, i) => i + 2),
          ...Array.from({ length: 20 }, (_, i) => `s${i}`)
        ]
        const handler: Session.Handler = () =>
          Effect.gen(function* () {
            const request = yield* CurrentRequest.CurrentRequest
            if (++started === ids.length) yield* Deferred.succeed(all, undefined)
            yield* Deferred.await(gate)
            return { content: [{ type: "text", text: String(request.id) }] }
          })
        const { send, next, server } = yield* rawInitialized({
          capabilities: { tools: {} },
          handlers: new Map([["tools/call", handler]])
        })
        for (const id of ids) yield* send(call(id, "slow"))
        yield* Deferred.await(all)
        assert.strictEqual(server.peer.inFlight(), ids.length)
        const cancelled = ids.filter((_, i) => i % 3 === 0)
        for (const requestId of cancelled) {
          yield* send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId } })
        }
        // Frames are handled in order: once a ping sent after the cancels is answered, they were all seen.
        yield* send({ jsonrpc: "2.0", id: 499, method: "ping" })
        assert.strictEqual(((yield* next) as { id: number }).id, 499)
        assert.strictEqual(server.peer.inFlight(), ids.length - cancelled.length)
        yield* Deferred.succeed(gate, undefined)
        const answered: Array<JsonRpc.RequestId> = []
        for (let i = 0; i < ids.length - cancelled.length; i++) {
          const response = (yield* next) as { id: JsonRpc.RequestId; result: { content: Array<{ text: string }> } }
          assert.strictEqual(response.result.content[0]!.text, String(response.id))
          answered.push(response.id)
        }
        assert.sameMembers(
          answered,
          ids.filter((id) => !cancelled.includes(id))
        )
        // Nothing more for the cancelled ones: the next message answers a new request.
        yield* send(call(500, "slow"))
        assert.strictEqual(((yield* next) as { id: number }).id, 500)
        assert.strictEqual(server.peer.inFlight(), 0)
      })
  )
})
