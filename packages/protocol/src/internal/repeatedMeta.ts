/**
 * Decoding params whose `_meta` is required and repeats from request to
 * request. In the stateless revision (2026-07-28) every request carries in
 * its `_meta` what a session would otherwise hold (the protocol version, the
 * client's capabilities and information), the same on each request of a
 * client; decoding that `_meta` with its schema is most of the work of
 * validating such a request.
 *
 * So the `_meta` is decoded apart, through a small memo of the last few seen:
 * one equal to a remembered one (`JsonEquality`, within a bound) takes
 * its decoded value; the rest of the params are decoded as before. One that
 * can never change (`FrozenJson`) is remembered as it is, so the same object
 * again is equal at the comparison's first step: an in-process client sends
 * the same frozen one each time. Any other remembered `_meta` was decoded
 * from a private frozen copy, so no caller can change it afterwards. The
 * decoded value is frozen too (the params a handler gets are read-only). Whatever fails is decoded again whole, so the
 * issues reported are those of the full schema.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import type * as SchemaIssue from "effect/SchemaIssue"
import * as FrozenJson from "../FrozenJson.ts"
import * as JsonEquality from "../JsonEquality.ts"
import type { AnyCodec } from "../Revision.ts"
import * as Jit from "./jit.ts"

/** A params decoder: the decoded params, or the issue. */
export type Decoder = (input: unknown) => Result.Result<unknown, SchemaIssue.Issue>

/** The `_meta` values remembered per method, most recent first: enough for a few clients taking turns. */
const MEMO_SIZE = 4

/** Values compared, copied or frozen per `_meta`, at most: a larger one is decoded every time. */
const MAX_NODES = 256

interface Remembered {
  /**
   * The `_meta` compared against: a private frozen copy, or the `_meta` as it
   * came when it can never change (`FrozenJson.isFrozen`). An in-process
   * client sends the same frozen one on every request, which `JsonEquality`
   * then finds equal at its first step, by identity.
   */
  readonly copy: unknown
  readonly decoded: unknown
}

// What is left of the bound of the freeze under way (one at a time: each is synchronous).
let budget = 0

/** Freezes a decoded value and what it holds, within `budget`. */
const deepFreeze = (value: unknown): void => {
  if (--budget < 0 || value === null || typeof value !== "object" || Object.isFrozen(value)) return
  Object.freeze(value)
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
}

/**
 * The decoder of `schema`'s params with the memo, when `schema` is a struct
 * whose `_meta` is required; undefined otherwise (the plain decoder serves).
 * `decoderFor` makes the plain decoder of a schema (shared, compiled once).
 */
export const decoder = (schema: AnyCodec, decoderFor: (schema: AnyCodec) => Decoder): Decoder | undefined => {
  const fields = (schema as { readonly fields?: Schema.Struct.Fields }).fields
  const meta = fields?._meta
  if (fields === undefined || meta === undefined || SchemaAST.isOptional(meta.ast)) return undefined
  const whole = decoderFor(schema)
  // The params without their `_meta` are a schema of their own: compiled when the params are, or its
  // interpreted decode would cost more than the memo saves (W1 negotiated: 4.9 -> 4.0 µs per call).
  const restSchema = Schema.Struct({ ...fields, _meta: Schema.Unknown }) as AnyCodec
  const rest = decoderFor(Jit.isCompiled(schema) ? Jit.compile(restSchema) : restSchema)
  const decodeMeta = decoderFor(meta as AnyCodec)
  const memo: Array<Remembered> = []

  // The decoded `_meta`; undefined when it cannot be remembered (not plain JSON, or too large).
  const metaOf = (input: unknown): Result.Result<unknown, SchemaIssue.Issue> | undefined => {
    for (let i = 0; i < memo.length; i++) {
      const entry = memo[i]!
      if (!JsonEquality.equals(input, entry.copy, MAX_NODES)) continue
      if (i > 0) {
        memo.splice(i, 1)
        memo.unshift(entry)
      }
      return Result.succeed(entry.decoded)
    }
    const copy = FrozenJson.isFrozen(input, MAX_NODES) ? { value: input } : FrozenJson.copy(input, MAX_NODES)
    if (copy === undefined) return undefined
    const decoded = decodeMeta(copy.value)
    if (Result.isFailure(decoded)) return decoded
    budget = MAX_NODES
    deepFreeze(decoded.success)
    memo.unshift({ copy: copy.value, decoded: decoded.success })
    if (memo.length > MEMO_SIZE) memo.pop()
    return decoded
  }

  return (input) => {
    const decodedMeta = metaOf((input as { readonly _meta?: unknown })._meta)
    if (decodedMeta === undefined || Result.isFailure(decodedMeta)) return whole(input)
    const decoded = rest(input)
    if (Result.isFailure(decoded)) return whole(input)
    const out = (decoded.success === input ? { ...(input as object) } : decoded.success) as Record<string, unknown>
    out._meta = decodedMeta.success
    return Result.succeed(out)
  }
}
