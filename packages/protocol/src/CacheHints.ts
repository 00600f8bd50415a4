/**
 * Caching hints a 2026-07-28 server puts on cacheable results (the spec's
 * `CacheableResult`): `tools/list`, `prompts/list`, `resources/list`,
 * `resources/templates/list`, `resources/read` and `server/discover`.
 *
 * | field        | 2024-11-05 .. 2025-11-25 | 2026-07-28                       |
 * |--------------|--------------------------|----------------------------------|
 * | `ttlMs`      | absent                   | required, integer >= 0           |
 * | `cacheScope` | absent                   | required, `"public" | "private"` |
 *
 * Optional in the domain so handlers of every revision can ignore them; the
 * engine supplies defaults when it writes a 2026-07-28 result.
 */
import * as Schema from "effect/Schema"

/** `"public"`: no user-specific data, shareable across authorization contexts; `"private"`: not. */
export const CacheScope = Schema.Literals(["private", "public"]).annotate({ identifier: "CacheScope" })
export type CacheScope = typeof CacheScope.Type

/** Milliseconds a result may be reused before re-fetching; 0 means stale at once. */
export const TtlMs = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)).annotate({ identifier: "TtlMs" })
export type TtlMs = typeof TtlMs.Type

/** The cache hints a 2026-07-28 result may carry: how long it may be reused, and by whom. */
export const CacheHints = Schema.Struct({
  ttlMs: Schema.optionalKey(TtlMs),
  cacheScope: Schema.optionalKey(CacheScope)
}).annotate({ identifier: "CacheHints" })
/** Decoded `CacheHints`. */
export type CacheHints = typeof CacheHints.Type

/**
 * The hints to send when a handler gave none: immediately stale and private,
 * the choice that can never serve one user's data to another.
 */
export const conservative: { readonly ttlMs: 0; readonly cacheScope: "private" } = { ttlMs: 0, cacheScope: "private" }

/** The hints of a result, filled with {@link conservative} where absent. */
export const withDefaults = <R extends object>(
  result: R & CacheHints
): Omit<R, "ttlMs" | "cacheScope"> & { readonly ttlMs: number; readonly cacheScope: CacheScope } => ({
  ...result,
  ttlMs: result.ttlMs ?? conservative.ttlMs,
  cacheScope: result.cacheScope ?? conservative.cacheScope
})
