/**
 * 2025-03-26 progress: "Progress notifications MUST only reference tokens
 * that were provided in an active request and are associated with an
 * in-progress operation." Both sides, over the JSON codec against a raw peer:
 * a handler that reports progress after its response sends nothing, and a
 * client drops progress that arrives for a request already answered (or
 * never made) instead of delivering it. Each test ends with a ping round trip
 * as a barrier: frames are sent and handled in order, so whatever the late
 * progress caused has happened before the ping's answer arrives.
 */
import { assert, describe, it } from "@effect/vitest"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import type * as Session from "@effect-mcp/engine/Session"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { clientAndRawServer, serverAndRawClient } from "./codecPeers.ts"
import { initializeRequest } from "./fixtures.ts"

const result = { content: [{ type: "text", text: "done" }] }
const progress = (progressToken: JsonRpc.RequestId, value: number) =>
  ({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken, progress: value } }) as const

describe("2025-03-26: progress only for active requests", () => {
  it.effect("the sender: progress a handler reports after its response is not sent", () =>
    Effect.gen(function* () {
      const leaked = yield* Deferred.make<CurrentRequest.CurrentRequestShape>()
      // The handler reports once while it runs, and hands its request out for the test to report on later.
      const handler: Session.Handler = () =>
        Effect.gen(function* () {
          const current = yield* CurrentRequest.CurrentRequest
          yield* current.progress({ progress: 1 })
          yield* Deferred.succeed(leaked, current)
          return result
        })
      const { send, next } = yield* serverAndRawClient({
        capabilities: { tools: {} },
        handlers: new Map([["tools/call", handler]])
      })
      yield* send(initializeRequest(0, "2025-03-26"))
      yield* next
      yield* send({ jsonrpc: "2.0", method: "notifications/initialized" })

      yield* send(JsonRpc.request(1, "tools/call", { name: "work", _meta: { progressToken: "work-1" } }))
      assert.deepStrictEqual(yield* next, progress("work-1", 1))
      assert.deepStrictEqual(yield* next, { jsonrpc: "2.0", id: 1, result })

      const current = yield* Deferred.await(leaked)
      assert.strictEqual(current.progressToken, "work-1")
      yield* current.progress({ progress: 2 })
      yield* current.progress({ progress: 3, total: 3, message: "late" })
      // Anything the late reports sent would arrive before this answer.
      yield* send(JsonRpc.request("barrier", "ping"))
      assert.deepStrictEqual(yield* next, { jsonrpc: "2.0", id: "barrier", result: {} })
    })
  )

  it.effect("the receiver: progress for an answered request, or a token never given, is dropped", () =>
    Effect.gen(function* () {
      const { client, send, next } = yield* clientAndRawServer()
      const seen: Record<"first" | "second", Array<number>> = { first: [], second: [] }
      const call = (name: "first" | "second") =>
        client.request("tools/call", { name }, { onProgress: (update) => void seen[name].push(update.progress) })
      const first = yield* Effect.forkChild(call("first"))
      const firstRequest = (yield* next) as JsonRpc.Request
      const second = yield* Effect.forkChild(call("second"))
      const secondRequest = (yield* next) as JsonRpc.Request
      const tokenOf = (request: JsonRpc.Request) =>
        (request.params as { readonly _meta: { readonly progressToken: JsonRpc.RequestId } })._meta.progressToken
      const firstToken = tokenOf(firstRequest)

      yield* send(progress(firstToken, 1))
      yield* send(JsonRpc.success(firstRequest.id, result))
      assert.deepStrictEqual(yield* Fiber.join(first), result)
      // The first request is answered; the second is still active.
      yield* send(progress(firstToken, 2))
      yield* send(progress("never-given", 1))
      yield* send(JsonRpc.request("barrier", "ping"))
      assert.deepStrictEqual(yield* next, { jsonrpc: "2.0", id: "barrier", result: {} })
      assert.deepStrictEqual(seen, { first: [1], second: [] })

      // The active one still gets its own progress.
      yield* send(progress(tokenOf(secondRequest), 1))
      yield* send(JsonRpc.success(secondRequest.id, result))
      assert.deepStrictEqual(yield* Fiber.join(second), result)
      assert.deepStrictEqual(seen, { first: [1], second: [1] })
    })
  )
})
