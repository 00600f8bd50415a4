/**
 * A request whose handler's effect is already an outcome (`Effect.succeed`,
 * `Effect.fail`, a refusal of the gate) is answered at once, with no fiber
 * (`Dispatcher.requestNow`). Each outcome gets the answer a fiber would have
 * given, whichever way the request is served: at once, in a fiber (a handler
 * with work to run), under a concurrency limit, or traced.
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Session from "@effect-mcp/engine/Session"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import { linked } from "./fixtures.ts"

const handlers = (): Map<string, Session.Handler> =>
  new Map<string, Session.Handler>([
    ["tools/list", () => Effect.succeed({ tools: [{ name: "now", inputSchema: { type: "object" } }] })],
    ["prompts/list", () => Effect.fail(new McpError.InvalidParams({ message: "bad cursor" }))],
    // Work to run (not yet an outcome): served in a fiber.
    ["resources/list", () => Effect.sync(() => ({ resources: [] }))],
    ["resources/templates/list", () => Exit.interrupt()]
  ])

const settings: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ["at once", {}],
  ["under a concurrency limit", { peer: { maxConcurrentRequests: 1 } }]
]

// A stateful revision, and the stateless one, whose results all carry `resultType`.
const revisions = [["2025-11-25"], ["2026-07-28"]] as const

const listed = (result: unknown, stateless: boolean): unknown => {
  const { resultType, ...rest } = result as { readonly resultType?: string }
  assert.strictEqual(resultType, stateless ? "complete" : undefined)
  return rest
}

describe("a handler whose outcome is known at once", () => {
  for (const [name, options] of settings)
    for (const clientVersions of revisions) {
      const stateless = clientVersions[0] === "2026-07-28"
      const label = `${name}, ${clientVersions[0]}`
      it.effect(`is answered as a fiber would answer it (${label})`, () =>
        Effect.gen(function* () {
          const { client } = yield* linked({
            codec: true,
            clientVersions,
            server: {
              capabilities: { tools: {}, prompts: {}, resources: {} },
              handlers: handlers(),
              ...options
            }
          })
          const tools = listed(yield* client.request("tools/list", {}), stateless) as {
            tools: ReadonlyArray<{ name: string }>
          }
          assert.deepStrictEqual(
            tools.tools.map((tool) => tool.name),
            ["now"]
          )
          const failed = (yield* Effect.flip(client.request("prompts/list", {}))) as McpError.McpError
          assert.strictEqual(failed._tag, "InvalidParams")
          assert.strictEqual(failed.message, "bad cursor")
          assert.deepStrictEqual(listed(yield* client.request("resources/list", {}), stateless), { resources: [] })
          // Refused by the gate before any handler: an unknown method, and params that do not decode.
          const unknown = (yield* Effect.flip(client.request("prompts/get", { name: "p" }))) as McpError.McpError
          assert.strictEqual(unknown._tag, "MethodNotFound")
          const invalid = (yield* Effect.flip(client.request("tools/call", { name: 7 }))) as McpError.McpError
          assert.strictEqual(invalid._tag, "InvalidParams")
          // Each request got exactly one answer: the session still serves, in order.
          assert.deepStrictEqual(listed(yield* client.request("resources/list", {}), stateless), { resources: [] })
        })
      )

      it.effect(`an interruption is answered by nobody (${label})`, () =>
        Effect.gen(function* () {
          const { client } = yield* linked({
            clientVersions,
            server: { capabilities: { resources: {} }, handlers: handlers(), ...options }
          })
          const waiting = yield* Effect.forkChild(
            client.request("resources/templates/list", {}, { timeout: "5 seconds" }).pipe(Effect.flip)
          )
          yield* TestClock.adjust("5 seconds")
          const error = (yield* Fiber.join(waiting)) as { readonly _tag: string }
          assert.strictEqual(error._tag, "RequestTimeout")
          // The session goes on serving.
          assert.deepStrictEqual(listed(yield* client.request("resources/list", {}), stateless), { resources: [] })
        })
      )
    }
})
