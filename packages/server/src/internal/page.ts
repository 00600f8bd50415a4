/**
 * Pagination of the list methods. Lists are kept sorted by key, and a cursor
 * names the last key of the page it follows (base64url JSON, opaque to the
 * client). A page therefore starts after that key even when items were added
 * or removed in between: every item present throughout a walk is returned
 * exactly once.
 */
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Base64Url from "effect/encoding/Base64Url"
import * as Result from "effect/Result"

export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly nextCursor: string | undefined
}

const version = 1

export const encodeCursor = (lastKey: string): string => Base64Url.encode(JSON.stringify({ v: version, k: lastKey }))

const invalid = (cursor: string) =>
  new McpError.InvalidParams({ message: "Invalid params: invalid or expired cursor", data: { cursor } })

/** The key a cursor resumes after, or the -32602 error the spec asks for an invalid cursor. */
export const decodeCursor = (cursor: string): Result.Result<string, McpError.InvalidParams> => {
  const bytes = Base64Url.decodeString(cursor)
  if (Result.isFailure(bytes)) return Result.fail(invalid(cursor))
  try {
    const parsed: unknown = JSON.parse(bytes.success)
    const p = parsed as { readonly v?: unknown; readonly k?: unknown }
    if (typeof parsed === "object" && parsed !== null && p.v === version && typeof p.k === "string") {
      return Result.succeed(p.k)
    }
  } catch {
    // Not JSON: falls through to the error.
  }
  return Result.fail(invalid(cursor))
}

/** First index whose key sorts after `key` (binary search over sorted keys). */
const indexAfter = <A>(sorted: ReadonlyArray<A>, keyOf: (a: A) => string, key: string): number => {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (keyOf(sorted[mid]!) <= key) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** One page of `sorted` (ascending by `keyOf`) after `cursor`. */
export const paginate = <A>(
  sorted: ReadonlyArray<A>,
  keyOf: (a: A) => string,
  cursor: string | undefined,
  pageSize: number
): Result.Result<Page<A>, McpError.InvalidParams> => {
  let start = 0
  if (cursor !== undefined) {
    const key = decodeCursor(cursor)
    if (Result.isFailure(key)) return Result.fail(key.failure)
    start = indexAfter(sorted, keyOf, key.success)
  }
  const items = sorted.slice(start, start + pageSize)
  const last = items.at(-1)
  const nextCursor = start + pageSize < sorted.length && last !== undefined ? encodeCursor(keyOf(last)) : undefined
  return Result.succeed({ items, nextCursor })
}

/** Compares keys by UTF-16 code units, the order `paginate` relies on. */
export const compareKeys = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)
