/**
 * The malformed-input table: every frame a peer could get wrong, with the
 * exact error class, JSON-RPC code and id the answer must carry.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import { withBatches, withoutBatches } from "./fixture.ts"
import { type Frame, type Outcome, type Rejected, run } from "./pipeline.ts"

const parseError: Rejected = { tag: "ParseError", code: -32700, id: null, reason: "ParseError" }
const invalid = (id: JsonRpc.RequestId | null = null): Rejected => ({
  tag: "InvalidRequest",
  code: -32600,
  id,
  reason: "InvalidRequest"
})
/** A malformed response: never answered; the request it meant to answer fails instead. */
const badResponse = (responseId: JsonRpc.RequestId): Rejected => ({ ...invalid(), responseId })
const tooLarge: Rejected = { tag: "InvalidRequest", code: -32600, id: null, reason: "FrameTooLarge" }
/** InvalidRequest raised by the MCP checks (not the codec), so without a codec reason. */
const refused = (id: JsonRpc.RequestId | null): Rejected => ({ tag: "InvalidRequest", code: -32600, id })
const methodNotFound = (id: JsonRpc.RequestId | null): Rejected => ({ tag: "MethodNotFound", code: -32601, id })
const invalidParams = (id: JsonRpc.RequestId | null): Rejected => ({ tag: "InvalidParams", code: -32602, id })

const encoder = new TextEncoder()
const bytes = (...parts: ReadonlyArray<string | ReadonlyArray<number>>): Uint8Array => {
  const pieces = parts.map((part) => (typeof part === "string" ? encoder.encode(part) : Uint8Array.from(part)))
  const out = new Uint8Array(pieces.reduce((n, piece) => n + piece.length, 0))
  let offset = 0
  for (const piece of pieces) {
    out.set(piece, offset)
    offset += piece.length
  }
  return out
}

const ping = (id: JsonRpc.RequestId) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"ping"}`
const deep = (depth: number) => "[".repeat(depth) + "]".repeat(depth)

interface Case {
  readonly name: string
  readonly frame: Frame
  readonly expected: Outcome | ReadonlyArray<Outcome>
  /** Defaults to a revision without batches. */
  readonly batches?: boolean
}

const text = (value: string): Frame => ({ text: value })

const cases: ReadonlyArray<Case> = [
  // -- not JSON: ParseError, id null ---------------------------------------
  { name: "truncated JSON", frame: text('{"jsonrpc":"2.0","id":1,"method":"ping"'), expected: parseError },
  { name: "empty string", frame: text(""), expected: parseError },
  { name: "whitespace only", frame: text(" \t \r "), expected: parseError },
  { name: "trailing garbage after JSON", frame: text(`${ping(1)} x`), expected: parseError },
  { name: "two JSON values in one frame", frame: text(`${ping(1)}${ping(2)}`), expected: parseError },
  { name: "NaN token", frame: text('{"jsonrpc":"2.0","id":NaN,"method":"ping"}'), expected: parseError },
  { name: "Infinity token", frame: text('{"jsonrpc":"2.0","id":-Infinity,"method":"ping"}'), expected: parseError },
  { name: "single-quoted strings", frame: text("{'jsonrpc':'2.0','method':'ping'}"), expected: parseError },
  { name: "trailing comma", frame: text('{"jsonrpc":"2.0","method":"ping",}'), expected: parseError },
  {
    name: "raw control character in a string",
    frame: text('{"jsonrpc":"2.0","method":"pi\u0001ng"}'),
    expected: parseError
  },
  { name: "two byte-order marks", frame: text(`\uFEFF\uFEFF${ping(1)}`), expected: parseError },
  {
    name: "byte-order mark inside the JSON",
    frame: text('{"jsonrpc":"2.0",\uFEFF"method":"ping"}'),
    expected: parseError
  },
  {
    name: "invalid UTF-8 byte",
    frame: { bytes: bytes('{"jsonrpc":"2.0","method":"', [0xff], '"}') },
    expected: parseError
  },
  { name: "lone UTF-8 continuation byte", frame: { bytes: bytes('{"method":"', [0x80], '"}') }, expected: parseError },
  { name: "overlong UTF-8 encoding", frame: { bytes: bytes('{"method":"', [0xc0, 0xaf], '"}') }, expected: parseError },
  { name: "UTF-8 sequence cut at the end", frame: { bytes: bytes(ping(1), [0xe2, 0x82]) }, expected: parseError },
  {
    name: "UTF-16 surrogate encoded in UTF-8",
    frame: { bytes: bytes('{"m":"', [0xed, 0xa0, 0x80], '"}') },
    expected: parseError
  },

  // -- JSON, but not a JSON-RPC message: InvalidRequest ----------------------
  { name: "JSON string at top level", frame: text('"ping"'), expected: invalid() },
  { name: "JSON number at top level", frame: text("42"), expected: invalid() },
  { name: "JSON null at top level", frame: text("null"), expected: invalid() },
  { name: "JSON boolean at top level", frame: text("true"), expected: invalid() },
  { name: "empty object", frame: text("{}"), expected: invalid() },
  { name: "missing jsonrpc", frame: text('{"id":1,"method":"ping"}'), expected: invalid(1) },
  { name: "jsonrpc 1.0", frame: text('{"jsonrpc":"1.0","id":"a","method":"ping"}'), expected: invalid("a") },
  { name: "jsonrpc as a number", frame: text('{"jsonrpc":2.0,"id":3,"method":"ping"}'), expected: invalid(3) },
  { name: "null id on a request", frame: text('{"jsonrpc":"2.0","id":null,"method":"ping"}'), expected: invalid() },
  { name: "object id", frame: text('{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}'), expected: invalid() },
  { name: "array id", frame: text('{"jsonrpc":"2.0","id":[1],"method":"ping"}'), expected: invalid() },
  { name: "boolean id", frame: text('{"jsonrpc":"2.0","id":true,"method":"ping"}'), expected: invalid() },
  { name: "float id", frame: text('{"jsonrpc":"2.0","id":1.5,"method":"ping"}'), expected: invalid() },
  {
    name: "integer id beyond MAX_SAFE_INTEGER",
    frame: text('{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}'),
    expected: invalid()
  },
  {
    name: "id overflowing to Infinity",
    frame: text('{"jsonrpc":"2.0","id":1e400,"method":"ping"}'),
    expected: invalid()
  },
  { name: "missing method (no id)", frame: text('{"jsonrpc":"2.0","params":{}}'), expected: invalid() },
  { name: "numeric method", frame: text('{"jsonrpc":"2.0","id":8,"method":42}'), expected: invalid(8) },
  { name: "null method", frame: text('{"jsonrpc":"2.0","id":"m","method":null}'), expected: invalid("m") },
  {
    name: "params as a string",
    frame: text('{"jsonrpc":"2.0","id":9,"method":"ping","params":"x"}'),
    expected: invalid(9)
  },
  {
    name: "params null",
    frame: text('{"jsonrpc":"2.0","id":10,"method":"ping","params":null}'),
    expected: invalid(10)
  },
  {
    name: "params a number on a notification",
    frame: text('{"jsonrpc":"2.0","method":"x","params":1}'),
    expected: invalid()
  },
  {
    name: "result and error together",
    frame: text('{"jsonrpc":"2.0","id":11,"result":{},"error":{"code":-1,"message":"m"}}'),
    expected: badResponse(11)
  },
  { name: "neither result nor error", frame: text('{"jsonrpc":"2.0","id":12}'), expected: invalid(12) },
  {
    name: "error without code",
    frame: text('{"jsonrpc":"2.0","id":13,"error":{"message":"m"}}'),
    expected: badResponse(13)
  },
  {
    name: "non-integer error code",
    frame: text('{"jsonrpc":"2.0","id":14,"error":{"code":1.5,"message":"m"}}'),
    expected: badResponse(14)
  },
  {
    name: "error code as a string",
    frame: text('{"jsonrpc":"2.0","id":15,"error":{"code":"-32600","message":"m"}}'),
    expected: badResponse(15)
  },
  {
    name: "error code beyond MAX_SAFE_INTEGER",
    frame: text('{"jsonrpc":"2.0","id":16,"error":{"code":-9007199254740993,"message":"m"}}'),
    expected: badResponse(16)
  },
  {
    name: "error without message",
    frame: text('{"jsonrpc":"2.0","id":17,"error":{"code":-1}}'),
    expected: badResponse(17)
  },
  { name: "error as a string", frame: text('{"jsonrpc":"2.0","id":18,"error":"boom"}'), expected: badResponse(18) },
  { name: "error null", frame: text('{"jsonrpc":"2.0","id":19,"error":null}'), expected: badResponse(19) },
  {
    name: "success response with null id",
    frame: text('{"jsonrpc":"2.0","id":null,"result":{}}'),
    expected: invalid()
  },
  {
    name: "success response with float id",
    frame: text('{"jsonrpc":"2.0","id":2.5,"result":{}}'),
    expected: invalid()
  },
  {
    name: "error response with object id",
    frame: text('{"jsonrpc":"2.0","id":{},"error":{"code":-1,"message":"m"}}'),
    expected: invalid()
  },
  {
    name: "duplicate keys: the last one wins (null id)",
    frame: text('{"jsonrpc":"2.0","id":1,"id":null,"method":"ping"}'),
    expected: invalid()
  },
  {
    name: "deeply nested array (a batch of one nested array)",
    frame: text(deep(10_000)),
    expected: [invalid()],
    batches: true
  },

  // -- size limit ------------------------------------------------------------
  // The id is recovered from the frame's first bytes, so the request is answered under it.
  { name: "oversized text frame", frame: { text: ping(1), maxBytes: 10 }, expected: { ...tooLarge, id: 1 } },
  { name: "oversized byte frame", frame: { bytes: bytes(ping(1)), maxBytes: 10 }, expected: { ...tooLarge, id: 1 } },
  {
    name: "text within the limit in characters but not in UTF-8 bytes",
    frame: { text: `{"jsonrpc":"2.0","method":"${"é".repeat(40)}"}`, maxBytes: 80 },
    expected: tooLarge
  },

  // -- batches ---------------------------------------------------------------
  { name: "empty batch", frame: text("[]"), expected: invalid(), batches: true },
  { name: "batch of garbage", frame: text('[1,"x",null]'), expected: [invalid(), invalid(), invalid()], batches: true },
  {
    name: "batch mixing valid and invalid entries",
    frame: text(
      `[${ping(1)},{"jsonrpc":"2.0","id":2,"method":5},7,{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":3,"method":"nope"}]`
    ),
    expected: ["ok", invalid(2), invalid(), "ok", methodNotFound(3)],
    batches: true
  },
  {
    name: "batch containing initialize",
    frame: text(
      `[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}},${ping(2)}]`
    ),
    expected: [refused(1), "ok"],
    batches: true
  },
  { name: "batch nested in a batch", frame: text(`[[${ping(1)}]]`), expected: [invalid()], batches: true },
  { name: "batch on a revision without batches", frame: text(`[${ping(1)},${ping(2)}]`), expected: refused(null) },

  // -- MCP checks --------------------------------------------------------------
  {
    name: "unknown method",
    frame: text('{"jsonrpc":"2.0","id":20,"method":"tools/destroy"}'),
    expected: methodNotFound(20)
  },
  {
    name: "method only the server sends, arriving at the server",
    frame: text('{"jsonrpc":"2.0","id":21,"method":"sampling/createMessage","params":{}}'),
    expected: methodNotFound(21)
  },
  {
    name: "notification method sent as a request",
    frame: text('{"jsonrpc":"2.0","id":22,"method":"notifications/initialized"}'),
    expected: methodNotFound(22)
  },
  {
    name: "request method sent as a notification",
    frame: text('{"jsonrpc":"2.0","method":"tools/list"}'),
    expected: methodNotFound(null)
  },
  {
    name: "params as an array where an object is required",
    frame: text('{"jsonrpc":"2.0","id":23,"method":"tools/call","params":["echo"]}'),
    expected: invalidParams(23)
  },
  {
    name: "params as an array on a method with optional params",
    frame: text('{"jsonrpc":"2.0","id":24,"method":"ping","params":[]}'),
    expected: invalidParams(24)
  },
  {
    name: "required params missing",
    frame: text('{"jsonrpc":"2.0","id":25,"method":"tools/call"}'),
    expected: invalidParams(25)
  },
  {
    name: "params failing the method's schema",
    frame: text('{"jsonrpc":"2.0","id":26,"method":"tools/call","params":{"name":5}}'),
    expected: invalidParams(26)
  },
  {
    name: "notification params failing the schema",
    frame: text('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1}}'),
    expected: invalidParams(null)
  }
]

describe("malformed input", () => {
  it.effect("the table covers at least 40 cases", () => Effect.sync(() => assert.isAtLeast(cases.length, 40)))

  for (const c of cases) {
    it.effect(c.name, () =>
      Effect.sync(() => {
        const revision = c.batches === true ? withBatches : withoutBatches
        assert.deepStrictEqual(run(c.frame, revision), c.expected)
      })
    )
  }
})
