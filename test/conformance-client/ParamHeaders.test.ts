/**
 * The conformance client's SEP-2243 rules (apps/conformance-client/src/ParamHeaders.ts):
 * which `x-mcp-header` annotations are valid, and how argument values become
 * `Mcp-Param-*` header text.
 */
import * as ParamHeaders from "@effect-mcp/conformance-client/ParamHeaders"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"

const schema = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object" as const,
  properties,
  ...extra
})

const invalid = (inputSchema: unknown) => Result.isFailure(ParamHeaders.declarations(inputSchema))

describe("ParamHeaders", () => {
  it.effect("reads annotations reachable through properties, nested ones included", () =>
    Effect.sync(() => {
      const found = ParamHeaders.declarations(
        schema({
          region: { type: "string", "x-mcp-header": "Region" },
          retries: { type: "integer", "x-mcp-header": "Retries" },
          options: { type: "object", properties: { dryRun: { type: "boolean", "x-mcp-header": "Dry-Run" } } },
          query: { type: "string" }
        })
      )
      assert.deepStrictEqual(Result.getOrThrow(found), [
        { path: ["region"], name: "Region", type: "string" },
        { path: ["retries"], name: "Retries", type: "integer" },
        { path: ["options", "dryRun"], name: "Dry-Run", type: "boolean" }
      ])
    })
  )

  it.effect("refuses invalid annotations", () =>
    Effect.sync(() => {
      assert.isTrue(invalid(schema({ a: { type: "string", "x-mcp-header": "" } })))
      assert.isTrue(invalid(schema({ a: { type: "string", "x-mcp-header": "My Region" } })))
      assert.isTrue(invalid(schema({ a: { type: "string", "x-mcp-header": "Region:1" } })))
      assert.isTrue(invalid(schema({ a: { type: "string", "x-mcp-header": "Région" } })))
      assert.isTrue(invalid(schema({ a: { type: "number", "x-mcp-header": "Score" } })))
      assert.isTrue(invalid(schema({ a: { type: "object", "x-mcp-header": "Data" } })))
      assert.isTrue(invalid(schema({ a: { type: ["string", "null"], "x-mcp-header": "A" } })))
      assert.isTrue(
        invalid(schema({ a: { type: "string", "x-mcp-header": "Id" }, b: { type: "string", "x-mcp-header": "ID" } }))
      )
      // Only a chain of `properties` reaches an argument.
      assert.isTrue(invalid(schema({ a: { type: "array", items: { type: "string", "x-mcp-header": "A" } } })))
      assert.isTrue(invalid(schema({}, { $defs: { a: { type: "string", "x-mcp-header": "A" } } })))
      assert.isTrue(invalid(schema({}, { anyOf: [schema({ a: { type: "string", "x-mcp-header": "A" } })] })))
      assert.isTrue(invalid({ type: "object", "x-mcp-header": "Root" }))
      assert.isFalse(invalid(schema({ a: { type: "string" } })))
    })
  )

  it.effect("encodes values as header text, base64 when plain text would be ambiguous or unsafe", () =>
    Effect.sync(() => {
      const b64 = (text: string) => `=?base64?${Buffer.from(text, "utf8").toString("base64")}?=`
      assert.strictEqual(ParamHeaders.encodeValue("us-west1"), "us-west1")
      assert.strictEqual(ParamHeaders.encodeValue("us west 1"), "us west 1")
      assert.strictEqual(ParamHeaders.encodeValue(""), "")
      assert.strictEqual(ParamHeaders.encodeValue(" padded "), b64(" padded "))
      assert.strictEqual(ParamHeaders.encodeValue("Hello, 世界"), b64("Hello, 世界"))
      assert.strictEqual(ParamHeaders.encodeValue("line1\r\nline2"), b64("line1\r\nline2"))
      assert.strictEqual(ParamHeaders.encodeValue("\tindented"), b64("\tindented"))
      assert.strictEqual(ParamHeaders.encodeValue("=?base64?abc?="), b64("=?base64?abc?="))
      assert.strictEqual(ParamHeaders.encodeValue(42), "42")
      assert.strictEqual(ParamHeaders.encodeValue(false), "false")
      assert.strictEqual(ParamHeaders.encodeValue(null), undefined)
      assert.strictEqual(ParamHeaders.encodeValue(undefined), undefined)
    })
  )

  it.effect("builds the headers of a call, leaving out null and missing arguments", () =>
    Effect.sync(() => {
      const declared = Result.getOrThrow(
        ParamHeaders.declarations(
          schema({
            region: { type: "string", "x-mcp-header": "Region" },
            verbose: { type: "boolean", "x-mcp-header": "Verbose" },
            priority: { type: "integer", "x-mcp-header": "Priority" }
          })
        )
      )
      assert.deepStrictEqual(ParamHeaders.headersFor(declared, { region: "eu", verbose: null, query: "x" }), {
        "mcp-param-region": "eu"
      })
      assert.deepStrictEqual(ParamHeaders.headersFor(declared, { region: "eu", verbose: true, priority: 3 }), {
        "mcp-param-region": "eu",
        "mcp-param-verbose": "true",
        "mcp-param-priority": "3"
      })
    })
  )

  it.effect("admits only tools with valid annotations and mirrors their arguments", () =>
    Effect.gen(function* () {
      const params = yield* ParamHeaders.ParamHeaders
      const kept = yield* params.admit([
        { name: "good", inputSchema: schema({ region: { type: "string", "x-mcp-header": "Region" } }) },
        { name: "bad", inputSchema: schema({ score: { type: "number", "x-mcp-header": "Score" } }) }
      ])
      assert.deepStrictEqual(
        kept.map((t) => t.name),
        ["good"]
      )
      assert.deepStrictEqual(params.headersFor("good", { region: "eu" }), { "mcp-param-region": "eu" })
      assert.deepStrictEqual(params.headersFor("bad", { score: 1 }), {})
    }).pipe(Effect.provide(ParamHeaders.layer))
  )
})
