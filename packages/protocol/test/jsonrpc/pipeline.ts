/**
 * What the engine does with one received frame, reduced to the errors it
 * would answer with: decode, then (for requests and notifications) the MCP
 * checks. Each outcome is the exact error class, its code, and the id the
 * error response would carry.
 */
import * as IncomingValidator from "@effect-mcp/protocol/IncomingValidator"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import type * as Revision from "@effect-mcp/protocol/Revision"
import * as Result from "effect/Result"

export interface Rejected {
  /** The `_tag` of the McpError class answered with. */
  readonly tag: string
  readonly code: number
  readonly id: JsonRpc.RequestId | null
  /** For codec failures: the DecodeFailure reason. */
  readonly reason?: string
  /** For a malformed response: the id of the request it meant to answer (nothing is answered). */
  readonly responseId?: JsonRpc.RequestId
}

export type Outcome = "ok" | Rejected

export interface Frame {
  readonly text?: string
  readonly bytes?: Uint8Array
  readonly maxBytes?: number
}

const fromDecodeFailure = (failure: JsonRpcCodec.DecodeFailure): Rejected => ({
  tag: failure.error._tag,
  code: failure.code,
  id: failure.id,
  reason: failure.reason,
  ...(failure.responseId === undefined ? {} : { responseId: failure.responseId })
})

const check = (validator: IncomingValidator.IncomingValidator, message: JsonRpc.Message, inBatch: boolean): Outcome => {
  if (JsonRpc.isResponse(message)) return "ok"
  const validated = validator.validate(message, { inBatch })
  if (Result.isSuccess(validated)) return "ok"
  const error = validated.failure
  return { tag: error._tag, code: error.code, id: JsonRpc.isRequest(message) ? message.id : null }
}

/** A single frame gives one outcome; a batch gives one per entry (or one, when batches are refused). */
export const run = (frame: Frame, revision: Revision.RevisionSpec): Outcome | ReadonlyArray<Outcome> => {
  const options = { maxBytes: frame.maxBytes }
  const decoded =
    frame.bytes !== undefined
      ? JsonRpcCodec.decodeBytes(frame.bytes, options)
      : JsonRpcCodec.decode(frame.text ?? "", options)
  if (Result.isFailure(decoded)) return fromDecodeFailure(decoded.failure)
  const validator = IncomingValidator.make(revision, { receiver: "server" })
  const value = decoded.success
  if (!JsonRpcCodec.isBatch(value)) return check(validator, value, false)
  const allowed = validator.validateBatch(value)
  if (Result.isFailure(allowed)) return { tag: allowed.failure._tag, code: allowed.failure.code, id: null }
  return value.map((entry) =>
    JsonRpcCodec.isDecodeFailure(entry) ? fromDecodeFailure(entry) : check(validator, entry, true)
  )
}
