/**
 * The resources a stateful session's client subscribed to
 * (`resources/subscribe`, 2024-11-05..2025-11-25), and the bound on them and
 * on the URIs of a 2026-07-28 `subscriptions/listen` (`maxSubscriptions`).
 *
 * Each held URI costs the server its record and a look on every announced
 * update: unbounded, one client could grow the server's memory and the work
 * of each `resourceUpdated` without end. One distinct URI past the bound is
 * refused with the code `ToolLimits` refuses a call past its concurrency with
 * (-32029, `data: { maxSubscriptions }`), as the gateway refuses its own; a
 * URI held already is no new one, and an unsubscribe makes room.
 *
 * A session's URIs are a Set (in subscription order), so a subscribe or an
 * unsubscribe costs the same however many it holds (an array copied on each
 * one made n subscriptions cost O(n²): 16,000 took 7 s). A session whose
 * snapshot someone keeps (`Session.State.onChange` set: an HTTP session a
 * registry holds) also has them as a JSON array in its features, so a session
 * continued elsewhere keeps them: a snapshot holds the value it was taken
 * with, so that array is a new one on each change, at most `maxSubscriptions`
 * long.
 */
import * as McpError from "@effect-mcp/protocol/McpError"
import type { SessionEntry } from "./server.ts"

/** The session feature holding the URIs subscribed, in order (part of the session's snapshot). */
export const SUBSCRIPTIONS = "resources/subscriptions"

/** The most URIs a session subscribes to (and a listen request names) by default. */
export const defaultMaxSubscriptions = 1000

/**
 * What a subscribe past the bound is answered: -32029, the code of `Middleware.Code.RateLimited` (not imported:
 * `Middleware` imports `McpServer`, which imports the handlers), with the bound in `data`.
 */
export const tooManySubscriptions = (maxSubscriptions: number): McpError.JsonRpcError =>
  new McpError.JsonRpcError({
    code: -32029,
    message: `Too many subscriptions: a session holds at most ${maxSubscriptions}; unsubscribe from one first`,
    data: { maxSubscriptions }
  })

// Made on a session's first subscribe (or, for a session continued from a snapshot, on first look), dropped with it.
const held = new WeakMap<SessionEntry, Set<string>>()
const none: ReadonlySet<string> = new Set()

const setOf = (entry: SessionEntry): Set<string> | undefined => {
  let uris = held.get(entry)
  if (uris === undefined) {
    const kept = entry.session.feature(SUBSCRIPTIONS)
    if (!Array.isArray(kept)) return undefined
    uris = new Set(kept.filter((uri): uri is string => typeof uri === "string"))
    held.set(entry, uris)
  }
  return uris
}

/** The URIs a session's client subscribed to, in order. */
export const subscriptionsOf = (entry: SessionEntry): ReadonlySet<string> => setOf(entry) ?? none

// A snapshot someone keeps carries them; otherwise nothing reads the feature (the Set is what is looked at).
const save = (entry: SessionEntry, uris: ReadonlySet<string>) => {
  if (entry.session.state.onChange !== undefined) {
    entry.session.setFeature(SUBSCRIPTIONS, uris.size === 0 ? undefined : Array.from(uris))
  }
}

/**
 * Subscribes the session to `uri`; false (and nothing kept) when that would be one distinct URI more than
 * `maxSubscriptions`.
 */
export const subscribe = (entry: SessionEntry, uri: string, maxSubscriptions: number): boolean => {
  let uris = setOf(entry)
  if (uris?.has(uri)) return true
  if ((uris?.size ?? 0) >= maxSubscriptions) return false
  if (uris === undefined) {
    uris = new Set()
    held.set(entry, uris)
  }
  uris.add(uri)
  save(entry, uris)
  return true
}

/** Unsubscribes the session from `uri` (nothing when it was not subscribed). */
export const unsubscribe = (entry: SessionEntry, uri: string): void => {
  const uris = setOf(entry)
  if (uris?.delete(uri)) save(entry, uris)
}

/** Whether `uri` is `subscription` or a URI under it. */
export const subscribedTo = (subscription: string, uri: string): boolean =>
  uri === subscription || uri.startsWith(subscription.endsWith("/") ? subscription : `${subscription}/`)

/** Whether one of `subscriptions` covers `uri` (is it, or a URI it is under). */
export const covers = (subscriptions: Iterable<string>, uri: string): boolean => {
  for (const subscription of subscriptions) if (subscribedTo(subscription, uri)) return true
  return false
}
