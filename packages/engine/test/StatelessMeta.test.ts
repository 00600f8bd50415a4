import { assert, describe, it } from "@effect/vitest"
import * as FrozenJson from "@effect-mcp/protocol/FrozenJson"
import type * as Session from "@effect-mcp/engine/Session"
import * as Effect from "effect/Effect"
import { clientInfo, linked } from "./fixtures.ts"

const CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
const INFO = "io.modelcontextprotocol/clientInfo"

describe("a stateless (2026-07-28) client's `_meta`", () => {
  it.effect("is one value that can never change, the same on every request, made from copies of the declarations", () =>
    Effect.gen(function* () {
      const seen: Array<Record<string, unknown>> = []
      const handler: Session.Handler = (_params, info) =>
        Effect.sync(() => {
          seen.push((info.request.params as { readonly _meta: Record<string, unknown> })._meta)
          return { content: [] }
        })
      const capabilities = { roots: { listChanged: true } }
      const { client } = yield* linked({
        server: { capabilities: { tools: {} }, handlers: new Map([["tools/call", handler]]) },
        client: { capabilities }
      })
      assert.isTrue(client.state.revision!.stateless)
      yield* client.request("tools/call", { name: "a" })
      yield* client.request("tools/call", { name: "b" })
      assert.strictEqual(seen.length, 2)
      assert.strictEqual(seen[0], seen[1])
      assert.isTrue(FrozenJson.isFrozen(seen[0]))
      assert.deepStrictEqual(seen[0]![CAPABILITIES], capabilities)
      assert.deepStrictEqual(seen[0]![INFO], clientInfo)
      // The caller's own objects are copied, never frozen.
      assert.isFalse(Object.isFrozen(capabilities))
      assert.isFalse(Object.isFrozen(capabilities.roots))
    })
  )
})
