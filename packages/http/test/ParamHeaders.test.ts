/**
 * SEP-2243 `x-mcp-header`: which annotations are valid, how argument values
 * become `Mcp-Param-*` header text, what the Streamable HTTP client learns
 * from the `tools/list` results it carries, and the server reading the same
 * declarations.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ParamHeaders from "@effect-mcp/http/ParamHeaders"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as ToolParamHeaders from "../src/internal/toolParamHeaders.ts"

const schema = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object" as const,
  properties,
  ...extra
})

const problemOf = (inputSchema: unknown): string | undefined => {
  const result = ParamHeaders.declarations(inputSchema)
  return Result.isFailure(result) ? result.failure : undefined
}

const b64 = (text: string) => `=?base64?${Buffer.from(text, "utf8").toString("base64")}?=`

describe("ParamHeaders.declarations", () => {
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
      assert.deepStrictEqual(Result.getOrThrow(ParamHeaders.declarations(schema({ a: { type: "string" } }))), [])
      assert.deepStrictEqual(Result.getOrThrow(ParamHeaders.declarations({ type: "object" })), [])
    })
  )

  it.effect("refuses names that are not HTTP tokens", () =>
    Effect.sync(() => {
      for (const name of ["", "My Region", "Region:1", "Région", "Region\t1", "Line\r\nBreak", 42, null]) {
        const problem = problemOf(schema({ a: { type: "string", "x-mcp-header": name } }))
        assert.include(problem, "is not a header name", JSON.stringify(name))
      }
      assert.isTrue(ParamHeaders.isHeaderName("X_Custom.1~!#$%&'*+^`|"))
    })
  )

  it.effect("refuses annotations on anything but string, integer and boolean properties", () =>
    Effect.sync(() => {
      for (const type of ["number", "object", "array", "null", ["string", "null"], undefined]) {
        const problem = problemOf(schema({ a: { type, "x-mcp-header": "A" } }))
        assert.strictEqual(problem, "a: only string, integer and boolean may be mirrored", JSON.stringify(type))
      }
    })
  )

  it.effect("refuses names declared twice, ignoring case, wherever they sit", () =>
    Effect.sync(() => {
      assert.strictEqual(
        problemOf(schema({ a: { type: "string", "x-mcp-header": "Id" }, b: { type: "string", "x-mcp-header": "ID" } })),
        "b: ID is declared twice (names ignore case)"
      )
      assert.include(
        problemOf(
          schema({
            a: { type: "string", "x-mcp-header": "Region" },
            nested: { type: "object", properties: { b: { type: "string", "x-mcp-header": "region" } } }
          })
        ),
        "declared twice"
      )
    })
  )

  it.effect("refuses annotations not reachable through properties alone", () =>
    Effect.sync(() => {
      const unreachable = [
        schema({ a: { type: "array", items: { type: "string", "x-mcp-header": "A" } } }),
        schema({}, { $defs: { a: { type: "string", "x-mcp-header": "A" } } }),
        schema({}, { anyOf: [schema({ a: { type: "string", "x-mcp-header": "A" } })] }),
        schema({ a: { type: "object", additionalProperties: { type: "string", "x-mcp-header": "A" } } }),
        { type: "object", "x-mcp-header": "Root" }
      ]
      for (const inputSchema of unreachable) {
        assert.include(problemOf(inputSchema), "not reachable through properties alone", JSON.stringify(inputSchema))
      }
    })
  )

  it.effect("reports every problem of a schema", () =>
    Effect.sync(() => {
      const problem = problemOf(
        schema({ a: { type: "number", "x-mcp-header": "A" }, b: { type: "string", "x-mcp-header": "B C" } })
      )
      assert.strictEqual(problem, 'a: only string, integer and boolean may be mirrored; b: "B C" is not a header name')
    })
  )
})

describe("ParamHeaders encoding", () => {
  it.effect("sends visible ASCII as it is and everything else in the base64 form", () =>
    Effect.sync(() => {
      assert.strictEqual(ParamHeaders.encodeValue("us-west1"), "us-west1")
      assert.strictEqual(ParamHeaders.encodeValue("us west 1"), "us west 1")
      assert.strictEqual(ParamHeaders.encodeValue(""), "")
      assert.strictEqual(ParamHeaders.encodeValue(" padded "), b64(" padded "))
      assert.strictEqual(ParamHeaders.encodeValue("trailing "), b64("trailing "))
      assert.strictEqual(ParamHeaders.encodeValue("Hello, 世界"), b64("Hello, 世界"))
      assert.strictEqual(ParamHeaders.encodeValue("line1\r\nline2"), b64("line1\r\nline2"))
      assert.strictEqual(ParamHeaders.encodeValue("\tindented"), b64("\tindented"))
      assert.strictEqual(ParamHeaders.encodeValue("bell\u0007"), b64("bell\u0007"))
    })
  )

  it.effect("encodes plain text that reads as the base64 form, and leaves near misses alone", () =>
    Effect.sync(() => {
      assert.strictEqual(ParamHeaders.encodeValue("=?base64?abc?="), b64("=?base64?abc?="))
      assert.strictEqual(ParamHeaders.encodeValue("=?BASE64?abc?="), b64("=?BASE64?abc?="))
      assert.strictEqual(ParamHeaders.encodeValue("=?base64?abc"), "=?base64?abc")
      assert.strictEqual(ParamHeaders.encodeValue("SGVsbG8="), "SGVsbG8=")
    })
  )

  it.effect("writes numbers and booleans as text and sends nothing for null, missing or structured values", () =>
    Effect.sync(() => {
      assert.strictEqual(ParamHeaders.encodeValue(42), "42")
      assert.strictEqual(ParamHeaders.encodeValue(-7), "-7")
      assert.strictEqual(ParamHeaders.encodeValue(false), "false")
      assert.strictEqual(ParamHeaders.encodeValue(true), "true")
      assert.strictEqual(ParamHeaders.encodeValue(Number.NaN), undefined)
      assert.strictEqual(ParamHeaders.encodeValue(null), undefined)
      assert.strictEqual(ParamHeaders.encodeValue(undefined), undefined)
      assert.strictEqual(ParamHeaders.encodeValue({ a: 1 }), undefined)
      assert.strictEqual(ParamHeaders.encodeValue(["a"]), undefined)
    })
  )

  it.effect("builds the headers of a call, nested arguments included, leaving out null and missing ones", () =>
    Effect.sync(() => {
      const declared = Result.getOrThrow(
        ParamHeaders.declarations(
          schema({
            region: { type: "string", "x-mcp-header": "Region" },
            verbose: { type: "boolean", "x-mcp-header": "Verbose" },
            options: { type: "object", properties: { priority: { type: "integer", "x-mcp-header": "Priority" } } }
          })
        )
      )
      assert.deepStrictEqual(ParamHeaders.headersFor(declared, { region: "eu", verbose: null, query: "x" }), {
        "mcp-param-region": "eu"
      })
      assert.deepStrictEqual(
        ParamHeaders.headersFor(declared, { region: "é", verbose: true, options: { priority: 3 } }),
        { "mcp-param-region": b64("é"), "mcp-param-verbose": "true", "mcp-param-priority": "3" }
      )
      assert.deepStrictEqual(ParamHeaders.headersFor(declared, { options: "not an object" }), {})
      assert.deepStrictEqual(ParamHeaders.headersFor(declared, undefined), {})
    })
  )
})

describe("what the Streamable HTTP client learns from tools/list", () => {
  const meta = (version: string) => ({ _meta: { "io.modelcontextprotocol/protocolVersion": version } })
  const list = (id: number, version: string): JsonRpc.Request => ({
    jsonrpc: "2.0",
    id,
    method: "tools/list",
    params: meta(version)
  })
  const call = (name: string, args: unknown): JsonRpc.Request => ({
    jsonrpc: "2.0",
    id: 99,
    method: "tools/call",
    params: { name, arguments: args, ...meta("2026-07-28") }
  })
  const tools = [
    { name: "good", inputSchema: schema({ region: { type: "string", "x-mcp-header": "Region" } }) },
    { name: "bad", inputSchema: schema({ score: { type: "number", "x-mcp-header": "Score" } }) },
    { name: "plain", inputSchema: schema({ text: { type: "string" } }) }
  ]
  const reply = (id: number, result: unknown): JsonRpc.Message => ({ jsonrpc: "2.0", id, result }) as JsonRpc.Message

  it.effect("remembers the declarations of valid tools listed on 2026-07-28 and mirrors their arguments", () =>
    Effect.sync(() => {
      const memory = ToolParamHeaders.make()
      assert.deepStrictEqual(memory.headersFor(call("good", { region: "eu" })), {})
      memory.watch([list(1, "2026-07-28")])
      memory.learn([reply(1, { tools })])
      assert.deepStrictEqual(memory.headersFor(call("good", { region: "eu" })), { "mcp-param-region": "eu" })
      assert.deepStrictEqual(memory.headersFor(call("bad", { score: 1 })), {})
      assert.deepStrictEqual(memory.headersFor(call("plain", { text: "x" })), {})
      assert.deepStrictEqual(memory.headersFor(list(2, "2026-07-28")), {})
    })
  )

  it.effect("learns only from replies to watched stateless listings; a later listing replaces a tool", () =>
    Effect.sync(() => {
      const memory = ToolParamHeaders.make()
      memory.watch([list(1, "2025-11-25")])
      memory.learn([reply(1, { tools })])
      memory.learn([reply(7, { tools })])
      assert.deepStrictEqual(memory.headersFor(call("good", { region: "eu" })), {})
      memory.watch([list(2, "2026-07-28")])
      memory.learn([reply(2, { tools })])
      memory.watch([list(3, "2026-07-28")])
      memory.learn([reply(3, { tools: [{ name: "good", inputSchema: tools[1]!.inputSchema }] })])
      assert.deepStrictEqual(memory.headersFor(call("good", { region: "eu" })), {})
    })
  )

  it.effect("listings that never got a reply are let go, oldest first", () =>
    Effect.sync(() => {
      const memory = ToolParamHeaders.make()
      memory.watch(Array.from({ length: 300 }, (_, i) => list(i, "2026-07-28")))
      memory.learn([reply(0, { tools })])
      assert.deepStrictEqual(memory.headersFor(call("good", { region: "eu" })), {})
      memory.learn([reply(299, { tools })])
      assert.deepStrictEqual(memory.headersFor(call("good", { region: "eu" })), { "mcp-param-region": "eu" })
    })
  )
})

describe("StreamableHttpServer.paramHeadersOf", () => {
  it.effect("reads the valid declarations, nested ones with their path below the argument", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(
        StreamableHttpServer.paramHeadersOf(
          schema({
            region: { type: "string", "x-mcp-header": "Region" },
            options: { type: "object", properties: { dryRun: { type: "boolean", "x-mcp-header": "Dry-Run" } } },
            score: { type: "number", "x-mcp-header": "Score" }
          })
        ),
        [
          { header: "Region", argument: "region" },
          { header: "Dry-Run", argument: "options", nested: ["dryRun"] }
        ]
      )
    })
  )
})
