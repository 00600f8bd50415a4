/**
 * The registry switches effect's JIT schema compiler on for its message
 * schemas: decoding them generates code (counted through `Function`), decoding
 * an unrelated schema does not, and compiled decoding gives the same answers.
 * A file of its own: vitest isolates files, so no other test has decoded these
 * schemas (and captured interpreted parsers) before.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Registry from "@effect-mcp/protocol/Registry"
import type { AnyCodec } from "@effect-mcp/protocol/Revision"
import { Effect, Exit, Schema } from "effect"

/** Runs `f`, counting the functions effect's JIT generates (`Function("ast", "R", "resolve", source)`). */
const countGenerated = <A>(f: () => A): [A, number] => {
  const original = globalThis.Function
  let generated = 0
  globalThis.Function = new Proxy(original, {
    apply(target, self, args: Array<string>) {
      if (args.length === 4) generated++
      return Reflect.apply(target, self, args)
    },
    construct(target, args: Array<string>) {
      if (args.length === 4) generated++
      return Reflect.construct(target, args)
    }
  })
  try {
    return [f(), generated]
  } finally {
    globalThis.Function = original
  }
}

const decode = (schema: AnyCodec, input: unknown) => Schema.decodeUnknownExit(schema)(input)

describe("JIT-compiled message schemas", () => {
  it.effect("compile on first decode and decode as before", () =>
    Effect.sync(() => {
      const call = Registry.get("2025-06-18").methods.get("tools/call")!
      const valid = { name: "echo", arguments: { text: "hi" }, _meta: { progressToken: 7 } }
      const [ok, generated] = countGenerated(() => decode(call.params, valid))
      assert.isAbove(generated, 0)
      assert.deepStrictEqual(ok, Exit.succeed(valid))

      const bad = decode(call.params, { name: 42 })
      assert.isTrue(Exit.isFailure(bad))
      assert.include(String(bad), "name")

      const plain = Schema.Struct({ name: Schema.String })
      const [, unrelated] = countGenerated(() => Schema.decodeUnknownExit(plain)({ name: "x" }))
      assert.strictEqual(unrelated, 0)
    })
  )

  it.effect("initialize, seen once per session, stays interpreted and decodes as before", () =>
    Effect.sync(() => {
      const spec = Registry.get("2025-11-25").methods.get("initialize")!
      assert.strictEqual(spec._tag, "Request")
      const init = spec as { readonly params: AnyCodec; readonly result: AnyCodec }
      const valid = {
        protocolVersion: "2025-11-25",
        capabilities: { roots: { listChanged: true } },
        clientInfo: { name: "c", version: "1" }
      }
      const [ok, generated] = countGenerated(() => decode(init.params, valid))
      assert.strictEqual(generated, 0)
      assert.deepStrictEqual(ok, Exit.succeed(valid))
      assert.isTrue(Exit.isFailure(decode(init.params, { capabilities: {} })))

      const answer = {
        protocolVersion: "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "s", version: "1" }
      }
      const [encoded, generatedResult] = countGenerated(() => Schema.encodeUnknownExit(init.result)(answer))
      assert.strictEqual(generatedResult, 0)
      assert.deepStrictEqual(encoded, Exit.succeed(answer))
    })
  )

  it.effect("compiled results keep unions and open objects intact", () =>
    Effect.sync(() => {
      const result = Registry.get("2026-07-28").methods.get("tools/call")!
      assert.strictEqual(result._tag, "Request")
      const schema = (result as { readonly result: AnyCodec }).result
      const complete = {
        resultType: "complete",
        content: [{ type: "text", text: "hi" }],
        structuredContent: { n: 1 },
        isError: false
      }
      const inputRequired = { resultType: "input_required", requestState: "opaque" }
      assert.deepStrictEqual(decode(schema, complete), Exit.succeed(complete))
      assert.deepStrictEqual(decode(schema, inputRequired), Exit.succeed(inputRequired))
      assert.isTrue(Exit.isFailure(decode(schema, { content: [] })))

      const initialize = Registry.get("2024-11-05").methods.get("initialize")!
      const resultSchema = (initialize as { readonly result: AnyCodec }).result
      const initResult = {
        protocolVersion: "2024-11-05",
        capabilities: { tools: { listChanged: true }, experimental: { x: { y: 1 } } },
        serverInfo: { name: "s", version: "1" }
      }
      assert.deepStrictEqual(decode(resultSchema, initResult), Exit.succeed(initResult))
      // InitializeResult declares no additionalProperties: undeclared keys are dropped, as for any closed object.
      assert.deepStrictEqual(decode(resultSchema, { ...initResult, vendor: 1 }), Exit.succeed(initResult))
    })
  )
})
