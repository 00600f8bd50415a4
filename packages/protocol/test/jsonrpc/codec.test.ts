import { assert, describe, it } from "@effect/vitest"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as fc from "fast-check"

const decodeOk = (text: string): JsonRpcCodec.Decoded => {
  const result = JsonRpcCodec.decode(text)
  if (Result.isFailure(result)) throw new Error(`expected ${text} to decode: ${result.failure.message}`)
  return result.success
}

const failureOf = (result: Result.Result<JsonRpcCodec.Decoded, JsonRpcCodec.DecodeFailure>) => {
  if (Result.isSuccess(result)) throw new Error("expected a failure")
  return result.failure
}

// ---------------------------------------------------------------------------
// Generators: messages whose payloads are JSON values, with strings drawn from
// all of Unicode (line and paragraph separators, lone surrogates included).
// ---------------------------------------------------------------------------

const unicode = fc.string({ unit: "binary" })
// -0 has no JSON spelling (it is written as 0), so values are taken as JSON would carry them.
const json = fc
  .jsonValue({ stringUnit: "binary", maxDepth: 4 })
  .map((v) => JSON.parse(JSON.stringify(v)) as fc.JsonValue)
const id: fc.Arbitrary<JsonRpc.RequestId> = fc.oneof(unicode, fc.maxSafeInteger(), fc.integer())
const params: fc.Arbitrary<JsonRpc.Params> = fc.oneof(
  fc.dictionary(unicode, json, { maxKeys: 5, noNullPrototype: true }),
  fc.array(json, { maxLength: 5 })
)
const errorObject: fc.Arbitrary<JsonRpc.ErrorObject> = fc.oneof(
  fc.record({ code: fc.maxSafeInteger(), message: unicode }),
  fc.record({ code: fc.integer(), message: unicode, data: json })
)
const message: fc.Arbitrary<JsonRpc.Message> = fc.oneof(
  fc.tuple(id, unicode, fc.option(params, { nil: undefined })).map(([i, m, p]) => JsonRpc.request(i, m, p)),
  fc.tuple(unicode, fc.option(params, { nil: undefined })).map(([m, p]) => JsonRpc.notification(m, p)),
  fc.tuple(id, json).map(([i, r]) => JsonRpc.success(i, r)),
  fc.tuple(fc.option(id, { nil: null }), errorObject).map(([i, e]) => JsonRpc.failure(i, e))
)
const frame: fc.Arbitrary<JsonRpc.Message | JsonRpc.Batch> = fc.oneof(
  message,
  fc.array(message, { minLength: 1, maxLength: 4 })
)

describe("JsonRpcCodec round trip", () => {
  it.effect("decode(encode(m)) equals m, and encode never emits a line break", () =>
    Effect.sync(() =>
      fc.assert(
        fc.property(frame, (m) => {
          const text = JsonRpcCodec.encode(m)
          assert.notMatch(text, /[\n\r\u2028\u2029]/)
          assert.deepStrictEqual(decodeOk(text), m)
        }),
        { numRuns: 500 }
      )
    )
  )

  it.effect("encodeLine is encode plus exactly one trailing newline", () =>
    Effect.sync(() =>
      fc.assert(
        fc.property(frame, (m) => {
          const line = JsonRpcCodec.encodeLine(m)
          assert.strictEqual(line, `${JsonRpcCodec.encode(m)}\n`)
          assert.strictEqual(line.indexOf("\n"), line.length - 1)
        })
      )
    )
  )

  it.effect("decodeBytes agrees with decode on the UTF-8 encoding", () =>
    Effect.sync(() =>
      fc.assert(
        fc.property(frame, (m) => {
          const encoded = new TextEncoder().encode(JsonRpcCodec.encode(m))
          assert.deepStrictEqual(JsonRpcCodec.decodeBytes(encoded), JsonRpcCodec.decode(JsonRpcCodec.encode(m)))
        }),
        { numRuns: 200 }
      )
    )
  )
})

describe("JsonRpcCodec.encode", () => {
  it.effect("escapes U+2028 and U+2029 and the result still decodes to them", () =>
    Effect.sync(() => {
      const m = JsonRpc.notification("log", { text: "a\u2028b\u2029c\nd\re" })
      const text = JsonRpcCodec.encode(m)
      assert.include(text, "a\\u2028b\\u2029c\\nd\\re")
      assert.deepStrictEqual(decodeOk(text), m)
    })
  )

  it.effect("leaves an absent params out rather than writing undefined", () =>
    Effect.sync(() => {
      assert.strictEqual(JsonRpcCodec.encode(JsonRpc.request(1, "ping")), '{"jsonrpc":"2.0","id":1,"method":"ping"}')
      assert.strictEqual(JsonRpcCodec.encode(JsonRpc.notification("n")), '{"jsonrpc":"2.0","method":"n"}')
    })
  )

  it.effect("encodeResult reports values JSON cannot hold instead of throwing", () =>
    Effect.sync(() => {
      const cyclic: { self?: unknown } = {}
      cyclic.self = cyclic
      for (const result of [{ n: 1n }, cyclic]) {
        const encoded = JsonRpcCodec.encodeResult(JsonRpc.success(1, result))
        assert.isTrue(Result.isFailure(encoded))
        if (Result.isFailure(encoded)) assert.strictEqual(encoded.failure._tag, "JsonRpcEncodeError")
      }
      assert.deepStrictEqual(
        JsonRpcCodec.encodeResult(JsonRpc.success(1, {})),
        Result.succeed('{"jsonrpc":"2.0","id":1,"result":{}}')
      )
    })
  )
})

describe("JsonRpcCodec.decode", () => {
  it.effect("returns the parsed object itself, classified", () =>
    Effect.sync(() => {
      const decoded = decodeOk('{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"},"extra":1}')
      assert.isFalse(JsonRpcCodec.isBatch(decoded))
      if (JsonRpcCodec.isBatch(decoded)) return
      assert.isTrue(JsonRpc.isRequest(decoded))
      // Unknown members are kept: nothing is copied or stripped.
      assert.deepStrictEqual(decoded as unknown, {
        jsonrpc: "2.0",
        id: "a",
        method: "tools/call",
        params: { name: "x" },
        extra: 1
      })
    })
  )

  it.effect("classifies each message kind", () =>
    Effect.sync(() => {
      const kinds = (text: string) => {
        const m = decodeOk(text) as JsonRpc.Message
        return [
          JsonRpc.isRequest(m),
          JsonRpc.isNotification(m),
          JsonRpc.isResponse(m),
          JsonRpc.isSuccess(m),
          JsonRpc.isFailure(m)
        ]
      }
      assert.deepStrictEqual(kinds('{"jsonrpc":"2.0","id":0,"method":"m"}'), [true, false, false, false, false])
      assert.deepStrictEqual(kinds('{"jsonrpc":"2.0","method":"m","params":[1]}'), [false, true, false, false, false])
      assert.deepStrictEqual(kinds('{"jsonrpc":"2.0","id":-1,"result":null}'), [false, false, true, true, false])
      assert.deepStrictEqual(kinds('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m","data":[1]}}'), [
        false,
        false,
        true,
        false,
        true
      ])
    })
  )

  it.effect("gives an error response without id the id null", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(decodeOk('{"jsonrpc":"2.0","error":{"code":-32603,"message":"m"}}'), {
        jsonrpc: "2.0",
        error: { code: -32603, message: "m" },
        id: null
      })
    })
  )

  it.effect("ignores one leading byte-order mark, in text and in bytes", () =>
    Effect.sync(() => {
      const expected = JsonRpc.request(1, "ping")
      assert.deepStrictEqual(decodeOk('\uFEFF{"jsonrpc":"2.0","id":1,"method":"ping"}'), expected)
      const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(JsonRpcCodec.encode(expected))])
      assert.deepStrictEqual(JsonRpcCodec.decodeBytes(bytes), Result.succeed(expected))
    })
  )

  it.effect("accepts a duplicate key, keeping the last value as JSON.parse does", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(
        decodeOk('{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"method":"ping"}'),
        JsonRpc.request(1, "ping")
      )
    })
  )

  it.effect("accepts deep nesting inside params", () =>
    Effect.sync(() => {
      const depth = 10_000
      const decoded = decodeOk(`{"jsonrpc":"2.0","method":"m","params":{"a":${"[".repeat(depth)}${"]".repeat(depth)}}}`)
      assert.isTrue(JsonRpc.isNotification(decoded as JsonRpc.Message))
    })
  )

  it.effect("measures maxBytes in UTF-8 bytes, inclusive", () =>
    Effect.sync(() => {
      const text = JsonRpcCodec.encode(JsonRpc.notification("é😀"))
      const size = new TextEncoder().encode(text).length
      assert.isTrue(Result.isSuccess(JsonRpcCodec.decode(text, { maxBytes: size })))
      assert.strictEqual(failureOf(JsonRpcCodec.decode(text, { maxBytes: size - 1 })).reason, "FrameTooLarge")
      const bytes = new TextEncoder().encode(text)
      assert.isTrue(Result.isSuccess(JsonRpcCodec.decodeBytes(bytes, { maxBytes: size })))
      assert.strictEqual(failureOf(JsonRpcCodec.decodeBytes(bytes, { maxBytes: size - 1 })).reason, "FrameTooLarge")
    })
  )

  it.effect("a batch keeps valid entries as they are and answers each invalid one", () =>
    Effect.sync(() => {
      const decoded = decodeOk('[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":false}]')
      assert.isTrue(JsonRpcCodec.isBatch(decoded))
      if (!JsonRpcCodec.isBatch(decoded)) return
      assert.deepStrictEqual(decoded[0], JsonRpc.request(1, "a"))
      const entry = decoded[1]
      assert.isTrue(JsonRpcCodec.isDecodeFailure(entry))
      if (!JsonRpcCodec.isDecodeFailure(entry)) return
      assert.deepStrictEqual(entry.toResponse(), {
        jsonrpc: "2.0",
        id: 2,
        error: { code: McpError.Code.InvalidRequest, message: "Invalid Request: method must be a string" }
      })
    })
  )

  it.effect("a message object carrying a _tag member is still a message, not a failure", () =>
    Effect.sync(() => {
      const decoded = decodeOk('[{"jsonrpc":"2.0","method":"m","_tag":"JsonRpcDecodeFailure"}]')
      if (!JsonRpcCodec.isBatch(decoded)) return assert.fail("expected a batch")
      assert.isFalse(JsonRpcCodec.isDecodeFailure(decoded[0]))
    })
  )

  it.effect("decodeUnknown classifies values parsed elsewhere", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(JsonRpcCodec.decodeUnknown(JsonRpc.success(1, {})), Result.succeed(JsonRpc.success(1, {})))
      assert.strictEqual(failureOf(JsonRpcCodec.decodeUnknown(undefined)).error._tag, "InvalidRequest")
      // A frozen error response without id cannot be given one, so it is refused rather than typed wrongly.
      const frozen = Object.freeze({ jsonrpc: "2.0", error: { code: 1, message: "m" } })
      assert.strictEqual(failureOf(JsonRpcCodec.decodeUnknown(frozen)).error._tag, "InvalidRequest")
    })
  )
})
