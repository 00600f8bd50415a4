import { assert, describe, it } from "@effect/vitest"
import * as CacheHints from "@effect-mcp/protocol/CacheHints"
import * as Completion from "@effect-mcp/protocol/Completion"
import * as Elicitation from "@effect-mcp/protocol/Elicitation"
import * as InputRequired from "@effect-mcp/protocol/InputRequired"
import * as Logging from "@effect-mcp/protocol/Logging"
import * as Meta from "@effect-mcp/protocol/Meta"
import * as McpResult from "@effect-mcp/protocol/McpResult"
import * as Sampling from "@effect-mcp/protocol/Sampling"
import * as Tasks from "@effect-mcp/protocol/Tasks"
import * as Tools from "@effect-mcp/protocol/Tools"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"

describe("Logging", () => {
  it.effect("levels are ordered by severity", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(Logging.levels, [
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency"
      ])
      assert.deepStrictEqual(Arr.sort(["error", "debug", "emergency", "notice"] as const, Logging.LoggingLevelOrder), [
        "debug",
        "notice",
        "error",
        "emergency"
      ])
      assert.strictEqual(Logging.severity("debug"), 0)
      assert.strictEqual(Logging.severity("emergency"), 7)
    })
  )

  it.effect("isEnabled passes messages at or above the threshold", () =>
    Effect.sync(() => {
      assert.isTrue(Logging.isEnabled("warning", "warning"))
      assert.isTrue(Logging.isEnabled("error", "warning"))
      assert.isFalse(Logging.isEnabled("info", "warning"))
      assert.isTrue(Logging.isEnabled("debug", "debug"))
      assert.isFalse(Logging.isEnabled("alert", "emergency"))
    })
  )

  it.effect("maps Effect log levels", () =>
    Effect.sync(() => {
      assert.strictEqual(Logging.fromLogLevel("Warn"), "warning")
      assert.strictEqual(Logging.fromLogLevel("Trace"), "debug")
      assert.strictEqual(Logging.fromLogLevel("Fatal"), "critical")
      assert.isUndefined(Logging.fromLogLevel("None"))
    })
  )
})

describe("Meta", () => {
  it.effect("recognises reserved key prefixes by their second label", () =>
    Effect.sync(() => {
      assert.isTrue(Meta.isReservedKey(Meta.protocolVersionKey))
      assert.isTrue(Meta.isReservedKey("dev.mcp/thing"))
      assert.isTrue(Meta.isReservedKey("org.modelcontextprotocol.api/x"))
      assert.isTrue(Meta.isReservedKey("com.mcp.tools/x"))
      assert.isFalse(Meta.isReservedKey("com.example.mcp/x"))
      assert.isFalse(Meta.isReservedKey("progressToken"))
      assert.isFalse(Meta.isReservedKey("mcp/x"))
    })
  )

  it.effect("request _meta keeps unknown keys and checks reserved ones", () =>
    Effect.gen(function* () {
      const meta = {
        progressToken: 7,
        [Meta.protocolVersionKey]: "2026-07-28",
        [Meta.clientCapabilitiesKey]: { sampling: { tools: {} } },
        "com.example/trace": { id: "abc" }
      }
      assert.deepStrictEqual(yield* Schema.decodeUnknownEffect(Meta.RequestMeta)(meta), meta)
      const bad = Schema.decodeUnknownExit(Meta.RequestMeta)({ [Meta.logLevelKey]: "loud" })
      assert.isTrue(Exit.isFailure(bad))
      assert.strictEqual(Meta.progressTokenOf({ _meta: { progressToken: "t" } }), "t")
      assert.isUndefined(Meta.progressTokenOf(undefined))
    })
  )
})

describe("Result", () => {
  it.effect("an absent resultType means complete", () =>
    Effect.sync(() => {
      assert.strictEqual(McpResult.resultTypeOf({}), "complete")
      assert.strictEqual(McpResult.resultTypeOf({ resultType: "input_required" }), "input_required")
      assert.isTrue(McpResult.isInputRequired(InputRequired.make({ a: { method: "roots/list" } }, "s")))
      assert.isFalse(McpResult.isInputRequired({}))
    })
  )

  it.effect("results keep keys they do not declare", () =>
    Effect.gen(function* () {
      const result = { content: [], "com.example/extra": 1, nested: { a: [1] } }
      assert.deepStrictEqual(yield* Schema.decodeUnknownEffect(Tools.CallToolResult)(result), result)
    })
  )
})

describe("CacheHints", () => {
  it.effect("fills absent hints conservatively and keeps given ones", () =>
    Effect.sync(() => {
      const result = { tools: [] }
      assert.deepStrictEqual(CacheHints.withDefaults(result), { tools: [], ttlMs: 0, cacheScope: "private" })
      assert.deepStrictEqual(CacheHints.withDefaults({ ttlMs: 5000, cacheScope: "public" as const }), {
        ttlMs: 5000,
        cacheScope: "public"
      })
    })
  )

  it.effect("rejects a negative or fractional ttl", () =>
    Effect.sync(() => {
      assert.isTrue(Exit.isFailure(Schema.decodeUnknownExit(CacheHints.CacheHints)({ ttlMs: -1 })))
      assert.isTrue(Exit.isFailure(Schema.decodeUnknownExit(CacheHints.CacheHints)({ ttlMs: 1.5 })))
    })
  )
})

describe("Completion", () => {
  it.effect("fromMatches caps values at 100 and reports the rest", () =>
    Effect.sync(() => {
      const few = Completion.fromMatches(["a", "b"])
      assert.deepStrictEqual(few, { values: ["a", "b"], total: 2, hasMore: false })
      const many = Completion.fromMatches(Array.from({ length: 150 }, (_, i) => `v${i}`))
      assert.strictEqual(many.values.length, Completion.maxValues)
      assert.strictEqual(many.total, 150)
      assert.isTrue(many.hasMore)
    })
  )
})

describe("Sampling", () => {
  it.effect("content is handled as a list whichever form it came in", () =>
    Effect.sync(() => {
      const block = { type: "text", text: "hi" } as const
      assert.deepStrictEqual(Sampling.contentBlocks(block), [block])
      assert.deepStrictEqual(Sampling.contentBlocks([block, block]), [block, block])
      assert.deepStrictEqual(Sampling.singleBlock([block]), block)
      assert.isUndefined(Sampling.singleBlock([block, block]))
      assert.isUndefined(Sampling.singleBlock([]))
    })
  )
})

describe("Elicitation", () => {
  it.effect("absent mode means form; url params decode as url", () =>
    Effect.gen(function* () {
      const form = yield* Schema.decodeUnknownEffect(Elicitation.ElicitParams)({
        message: "name?",
        requestedSchema: { type: "object", properties: { name: { type: "string" } } }
      })
      assert.strictEqual(Elicitation.modeOf(form), "form")
      const url = yield* Schema.decodeUnknownEffect(Elicitation.ElicitParams)({
        mode: "url",
        message: "sign in",
        url: "https://example.com/auth",
        elicitationId: "e1"
      })
      assert.strictEqual(Elicitation.modeOf(url), "url")
      assert.deepStrictEqual(url, {
        mode: "url",
        message: "sign in",
        url: "https://example.com/auth",
        elicitationId: "e1"
      })
    })
  )

  it.effect("enum fields keep their labels (the first matching union member must not drop them)", () =>
    Effect.gen(function* () {
      const decode = Schema.decodeUnknownEffect(Elicitation.PrimitiveSchemaDefinition)
      const legacy = { type: "string", enum: ["a", "b"], enumNames: ["A", "B"] }
      assert.deepStrictEqual<unknown>(yield* decode(legacy), legacy)
      const titled = { type: "string", oneOf: [{ const: "a", title: "A" }] }
      assert.deepStrictEqual<unknown>(yield* decode(titled), titled)
      const plain = { type: "string", format: "email", minLength: 3 }
      assert.deepStrictEqual<unknown>(yield* decode(plain), plain)
      const multi = { type: "array", items: { anyOf: [{ const: "a", title: "A" }] }, maxItems: 2 }
      assert.deepStrictEqual<unknown>(yield* decode(multi), multi)
    })
  )
})

describe("Tasks", () => {
  it.effect("terminal statuses", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(
        Tasks.TaskStatus.literals.filter((s) => Tasks.isTerminal(s)),
        Tasks.terminalStatuses
      )
      assert.isFalse(Tasks.isTerminal("input_required"))
    })
  )
})

describe("Tools", () => {
  it.effect("result constructors produce valid results", () =>
    Effect.gen(function* () {
      const decode = Schema.decodeUnknownEffect(Tools.CallToolResult)
      assert.deepStrictEqual(yield* decode(Tools.textResult("ok")), { content: [{ type: "text", text: "ok" }] })
      const failed = yield* decode(Tools.errorResult("boom"))
      assert.isTrue(failed.isError)
    })
  )
})
