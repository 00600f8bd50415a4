/**
 * 2025-03-26 lifecycle: "the server SHOULD NOT send requests other than pings
 * and logging before receiving the `initialized` notification". A server
 * session against a raw client over the JSON codec: before `initialize` and
 * between its response and `notifications/initialized`, a request for
 * `roots/list` or `sampling/createMessage` (both declared by the client) is
 * refused as NotInitialized without reaching the wire, while a log
 * notification and a ping go out; after `initialized` the same request goes out.
 */
import { assert, describe, it } from "@effect/vitest"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { serverAndRawClient } from "./codecPeers.ts"
import { initializeRequest } from "./fixtures.ts"

/** Requests the client declared the capability for: only the lifecycle stops them. */
const gated = [
  ["roots/list", {}],
  ["sampling/createMessage", { messages: [{ role: "user", content: { type: "text", text: "hi" } }], maxTokens: 10 }]
] as const

describe("2025-03-26: a server sends no request but ping before notifications/initialized", () => {
  it.effect("roots/list and sampling/createMessage are refused until initialized; logging and ping go out", () =>
    Effect.gen(function* () {
      const { server, send, next } = yield* serverAndRawClient({ capabilities: { logging: {} } })
      const refusedNow = Effect.gen(function* () {
        for (const [method, params] of gated) {
          // A request that went out would wait for its answer: the frame it sent fails the test at once.
          const error = yield* Effect.raceFirst(
            Effect.flip(server.request(method, params)),
            Effect.flatMap(next, (frame) => Effect.die(`sent before initialized: ${JSON.stringify(frame)}`))
          )
          assert.strictEqual(error._tag, "NotSupported")
          assert.strictEqual(error._tag === "NotSupported" ? error.reason : undefined, "NotInitialized")
        }
      })

      // Before initialize.
      yield* refusedNow

      yield* send(initializeRequest(1, "2025-03-26", { roots: { listChanged: true }, sampling: {} }))
      const answer = (yield* next) as JsonRpc.SuccessResponse
      assert.strictEqual(answer.id, 1)
      assert.strictEqual((answer.result as { readonly protocolVersion?: unknown }).protocolVersion, "2025-03-26")

      // Initialized by the server, not yet by the client.
      yield* refusedNow
      // A log notification may go out: it is the next frame, so nothing was sent for the refused requests.
      yield* server.notify("notifications/message", { level: "info", data: "starting" })
      assert.deepStrictEqual(yield* next, {
        jsonrpc: "2.0",
        method: "notifications/message",
        params: { level: "info", data: "starting" }
      })
      // So may a ping.
      const ping = yield* Effect.forkChild(server.request("ping"))
      const pingRequest = (yield* next) as JsonRpc.Request
      assert.strictEqual(pingRequest.method, "ping")
      yield* send(JsonRpc.success(pingRequest.id, {}))
      assert.deepStrictEqual(yield* Fiber.join(ping), {})

      yield* send({ jsonrpc: "2.0", method: "notifications/initialized" })
      // Frames are handled in order: the answer to this ping means `initialized` was taken.
      yield* send(JsonRpc.request("barrier", "ping"))
      assert.deepStrictEqual(yield* next, { jsonrpc: "2.0", id: "barrier", result: {} })

      // Now the same requests go out.
      for (const [method, params] of gated) {
        const answer = method === "roots/list" ? { roots: [] } : { role: "assistant", content: {}, model: "m" }
        const call = yield* Effect.forkChild(server.request(method, params))
        const request = (yield* next) as JsonRpc.Request
        assert.strictEqual(request.method, method)
        assert.deepStrictEqual(request.params, params)
        yield* send(JsonRpc.success(request.id, answer))
        assert.deepStrictEqual(yield* Fiber.join(call), answer)
      }
    })
  )
})
