import { assert, describe, it } from "@effect/vitest"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

describe("McpError", () => {
  it.effect("each class carries its code and a default message", () =>
    Effect.sync(() => {
      const table: ReadonlyArray<readonly [McpError.McpError, string, number]> = [
        [new McpError.ParseError({}), "ParseError", -32700],
        [new McpError.InvalidRequest({}), "InvalidRequest", -32600],
        [new McpError.MethodNotFound({}), "MethodNotFound", -32601],
        [new McpError.InvalidParams({}), "InvalidParams", -32602],
        [new McpError.InternalError({}), "InternalError", -32603],
        [new McpError.ResourceNotFound({}), "ResourceNotFound", -32002],
        [new McpError.UrlElicitationRequired({ data: { elicitations: [] } }), "UrlElicitationRequired", -32042],
        [new McpError.HeaderMismatch({}), "HeaderMismatch", -32020],
        [
          new McpError.MissingRequiredClientCapability({ data: { requiredCapabilities: {} } }),
          "MissingRequiredClientCapability",
          -32021
        ],
        [
          new McpError.UnsupportedProtocolVersion({ data: { requested: "1900-01-01", supported: ["2025-11-25"] } }),
          "UnsupportedProtocolVersion",
          -32022
        ],
        [new McpError.JsonRpcError({ code: -32000, message: "custom" }), "JsonRpcError", -32000]
      ]
      for (const [error, tag, code] of table) {
        assert.strictEqual(error._tag, tag)
        assert.strictEqual(error.code, code)
        assert.isTrue(error.message.length > 0)
        assert.isTrue(McpError.isMcpError(error))
      }
      assert.isFalse(McpError.isMcpError(new Error("x")))
    })
  )

  it.effect("toErrorObject / fromErrorObject round trip every class", () =>
    Effect.sync(() => {
      const errors: ReadonlyArray<McpError.McpError> = [
        new McpError.ParseError({ message: "bad json" }),
        new McpError.InvalidParams({ message: "bad", data: { issues: [] } }),
        new McpError.ResourceNotFound({ message: "nope", data: { uri: "file:///x" } }),
        new McpError.UrlElicitationRequired({
          message: "go",
          data: { elicitations: [{ mode: "url", url: "https://x" }], hint: 1 }
        }),
        new McpError.UnsupportedProtocolVersion({ data: { requested: "x", supported: ["2026-07-28"] } }),
        new McpError.JsonRpcError({ code: -32099, message: "server", data: null })
      ]
      for (const error of errors) {
        const back = McpError.fromErrorObject(McpError.toErrorObject(error))
        assert.strictEqual(back._tag, error._tag)
        assert.strictEqual(back.code, error.code)
        assert.strictEqual(back.message, error.message)
        assert.deepStrictEqual(back.data, error.data)
      }
    })
  )

  it.effect("toErrorObject leaves data out when there is none", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(McpError.toErrorObject(new McpError.MethodNotFound({ message: "m" })), {
        code: -32601,
        message: "m"
      })
    })
  )

  it.effect("the 2026-07-28 codes match the spec's examples", () =>
    Effect.sync(() => {
      // packages/protocol/spec/2026-07-28/examples/{HeaderMismatchError,MissingRequiredClientCapabilityError,UnsupportedProtocolVersionError}
      const examples = [
        { code: -32020, message: "Header mismatch: Mcp-Name header value 'foo' does not match body value 'bar'" },
        {
          code: -32021,
          message: "Server requires the elicitation capability for this request",
          data: { requiredCapabilities: { elicitation: {} } }
        },
        {
          code: -32022,
          message: "Unsupported protocol version",
          data: { supported: ["2026-07-28", "2025-11-25"], requested: "1900-01-01" }
        }
      ]
      const tags = examples.map((e) => McpError.fromErrorObject(e, "2026-07-28")._tag)
      assert.deepStrictEqual(tags, ["HeaderMismatch", "MissingRequiredClientCapability", "UnsupportedProtocolVersion"])
      for (const example of examples) {
        assert.deepStrictEqual(
          McpError.toErrorObject(McpError.fromErrorObject(example, "2026-07-28"), "2026-07-28"),
          example
        )
      }
    })
  )

  it.effect("a named code with malformed required data falls back to JsonRpcError", () =>
    Effect.sync(() => {
      const error = McpError.fromErrorObject({ code: -32022, message: "m", data: { requested: 1 } })
      assert.strictEqual(error._tag, "JsonRpcError")
      assert.strictEqual(error.code, -32022)
      assert.strictEqual(McpError.fromErrorObject({ code: -32042, message: "m" })._tag, "JsonRpcError")
    })
  )

  it.effect("unknown codes give JsonRpcError carrying the code", () =>
    Effect.sync(() => {
      const error = McpError.fromErrorObject({ code: 42, message: "odd", data: [1] })
      assert.strictEqual(error._tag, "JsonRpcError")
      assert.deepStrictEqual(McpError.toErrorObject(error), { code: 42, message: "odd", data: [1] })
    })
  )

  it.effect("resource-not-found is -32002 up to 2025-11-25 and -32602 on 2026-07-28", () =>
    Effect.sync(() => {
      const error = new McpError.ResourceNotFound({ message: "Resource not found", data: { uri: "file:///x" } })
      const codes = ProtocolVersion.all.map((revision) => McpError.toErrorObject(error, revision).code)
      assert.deepStrictEqual(codes, [-32002, -32002, -32002, -32002, -32602])
      // -32602 reads back as InvalidParams on 2026-07-28 (it is that code); a legacy -32002 still reads as ResourceNotFound.
      assert.strictEqual(McpError.fromErrorObject({ code: -32602, message: "m" }, "2026-07-28")._tag, "InvalidParams")
      assert.strictEqual(
        McpError.fromErrorObject({ code: -32002, message: "m" }, "2026-07-28")._tag,
        "ResourceNotFound"
      )
    })
  )

  it.effect("the per-revision table says which codes exist where", () =>
    Effect.sync(() => {
      const has = (code: number) => ProtocolVersion.all.filter((revision) => McpError.exists(code, revision))
      assert.deepStrictEqual(has(-32700), [...ProtocolVersion.all])
      assert.deepStrictEqual(has(-32002), ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
      assert.deepStrictEqual(has(-32042), ["2025-11-25"])
      assert.deepStrictEqual(has(-32020), ["2026-07-28"])
      assert.deepStrictEqual(has(-32021), ["2026-07-28"])
      assert.deepStrictEqual(has(-32022), ["2026-07-28"])
      assert.strictEqual(McpError.codeOf("UrlElicitationRequired", "2026-07-28"), undefined)
      assert.strictEqual(McpError.codeOf("ResourceNotFound", "2026-07-28"), -32602)
      assert.strictEqual(McpError.codeOf("ResourceNotFound"), -32002)
    })
  )

  it.effect("toResponse builds the error response", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(McpError.toResponse(7, new McpError.InternalError({ message: "x" })), {
        jsonrpc: "2.0",
        id: 7,
        error: { code: -32603, message: "x" }
      })
    })
  )

  it.effect("the McpError schema encodes and decodes the classes", () =>
    Effect.gen(function* () {
      const error = new McpError.InvalidParams({ message: "bad", data: { at: "x" } })
      const encoded = yield* Schema.encodeEffect(McpError.McpError)(error)
      const decoded = yield* Schema.decodeUnknownEffect(McpError.McpError)(encoded)
      assert.isTrue(decoded instanceof McpError.InvalidParams)
      assert.deepStrictEqual(decoded.data, { at: "x" })
    })
  )
})
