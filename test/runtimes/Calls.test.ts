/**
 * A stateful session lives as long as its server does: on Node (`NodeMcpServer`, the everything server's bin),
 * Bun and Deno (`WebHandler` under the runtime's own server, Runtime.ts), the official 1.x SDK client opens one
 * 2025-11-25 session and makes 1,000 calls on it, 8 in flight, alternating a tool call and a list. Every answer
 * is checked, the session id never changes, and the session still answers a ping after the last call.
 */
import { assert, describe, it } from "@effect/vitest"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as SdkClient from "../interop/sdkClient.ts"
import * as Runtime from "./Runtime.ts"

const calls = 1_000

describe.each(["node", "bun", "deno"] as const)("a stateful session on %s", (name) => {
  it.live(
    `survives ${calls.toLocaleString("en-US")} calls`,
    () =>
      Effect.gen(function* () {
        const server = yield* Runtime.startOn(name)
        const transport = new StreamableHTTPClientTransport(new URL(server.url))
        const sdk = yield* SdkClient.connect(transport)
        const session = transport.sessionId
        assert.isString(session)
        const answers = yield* Effect.forEach(
          Array.from({ length: calls }, (_, i) => i),
          (i) =>
            Effect.promise(async () => {
              if (i % 2 === 1) return (await sdk.client.listPrompts()).prompts.length > 0 ? "listed" : "empty"
              const result = (await sdk.client.callTool({ name: "test_simple_text", arguments: {} })) as CallToolResult
              return result.content[0]?.type === "text" ? result.content[0].text : "not text"
            }),
          { concurrency: 8 }
        )
        const text = "This is a simple text response for testing."
        assert.deepStrictEqual(
          answers.filter((answer, i) => answer !== (i % 2 === 1 ? "listed" : text)),
          []
        )
        assert.strictEqual(transport.sessionId, session)
        yield* Effect.promise(() => sdk.client.ping())
      }),
    60_000
  )
})
