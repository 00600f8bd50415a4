/**
 * The codec classifies frames by hand; JsonRpc exports Schemas for the same
 * shapes. Both must accept and reject exactly the same values, and read the
 * members of an accepted one the same way.
 */
import { assert, describe, it } from "@effect/vitest"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"

const decodeMessage = Schema.decodeUnknownResult(JsonRpc.Message)
const decodeBatch = Schema.decodeUnknownResult(JsonRpc.Batch)

/**
 * The Schema strips members its shape does not name; the codec keeps the
 * parsed object whole. So every member of the Schema's result must equal the
 * codec's member of the same name.
 */
const assertSameShape = (bySchema: unknown, byCodec: unknown, text: string): void => {
  if (Array.isArray(bySchema) && Array.isArray(byCodec)) {
    assert.strictEqual(bySchema.length, byCodec.length, text)
    for (let i = 0; i < bySchema.length; i++) assertSameShape(bySchema[i], byCodec[i], text)
    return
  }
  const codecMembers = byCodec as Record<string, unknown>
  for (const [key, value] of Object.entries(bySchema as Record<string, unknown>)) {
    assert.deepStrictEqual(value, codecMembers[key], `${key} of ${text}`)
  }
}

/** Compares both verdicts on one wire text; each side parses its own copy, since the codec adopts (and may fill in) the object. */
const agree = (text: string): void => {
  const bySchema: Result.Result<unknown, Schema.SchemaError> = Array.isArray(JSON.parse(text))
    ? decodeBatch(JSON.parse(text))
    : decodeMessage(JSON.parse(text))
  const byCodec = JsonRpcCodec.decodeUnknown(JSON.parse(text))
  const codecAccepts =
    Result.isSuccess(byCodec) &&
    (!JsonRpcCodec.isBatch(byCodec.success) || !byCodec.success.some(JsonRpcCodec.isDecodeFailure))
  assert.strictEqual(codecAccepts, Result.isSuccess(bySchema), `verdicts differ on ${text}`)
  if (Result.isSuccess(byCodec) && Result.isSuccess(bySchema)) assertSameShape(bySchema.success, byCodec.success, text)
}

const corpus: ReadonlyArray<string> = [
  // valid
  '{"jsonrpc":"2.0","id":1,"method":"ping"}',
  '{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"a"}}',
  '{"jsonrpc":"2.0","id":-7,"method":"m","params":[1,2]}',
  '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  '{"jsonrpc":"2.0","method":"n","params":{}}',
  '{"jsonrpc":"2.0","id":1,"result":{}}',
  '{"jsonrpc":"2.0","id":"r","result":null}',
  '{"jsonrpc":"2.0","id":1,"result":[1]}',
  '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"m"}}',
  '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m","data":{"a":1}}}',
  '{"jsonrpc":"2.0","error":{"code":-32603,"message":"m"}}',
  '{"jsonrpc":"2.0","id":1,"method":"m","extra":true}',
  '{"jsonrpc":"2.0","id":1,"method":"m","result":1}',
  '[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]',
  '[{"jsonrpc":"2.0","id":1,"result":{}}]',
  // invalid
  "{}",
  "null",
  "1",
  '"x"',
  "[]",
  "[1]",
  '[{"jsonrpc":"2.0","id":1,"method":"a"},2]',
  '{"id":1,"method":"ping"}',
  '{"jsonrpc":"1.0","id":1,"method":"ping"}',
  '{"jsonrpc":"2.0","id":null,"method":"ping"}',
  '{"jsonrpc":"2.0","id":{},"method":"ping"}',
  '{"jsonrpc":"2.0","id":[],"method":"ping"}',
  '{"jsonrpc":"2.0","id":false,"method":"ping"}',
  '{"jsonrpc":"2.0","id":0.5,"method":"ping"}',
  '{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}',
  '{"jsonrpc":"2.0","id":1,"method":1}',
  '{"jsonrpc":"2.0","id":1,"method":"m","params":"p"}',
  '{"jsonrpc":"2.0","id":1,"method":"m","params":null}',
  '{"jsonrpc":"2.0","id":1}',
  '{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}',
  '{"jsonrpc":"2.0","id":1,"error":{"message":"m"}}',
  '{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}',
  '{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"m"}}',
  '{"jsonrpc":"2.0","id":1,"error":{"code":1}}',
  '{"jsonrpc":"2.0","id":1,"error":null}',
  '{"jsonrpc":"2.0","id":1,"error":[]}',
  '{"jsonrpc":"2.0","id":null,"result":1}',
  '{"jsonrpc":"2.0","result":1}',
  '{"jsonrpc":"2.0","id":1.5,"error":{"code":1,"message":"m"}}'
]

// Envelope-shaped objects: every member may be missing, right, or wrong in a
// way the classifier distinguishes.
const member = <A>(...values: ReadonlyArray<fc.Arbitrary<A>>) => fc.oneof(...values)
const envelope = fc.record(
  {
    jsonrpc: fc.constantFrom<unknown>("2.0", "1.0", 2, null),
    id: member<unknown>(
      fc.string(),
      fc.integer(),
      fc.constantFrom(0.5, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, null, true),
      fc.constant({}),
      fc.constant([1])
    ),
    method: member<unknown>(fc.string(), fc.constantFrom(1, null, false)),
    params: member<unknown>(
      fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3, noNullPrototype: true }),
      fc.array(fc.integer(), { maxLength: 3 }),
      fc.constantFrom("p", 1, null)
    ),
    result: fc.jsonValue({ maxDepth: 2 }),
    error: member<unknown>(
      fc.record(
        {
          code: member<unknown>(fc.integer(), fc.constantFrom(1.5, "1", Number.MAX_SAFE_INTEGER + 2)),
          message: member<unknown>(fc.string(), fc.constant(1)),
          data: fc.jsonValue({ maxDepth: 1 })
        },
        { requiredKeys: [] }
      ),
      fc.constantFrom(null, "e", [])
    ),
    extra: fc.jsonValue({ maxDepth: 1 })
  },
  { requiredKeys: [] }
)

describe("classifier and Schemas agree", () => {
  it.effect("on the corpus", () =>
    Effect.sync(() => {
      for (const text of corpus) agree(text)
    })
  )

  it.effect("on generated envelopes", () =>
    Effect.sync(() =>
      fc.assert(
        fc.property(envelope, (value) => agree(JSON.stringify(value))),
        { numRuns: 2000 }
      )
    )
  )

  it.effect("on generated batches", () =>
    Effect.sync(() =>
      fc.assert(
        fc.property(fc.array(envelope, { maxLength: 3 }), (values) => agree(JSON.stringify(values))),
        { numRuns: 500 }
      )
    )
  )
})
