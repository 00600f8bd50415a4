/**
 * The gateway's cache of upstream reads, by the 2026-07-28 cache hints the
 * upstream put on each `resources/read` result: kept for its `ttlMs` (on the
 * Clock), shared by every caller when its `cacheScope` is `public`, kept per
 * principal when `private` (and not kept at all for a caller without one: the
 * gateway cannot tell such callers apart). A result without hints (an
 * upstream on an earlier revision), or with `ttlMs: 0`, is not kept.
 *
 * Bounded: past `maxEntries` the oldest entry goes first (a Map keeps
 * insertion order); expired entries go when they are next looked up.
 *
 * The upstream saying a resource changed (`notifications/resources/updated`)
 * makes what is kept of it stale at once, as the MCP caching rules say of a
 * relevant notification: `invalidate` drops it, for every principal.
 */
import type * as Content from "@effect-mcp/protocol/Content"
import type * as Resources from "@effect-mcp/protocol/Resources"

interface Entry {
  readonly contents: ReadonlyArray<Content.ResourceContents>
  readonly cacheScope: "public" | "private"
  readonly expiresAt: number
}

/** Contents kept, with the hints they may be passed on with: the time they have left, and their scope. */
export interface Hit {
  readonly contents: ReadonlyArray<Content.ResourceContents>
  readonly ttlMs: number
  readonly cacheScope: "public" | "private"
}

/** One gateway's read cache. */
export interface ReadCache {
  /** The contents kept for `uri` of `upstream` that `principal` may be served, if any is still fresh at `now`. */
  readonly get: (upstream: string, uri: string, principal: string | undefined, now: number) => Hit | undefined
  /** Keeps `result` as its hints say. */
  readonly put: (
    upstream: string,
    uri: string,
    principal: string | undefined,
    result: Resources.ReadResourceResult,
    now: number
  ) => void
  /** Drops what is kept of `uri` of `upstream`, public or for any principal. */
  readonly invalidate: (upstream: string, uri: string) => void
}

const keyOf = (upstream: string, uri: string, principal: string | undefined) =>
  principal === undefined
    ? `public\u0000${upstream}\u0000${uri}`
    : `private\u0000${principal}\u0000${upstream}\u0000${uri}`

/** A cache of at most `maxEntries` reads. */
export const make = (maxEntries: number): ReadCache => {
  const entries = new Map<string, Entry>()
  const fresh = (key: string, now: number) => {
    const entry = entries.get(key)
    if (entry === undefined) return undefined
    if (entry.expiresAt > now)
      return { contents: entry.contents, ttlMs: entry.expiresAt - now, cacheScope: entry.cacheScope }
    entries.delete(key)
    return undefined
  }
  return {
    get: (upstream, uri, principal, now) =>
      fresh(keyOf(upstream, uri, undefined), now) ??
      (principal === undefined ? undefined : fresh(keyOf(upstream, uri, principal), now)),
    put: (upstream, uri, principal, result, now) => {
      const ttlMs = result.ttlMs ?? 0
      if (ttlMs <= 0 || maxEntries <= 0) return
      const shared = result.cacheScope === "public"
      if (!shared && principal === undefined) return
      const key = keyOf(upstream, uri, shared ? undefined : principal)
      entries.delete(key)
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!)
      entries.set(key, { contents: result.contents, cacheScope: shared ? "public" : "private", expiresAt: now + ttlMs })
    },
    invalidate: (upstream, uri) => {
      // Every key of the resource ends the same way, whoever it is kept for. A walk over at most `maxEntries`
      // keys per update, rather than an index by resource kept in step with the eviction order.
      const suffix = `\u0000${upstream}\u0000${uri}`
      for (const key of entries.keys()) if (key.endsWith(suffix)) entries.delete(key)
    }
  }
}
