/**
 * What every result has in common.
 *
 * | field        | 2024-11-05 .. 2025-11-25 | 2026-07-28                                       |
 * |--------------|--------------------------|--------------------------------------------------|
 * | `_meta`      | optional, any            | optional ResultMetaObject (`serverInfo?`)        |
 * | `resultType` | absent                   | required on Result-derived results: `"complete"` |
 * |              |                          | or `"input_required"` (an open string)           |
 * | extra keys   | allowed                  | allowed                                          |
 *
 * `resultType` is optional in the domain: handlers return plain results, the
 * engine writes `resultType` on 2026-07-28 and a client reading an older peer
 * treats its absence as `"complete"` (see {@link resultTypeOf}).
 */
import { resultStruct } from "./internal/result.ts"

/** The 2026-07-28 `resultType` of a finished request. */
export const complete = "complete"
/** The 2026-07-28 `resultType` of a result that asks for more input (see `InputRequired.ts`). */
export const inputRequired = "input_required"

/** Any result: `_meta`, `resultType` and whatever else the method defines. */
export const Result = resultStruct({}).annotate({ identifier: "Result" })
export type Result = typeof Result.Type

/** The result of ping, subscribe, unsubscribe, logging/setLevel. */
export const EmptyResult = resultStruct({}).annotate({ identifier: "EmptyResult" })
export type EmptyResult = typeof EmptyResult.Type

/** A result's `resultType`, `"complete"` when absent (results of revisions before 2026-07-28). */
export const resultTypeOf = (result: { readonly resultType?: string }): string => result.resultType ?? complete

/** Whether a result asks the client for more input before the request can finish (2026-07-28). */
export const isInputRequired = (result: { readonly resultType?: string }): boolean =>
  result.resultType === inputRequired
