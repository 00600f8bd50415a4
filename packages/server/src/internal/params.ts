/**
 * Reading request params the engine has validated only as "some JSON": a
 * missing or non-object value reads as an empty object, so handlers look
 * fields up without checking each level.
 */
import * as Predicate from "effect/Predicate"

export type Obj = { readonly [key: string]: unknown }

/** `params` as an object (empty when it is not one). */
export const paramsOf = (params: unknown): Obj => (Predicate.isObject(params) ? (params as Obj) : {})

/** The `_meta` of `params` (empty when absent). */
export const metaOf = (params: unknown): Obj => paramsOf(paramsOf(params)._meta)

/** The longest part of a client-sent value an error repeats: an error must not amplify what it refuses. */
export const echoLimit = 256

/** `value` as an error message may quote it: at most `echoLimit` characters, marked when cut. */
export const echo = (value: string): string =>
  value.length <= echoLimit ? value : `${value.slice(0, echoLimit)}... (${value.length} characters)`

/** The most issues an argument error lists: one per key of a huge object would echo the object back. */
export const issueLimit = 20

/** Issue lines joined for an error message: at most `issueLimit`, then how many more there were. */
export const listIssues = (lines: ReadonlyArray<string>): string =>
  lines.length <= issueLimit
    ? lines.join("; ")
    : `${lines.slice(0, issueLimit).join("; ")}; and ${lines.length - issueLimit} more`
