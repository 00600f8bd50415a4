import { assert, describe, it } from "@effect/vitest"
import type * as Session from "@effect-mcp/engine/Session"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { forkIdle, initializeRequest, linked, rawAgainstServer, rawInitialized } from "./fixtures.ts"

const errorCode = (message: unknown) => (message as { error?: { code: number } }).error?.code

describe("lifecycle and capability gate", () => {
  it.effect("requests before initialize are refused, ping is answered", () =>
    Effect.gen(function* () {
      const { send, next } = yield* rawAgainstServer({ capabilities: { tools: {} } })
      yield* send({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} })
      assert.strictEqual(errorCode(yield* next), -32600)
      yield* send({ jsonrpc: "2.0", id: 2, method: "ping" })
      assert.deepStrictEqual(yield* next, { jsonrpc: "2.0", id: 2, result: {} })
    })
  )

  it.effect("once initialized, a second initialize that would change the session's revision is refused", () =>
    Effect.gen(function* () {
      const { send, next } = yield* rawInitialized()
      yield* send(initializeRequest(2, "2025-06-18"))
      assert.strictEqual(errorCode(yield* next), -32600)
    })
  )

  it.effect("a request for a capability the server did not declare gets -32601", () =>
    Effect.gen(function* () {
      const { send, next } = yield* rawInitialized({ capabilities: { tools: {} } })
      yield* send({ jsonrpc: "2.0", id: 2, method: "prompts/list", params: {} })
      assert.strictEqual(errorCode(yield* next), -32601)
      yield* send({ jsonrpc: "2.0", id: 3, method: "resources/subscribe", params: { uri: "a://b" } })
      assert.strictEqual(errorCode(yield* next), -32601)
    })
  )

  it.effect("an undeclared capability is refused with -32601 before the request's params are checked", () =>
    Effect.gen(function* () {
      const { send, next } = yield* rawInitialized({ capabilities: { tools: {} } })
      // Params that would be -32602 for a server with prompts: the missing capability is the answer.
      yield* send({ jsonrpc: "2.0", id: 2, method: "prompts/get", params: {} })
      const refused = (yield* next) as { error?: { code: number; message: string } }
      assert.strictEqual(refused.error?.code, -32601)
      assert.match(refused.error?.message ?? "", /prompts was not declared/)
      // A declared one still gets -32602 for bad params.
      yield* send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: {} })
      assert.strictEqual(errorCode(yield* next), -32602)
    })
  )

  it.effect("a request the server cannot send is refused by the client's gate as MethodNotFound", () =>
    Effect.gen(function* () {
      const { send, next } = yield* rawAgainstServer()
      yield* send(initializeRequest(1))
      yield* next
      // sampling/createMessage is a server->client request; a client sending it gets -32601.
      yield* send({
        jsonrpc: "2.0",
        id: 2,
        method: "sampling/createMessage",
        params: { messages: [], maxTokens: 1 }
      })
      assert.strictEqual(errorCode(yield* next), -32601)
    })
  )

  it.effect("the sender refuses locally to send a request the peer did not declare; nothing goes on the wire", () =>
    Effect.gen(function* () {
      const seen: Array<string> = []
      const { client, server } = yield* linked({
        server: {
          capabilities: { tools: {} },
          handlers: new Map<string, Session.Handler>([
            [
              "tools/list",
              (_p, info) =>
                Effect.sync(() => {
                  seen.push(info.request.method)
                  return { tools: [] }
                })
            ]
          ])
        },
        clientVersions: ["2025-11-25"]
      })
      const refused = yield* Effect.flip(client.request("prompts/list", {}))
      assert.strictEqual(refused._tag, "NotSupported")
      if (refused._tag === "NotSupported") assert.strictEqual(refused.reason, "CapabilityNotDeclared")
      // The server cannot sample: the client declared no sampling capability.
      const serverRefused = yield* Effect.flip(server.request("sampling/createMessage", { messages: [], maxTokens: 1 }))
      assert.strictEqual(serverRefused._tag, "NotSupported")
      yield* client.request("tools/list", {})
      assert.deepStrictEqual(seen, ["tools/list"])
    })
  )

  it.effect("a batch containing initialize is refused; batches are refused where the revision has none", () =>
    Effect.gen(function* () {
      const { send, next } = yield* rawAgainstServer()
      yield* send([initializeRequest(1, "2025-03-26")])
      assert.strictEqual(errorCode(yield* next), -32600)
      yield* send(initializeRequest(2, "2025-06-18"))
      yield* next
      yield* send({ jsonrpc: "2.0", method: "notifications/initialized" })
      yield* send([{ jsonrpc: "2.0", id: 3, method: "ping" }])
      assert.strictEqual(errorCode(yield* next), -32600)
    })
  )

  it.effect("on 2025-03-26 a batch is answered with one batch of responses (notifications get none)", () =>
    Effect.gen(function* () {
      const { send, next } = yield* rawAgainstServer()
      yield* send(initializeRequest(1, "2025-03-26"))
      yield* next
      yield* send([
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 2, method: "ping" },
        { jsonrpc: "2.0", id: 3, method: "nope/nope" },
        { jsonrpc: "2.0", id: 4, method: "initialize", params: initializeRequest(4).params }
      ])
      const batch = (yield* next) as ReadonlyArray<{ id: number; result?: unknown; error?: { code: number } }>
      assert.isTrue(Array.isArray(batch))
      const byId = new Map(batch.map((r) => [r.id, r]))
      assert.strictEqual(batch.length, 3)
      assert.deepStrictEqual(byId.get(2)?.result, {})
      assert.strictEqual(byId.get(3)?.error?.code, -32601)
      assert.strictEqual(byId.get(4)?.error?.code, -32600)
    })
  )

  it.effect("a batch's slow request does not hold back the frames after it: a cancel of it, a ping", () =>
    Effect.gen(function* () {
      const stopped = yield* Deferred.make<void>()
      const { send, next } = yield* rawAgainstServer({
        capabilities: { tools: {} },
        handlers: new Map<string, Session.Handler>([
          [
            "tools/call",
            () =>
              Effect.as(
                Effect.onInterrupt(Effect.sleep("10 minutes"), () => Deferred.succeed(stopped, undefined)),
                {}
              )
          ]
        ])
      })
      yield* send(initializeRequest(1, "2025-03-26"))
      yield* next
      yield* send({ jsonrpc: "2.0", method: "notifications/initialized" })
      yield* send([
        { jsonrpc: "2.0", id: 71, method: "tools/call", params: { name: "slow", arguments: {} } },
        { jsonrpc: "2.0", id: 72, method: "ping" }
      ])
      yield* send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 71 } })
      yield* send({ jsonrpc: "2.0", id: 80, method: "ping" })
      // No time passes: before, the session read nothing more until the batch's 10 minutes were over.
      const answers = yield* forkIdle(Effect.zip(next, next))
      assert.isDefined(answers.pollUnsafe(), "the batch and the ping were answered with no time passing")
      // In either order: the batch's answer waits for its cancelled request to stop, the ping for nothing.
      const both: ReadonlyArray<unknown> = yield* Fiber.join(answers)
      const batch = both.find(Array.isArray)
      // The cancelled request gets no response; its handler was interrupted.
      assert.deepStrictEqual(batch, [{ jsonrpc: "2.0", id: 72, result: {} }])
      assert.deepStrictEqual(
        both.find((answer) => !Array.isArray(answer)),
        { jsonrpc: "2.0", id: 80, result: {} }
      )
      yield* Deferred.await(stopped)
    })
  )
})
