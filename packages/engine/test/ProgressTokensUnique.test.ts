/**
 * 2025-03-26 progress: "Progress tokens MUST be unique across all active
 * requests". A client session sends concurrent requests that ask for progress
 * (a callback, a progress stream, a timeout restarted by progress) to a raw
 * server over the JSON codec: each carries a token of its own, a request that
 * asks for none carries no token, and an update sent for one token reaches
 * that request only.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { clientAndRawServer } from "./codecPeers.ts"

const callOf = (name: string) => ({ name, arguments: {} })
const resultOf = (name: string) => ({ content: [{ type: "text", text: name }] })
const tokenOf = (request: JsonRpc.Request): unknown =>
  (request.params as { readonly _meta?: { readonly progressToken?: unknown } })._meta?.progressToken

describe("2025-03-26: progress tokens are unique across active requests", () => {
  it.effect("concurrent requests asking for progress carry distinct tokens; each update reaches its own request", () =>
    Effect.gen(function* () {
      const { client, send, next } = yield* clientAndRawServer()
      const updates: Array<CurrentRequest.ProgressUpdate> = []
      const callback = yield* Effect.forkChild(
        client.request("tools/call", callOf("callback"), { onProgress: (update) => void updates.push(update) })
      )
      const streamed = yield* Effect.forkChild(
        Stream.runCollect(client.requestWithProgress("tools/call", callOf("stream")))
      )
      // Asking that progress restart the timeout asks for progress too (nobody reads the updates).
      const restarts = yield* Effect.forkChild(
        client.request("tools/call", callOf("restarts"), { resetTimeoutOnProgress: true })
      )
      const plain = yield* Effect.forkChild(client.request("tools/call", callOf("plain")))

      const requests = new Map<string, JsonRpc.Request>()
      for (let i = 0; i < 4; i++) {
        const request = (yield* next) as JsonRpc.Request
        requests.set((request.params as { readonly name: string }).name, request)
      }
      const withProgress = ["callback", "stream", "restarts"]
      const tokens = withProgress.map((name) => tokenOf(requests.get(name)!))
      for (const token of tokens) assert.isTrue(typeof token === "string" || typeof token === "number", `${token}`)
      assert.strictEqual(new Set(tokens).size, withProgress.length, `tokens ${JSON.stringify(tokens)}`)
      assert.isUndefined(tokenOf(requests.get("plain")!))

      // One update per token, named after the request it is for; then every answer.
      for (const [i, name] of withProgress.entries()) {
        yield* send({
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken: tokens[i] as JsonRpc.RequestId, progress: 1, message: name }
        })
      }
      for (const [name, request] of requests) yield* send({ jsonrpc: "2.0", id: request.id, result: resultOf(name) })

      assert.deepStrictEqual(yield* Fiber.join(callback), resultOf("callback"))
      assert.deepStrictEqual(yield* Fiber.join(restarts), resultOf("restarts"))
      assert.deepStrictEqual(yield* Fiber.join(plain), resultOf("plain"))
      assert.deepStrictEqual(yield* Fiber.join(streamed), [
        { _tag: "Progress", update: { progress: 1, total: undefined, message: "stream" } },
        { _tag: "Result", value: resultOf("stream") }
      ])
      assert.deepStrictEqual(
        updates.map((u) => u.message),
        ["callback"]
      )
    })
  )
})
