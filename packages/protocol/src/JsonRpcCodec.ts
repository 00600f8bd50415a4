/**
 * Text <-> JSON-RPC frames. One `JSON.parse` per frame, then a hand-written
 * classifier over the parsed value (no Schema decode of the envelope); every
 * function is synchronous, returns a `Result` and lets no exception escape.
 *
 * Failures carry the JSON-RPC error to answer with and the id to answer to:
 * - invalid JSON, invalid UTF-8 -> `ParseError` (-32700), id `null`
 * - JSON that is not a JSON-RPC message -> `InvalidRequest` (-32600), with the
 *   message's `id` when that is a valid request id, else `null`
 * - an empty batch `[]` -> `InvalidRequest`, id `null`
 * - a malformed response (`result` or `error`, no `method`) -> `InvalidRequest`
 *   with `responseId` (its id, when valid) and id `null`: a response is never
 *   answered, and its id names a request of the receiver's, not the sender's;
 *   the receiver fails that request instead
 * - a frame over `maxBytes` -> reason `FrameTooLarge`, answered as
 *   `InvalidRequest` (-32600) with id `null` since the frame is never parsed;
 *   HTTP transports map this reason to status 413 instead.
 *
 * A batch decodes to an array of entries, each a message or a `DecodeFailure`
 * of its own, so every invalid entry gets its own error response (JSON-RPC 2.0 section 6).
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { invalidReason, recoverId } from "./internal/jsonRpcClassify.ts"
import { lenientUtf8Decoder, utf8Decoder } from "./internal/jsonRpcUtf8.ts"
import * as JsonRpc from "./JsonRpc.ts"
import * as McpError from "./McpError.ts"

// ---------------------------------------------------------------------------
// Failures
// ---------------------------------------------------------------------------

/**
 * Why a frame (or one batch entry) could not be decoded. `reason` is what to
 * match on; `error` is what to send back, to `id`.
 */
export class DecodeFailure extends Schema.TaggedError<DecodeFailure>()("JsonRpcDecodeFailure", {
  reason: Schema.Literals(["ParseError", "InvalidRequest", "FrameTooLarge"]),
  error: Schema.Union([McpError.ParseError, McpError.InvalidRequest]),
  id: Schema.NullOr(JsonRpc.RequestId),
  /**
   * A malformed response, or an over-long frame that was one by its first
   * bytes: the id of the request it answered, whose caller fails at once
   * (nothing is sent back).
   */
  responseId: Schema.optional(JsonRpc.RequestId)
}) {
  override get message(): string {
    return this.error.message
  }

  /** The JSON-RPC code to answer with. */
  get code(): number {
    return this.error.code
  }

  /** The error response answering the offending frame or entry. */
  toResponse(): JsonRpc.ErrorResponse {
    return JsonRpc.failure(this.id, McpError.toErrorObject(this.error))
  }
}

/** Whether a decoded entry is a frame or batch entry that could not be decoded. */
export const isDecodeFailure = (u: unknown): u is DecodeFailure => u instanceof DecodeFailure

const parseError = (message: string): DecodeFailure =>
  new DecodeFailure({ reason: "ParseError", error: new McpError.ParseError({ message }), id: null })

const invalidRequest = (detail: string, id: JsonRpc.RequestId | null): DecodeFailure =>
  new DecodeFailure({
    reason: "InvalidRequest",
    error: new McpError.InvalidRequest({ message: `Invalid Request: ${detail}` }),
    id
  })

/**
 * The failure for a value that is no JSON-RPC message: a response's (it has
 * `result` or `error` and no `method`) names the request it meant to answer.
 */
const invalidMessage = (detail: string, value: unknown): DecodeFailure => {
  const id = recoverId(value)
  if (id === null || !isResponseShaped(value)) return invalidRequest(detail, id)
  return new DecodeFailure({
    reason: "InvalidRequest",
    error: new McpError.InvalidRequest({ message: `Invalid Request: ${detail}` }),
    id: null,
    responseId: id
  })
}

const isResponseShaped = (value: unknown): boolean => {
  const message = value as { readonly method?: unknown; readonly result?: unknown; readonly error?: unknown }
  return message.method === undefined && (message.result !== undefined || message.error !== undefined)
}

/** The failure for a frame longer than `limit` bytes. */
export const frameTooLarge = (limit: number, head?: string): DecodeFailure => {
  const error = new McpError.InvalidRequest({
    message: `Invalid Request: frame exceeds ${limit} bytes`,
    data: { limit }
  })
  const top = head === undefined ? undefined : topLevelOf(head)
  if (top?.id === undefined) return new DecodeFailure({ reason: "FrameTooLarge", error, id: null })
  // A request is answered with the error; a response fails the request it answered.
  return top.response
    ? new DecodeFailure({ reason: "FrameTooLarge", error, id: null, responseId: top.id })
    : new DecodeFailure({ reason: "FrameTooLarge", error, id: top.id })
}

/**
 * The top-level `id` of a JSON object's first bytes, and whether its keys
 * seen so far make it a response (`result`/`error`, no `method`). Nested
 * values are skipped; an id cut off by the end of `head` is not reported.
 */
const topLevelOf = (head: string): { readonly id: JsonRpc.RequestId | undefined; readonly response: boolean } => {
  let depth = 0
  let id: JsonRpc.RequestId | undefined
  let result = false
  let method = false
  let i = 0
  const n = head.length
  const stringEnd = (from: number): number => {
    for (let k = from + 1; k < n; k++) {
      const c = head.charCodeAt(k)
      if (c === 0x5c) k++
      else if (c === 0x22) return k
    }
    return -1
  }
  while (i < n) {
    const c = head[i]!
    if (c === "{" || c === "[") depth++
    else if (c === "}" || c === "]") depth--
    else if (c === '"') {
      const end = stringEnd(i)
      if (end === -1) break
      if (depth === 1) {
        let k = end + 1
        while (k < n && /\s/.test(head[k]!)) k++
        if (head[k] === ":") {
          const key = head.slice(i + 1, end)
          if (key === "method") method = true
          else if (key === "result" || key === "error") result = true
          else if (key === "id") {
            const value = /^\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*[,}]/.exec(head.slice(k + 1))
            if (value !== null) {
              try {
                const parsed: unknown = JSON.parse(value[1]!)
                if (typeof parsed === "string" || Number.isInteger(parsed)) id = parsed as JsonRpc.RequestId
              } catch {
                // Not a usable id.
              }
            }
          }
        }
      }
      i = end
    }
    i++
  }
  return { id, response: result && !method }
}

/** The failure for bytes that are not UTF-8. */
export const invalidUtf8 = (): DecodeFailure => parseError("Parse error: invalid UTF-8")

// ---------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------

/** A received batch: each entry is a message or the failure to answer it with. Never empty. */
export type DecodedBatch = ReadonlyArray<JsonRpc.Message | DecodeFailure>

/** What decoding one frame gives: a message or a batch. */
export type Decoded = JsonRpc.Message | DecodedBatch

/** Whether a decoded frame is a batch. */
export const isBatch = (decoded: Decoded): decoded is DecodedBatch => Array.isArray(decoded)

/** Settings of decoding. */
export interface DecodeOptions {
  /** Frames longer than this many UTF-8 bytes fail with reason `FrameTooLarge` before parsing. */
  readonly maxBytes?: number | undefined
}

const BOM = 0xfeff

/**
 * Classifies an already parsed JSON value (for transports whose framework
 * parsed the body). The value is adopted, not copied.
 */
export const decodeUnknown = (value: unknown): Result.Result<Decoded, DecodeFailure> => {
  if (Array.isArray(value)) {
    if (value.length === 0) return Result.fail(invalidRequest("empty batch", null))
    const entries: Array<JsonRpc.Message | DecodeFailure> = new Array(value.length)
    for (let i = 0; i < value.length; i++) {
      const entry: unknown = value[i]
      const reason = invalidReason(entry)
      entries[i] = reason === undefined ? (entry as JsonRpc.Message) : invalidMessage(reason, entry)
    }
    return Result.succeed(entries)
  }
  const reason = invalidReason(value)
  return reason === undefined ? Result.succeed(value as JsonRpc.Message) : Result.fail(invalidMessage(reason, value))
}

/**
 * Decodes one frame of text. A single leading byte-order mark is ignored
 * (RFC 8259 section 8.1); anything else JSON.parse rejects is a ParseError.
 */
export const decode = (text: string, options?: DecodeOptions): Result.Result<Decoded, DecodeFailure> => {
  const maxBytes = options?.maxBytes
  if (maxBytes !== undefined && exceedsUtf8(text, maxBytes)) {
    return Result.fail(frameTooLarge(maxBytes, text.slice(0, 256)))
  }
  if (text.charCodeAt(0) === BOM) text = text.slice(1)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return Result.fail(parseError("Parse error: invalid JSON"))
  }
  return decodeUnknown(value)
}

/** Decodes one frame of UTF-8 bytes. */
export const decodeBytes = (bytes: Uint8Array, options?: DecodeOptions): Result.Result<Decoded, DecodeFailure> => {
  const maxBytes = options?.maxBytes
  if (maxBytes !== undefined && bytes.length > maxBytes) {
    return Result.fail(frameTooLarge(maxBytes, lenientUtf8Decoder.decode(bytes.subarray(0, 256))))
  }
  let text: string
  try {
    text = utf8Decoder.decode(bytes)
  } catch {
    return Result.fail(invalidUtf8())
  }
  return decode(text)
}

// Each UTF-16 unit is 1..3 UTF-8 bytes (a surrogate pair, two units, is 4), so
// the exact count is only needed when the length is within a factor of 3 of the limit.
const exceedsUtf8 = (text: string, limit: number): boolean => {
  const units = text.length
  if (units > limit) return true
  if (units * 3 <= limit) return false
  let bytes = 0
  for (let i = 0; i < units; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x80) bytes += 1
    else if (c < 0x800) bytes += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < units) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4
        i++
      } else bytes += 3
    } else bytes += 3
    if (bytes > limit) return true
  }
  return false
}

// ---------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------

/** A frame that cannot be written as JSON (a BigInt, a cycle, nesting deeper than the engine's stack). */
export class EncodeError extends Schema.TaggedError<EncodeError>()("JsonRpcEncodeError", {
  message: Schema.String,
  cause: Schema.Defect()
}) {}

// JSON.stringify without indentation escapes every control character, so a
// raw "\n" or "\r" never appears. U+2028/U+2029 are valid unescaped in JSON
// and JSON.stringify leaves them raw; some line readers (JavaScript source,
// Python's splitlines) treat them as line breaks, so they are escaped too.
const lineSeparators = /[\u2028\u2029]/g
const escapeSeparator = (c: string) => (c === "\u2028" ? "\\u2028" : "\\u2029")

// Searched for before replacing: most frames hold neither, and a search finds that at once in a string of
// one-byte characters, where a replace runs the regular expression over the whole text.
const stringify = (frame: JsonRpc.Message | JsonRpc.Batch): string => {
  const text = JSON.stringify(frame)
  return text.indexOf("\u2028") === -1 && text.indexOf("\u2029") === -1
    ? text
    : text.replace(lineSeparators, escapeSeparator)
}

/**
 * Encodes a message or batch as one line of JSON without its terminator.
 * Throws only when `frame` holds a value JSON cannot represent; use
 * `encodeResult` when the payload was not produced by a Schema encoder.
 */
export const encode = (frame: JsonRpc.Message | JsonRpc.Batch): string => stringify(frame)

/** `encode` plus the NDJSON line terminator. */
export const encodeLine = (frame: JsonRpc.Message | JsonRpc.Batch): string => stringify(frame) + "\n"

/** `encode`, with unrepresentable values reported instead of thrown. */
export const encodeResult = (frame: JsonRpc.Message | JsonRpc.Batch): Result.Result<string, EncodeError> => {
  try {
    return Result.succeed(stringify(frame))
  } catch (cause) {
    return Result.fail(new EncodeError({ message: "frame cannot be encoded as JSON", cause }))
  }
}
