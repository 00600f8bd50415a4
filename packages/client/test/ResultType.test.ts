/**
 * `resultType` on 2026-07-28: a result whose `resultType` the client does not
 * recognize is invalid (`InvalidResult`, `Malformed`, naming the value),
 * whatever the method and in every round of a request, while `complete`, or
 * none at all, is a finished result. Against a raw server end that answers as
 * told.
 */
import { assert, describe, it } from "@effect/vitest"
import { InvalidResult } from "@effect-mcp/client/ClientError"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { clientInfo, serverInfo } from "./fixtures.ts"

type Obj = { readonly [key: string]: unknown }

const discovered = {
  resultType: "complete",
  supportedVersions: ["2026-07-28"],
  capabilities: { tools: {}, prompts: {} },
  _meta: { "io.modelcontextprotocol/serverInfo": serverInfo }
}

/** A 2026-07-28 client against a raw end answering each request with `answer(method, params)`. */
const against = (answer: (method: string, params: Obj) => unknown) =>
  Effect.gen(function* () {
    const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: true })
    yield* serverEnd.incoming.pipe(
      Stream.runForEach((frame) => {
        if (Result.isFailure(frame)) return Effect.void
        const messages = (Array.isArray(frame.success) ? frame.success : [frame.success]) as Array<JsonRpc.Message>
        return Effect.forEach(
          messages.filter((m): m is JsonRpc.Request => "method" in m && "id" in m),
          (request) =>
            serverEnd.send({
              jsonrpc: "2.0",
              id: request.id,
              result:
                request.method === "server/discover"
                  ? discovered
                  : answer(request.method, (request.params ?? {}) as Obj)
            } as JsonRpc.Message),
          { discard: true }
        )
      }),
      Effect.forkScoped
    )
    return yield* McpClient.make({ clientInfo, supportedVersions: ["2026-07-28"] }).pipe(
      Effect.provideService(Transport.Transport, clientEnd)
    )
  })

const text = { content: [{ type: "text" as const, text: "done" }] }

const assertUnrecognized = (error: unknown, method: string) => {
  assert.instanceOf(error, InvalidResult)
  assert.strictEqual(error.method, method)
  assert.strictEqual(error.reason, "Malformed")
  assert.include(error.message, '"weird"')
}

describe("resultType on 2026-07-28", () => {
  it.effect("an unrecognized resultType fails the request as an invalid result, whatever the method", () =>
    Effect.gen(function* () {
      // Beside it, complete and an absent resultType are finished results.
      const complete = yield* against(() => ({ resultType: "complete", ...text }))
      assert.deepStrictEqual((yield* complete.callTool("any")).content, text.content)
      const absent = yield* against(() => text)
      assert.deepStrictEqual((yield* absent.callTool("any")).content, text.content)
      const client = yield* against(() => ({ resultType: "weird", ...text, tools: [], messages: [] }))
      assertUnrecognized(yield* Effect.flip(client.callTool("any")), "tools/call")
      assertUnrecognized(yield* Effect.flip(client.listTools()), "tools/list")
      assertUnrecognized(yield* Effect.flip(client.getPrompt("any")), "prompts/get")
      assertUnrecognized(yield* Effect.flip(client.request("tools/call", { name: "any" })), "tools/call")
      assertUnrecognized(yield* Effect.flip(client.requestOnce("tools/call", { name: "any" })), "tools/call")
    })
  )

  it.effect("a later round's answer is checked too", () =>
    Effect.gen(function* () {
      const client = yield* against((_, params) =>
        params.requestState === undefined
          ? { resultType: "input_required", inputRequests: {}, requestState: "again" }
          : { resultType: "weird", ...text }
      )
      assertUnrecognized(yield* Effect.flip(client.callTool("any")), "tools/call")
    })
  )
})
