/**
 * A malformed response (an `error` whose code is no integer, say) is never
 * answered: its id names a request of the receiver's, so an error sent back
 * with that id would read, on the other side, as the answer to a request of
 * the other side's own. The request it meant to answer fails at once.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { clientAndRawServer } from "./codecPeers.ts"
import { forkIdle } from "./fixtures.ts"

const malformed = (id: JsonRpc.RequestId) => ({ jsonrpc: "2.0", id, error: { code: "oops", message: "no" } }) as never

describe("a malformed response", () => {
  for (const [name, frame] of [
    ["alone", (id: JsonRpc.RequestId) => malformed(id)],
    ["in a batch", (id: JsonRpc.RequestId) => [malformed(id)] as never]
  ] as const) {
    it.effect(`fails the request it answered at once and is not answered (${name})`, () =>
      Effect.gen(function* () {
        const { client, send, next } = yield* clientAndRawServer()
        const call = yield* Effect.forkChild(Effect.flip(client.request("tools/list", {})))
        const request = (yield* next) as JsonRpc.Request
        yield* send(frame(request.id))
        // No time passes: before, the request waited for its timeout.
        const failed = yield* forkIdle(Fiber.join(call))
        assert.isDefined(failed.pollUnsafe(), "the request failed at once")
        const error = (yield* Fiber.join(failed)) as McpError.McpError
        assert.isTrue(McpError.isMcpError(error))
        assert.include(error.message, "the response to tools/list could not be received")
        assert.include(error.message, "error.code must be an integer")
        // The next thing the client sends is its own request: no error answered the malformed response.
        const ping = yield* Effect.forkChild(client.request("ping"))
        const sent = (yield* next) as JsonRpc.Request
        assert.strictEqual(sent.method, "ping")
        yield* send({ jsonrpc: "2.0", id: sent.id, result: {} })
        yield* Fiber.join(ping)
      })
    )
  }
})
