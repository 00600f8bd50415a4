/**
 * Who sees what through the gateway: a rule per item and principal, applied
 * to every list and every request, so an item hidden from a principal is
 * neither listed to it nor callable by it. A hidden tool, prompt or resource
 * is answered exactly as one that does not exist (`Unknown tool: <name>`,
 * `Unknown prompt: <name>`, "Resource not found"), so a client cannot tell
 * hidden from absent; a completion about a hidden prompt or template
 * completes nothing.
 *
 * The rule sees the item (its kind, catalog name or URI, the upstream that
 * serves it, its definition as listed) and the principal the downstream
 * transport authenticated (`Transport.Authenticated`: `owner`, `scopes`, and
 * the verified token in `value`, whose `claims` `claim` reads). A request
 * without a principal (stdio, an HTTP server without `auth`) is given
 * `undefined`: the rule decides what an anonymous caller sees.
 *
 * @example
 * ```ts
 * import * as Policy from "@effect-mcp/gateway/Policy"
 *
 * // The "billing" upstream for holders of the billing scope, the "admin" one for the ops team's tokens.
 * export const policy: Policy.Policy = Policy.all(
 *   Policy.upstreamScopes({ billing: ["billing"] }),
 *   Policy.upstream("admin", Policy.claim("team", (team) => team === "ops"))
 * )
 * ```
 */
import type * as Transport from "@effect-mcp/engine/Transport"

/** An item of the gateway's catalog, as a rule sees it. */
export interface Item {
  readonly kind: "tool" | "prompt" | "resource" | "template"
  /** A tool's or prompt's catalog name, a resource's URI, a template's URI template. */
  readonly name: string
  /** The upstream that serves it. */
  readonly upstream: string
  /** Its definition as the gateway lists it. */
  readonly definition: object
}

/** A rule: whether `principal` (undefined when the request is not authenticated) may see and use `item`. */
export type Policy = (item: Item, principal: Transport.Authenticated | undefined) => boolean

/** Sees everything. */
export const allowAll: Policy = () => true

/** Every rule must agree. */
export const all =
  (...rules: ReadonlyArray<Policy>): Policy =>
  (item, principal) =>
    rules.every((rule) => rule(item, principal))

/** `rule` for the items of `upstream`; the others are seen. */
export const upstream =
  (name: string, rule: Policy): Policy =>
  (item, principal) =>
    item.upstream !== name || rule(item, principal)

/**
 * The items of each upstream named for the principals holding all its scopes
 * (an upstream not named is seen by everyone; nothing named is seen without a principal).
 */
export const upstreamScopes =
  (scopes: { readonly [upstream: string]: ReadonlyArray<string> }): Policy =>
  (item, principal) => {
    const required = scopes[item.upstream]
    if (required === undefined) return true
    return principal !== undefined && required.every((s) => principal.scopes.includes(s))
  }

/** The claims of the principal's verified token (`value.claims`, as the auth package's `Principal` has them). */
export const claimsOf = (principal: Transport.Authenticated | undefined): { readonly [claim: string]: unknown } => {
  const value = principal?.value as { readonly claims?: unknown } | undefined
  return typeof value?.claims === "object" && value.claims !== null
    ? (value.claims as { readonly [claim: string]: unknown })
    : {}
}

/** Seen when the token's claim `name` satisfies `test` (no principal, or no such claim: `test(undefined)`). */
export const claim =
  (name: string, test: (value: unknown, item: Item) => boolean): Policy =>
  (item, principal) =>
    test(claimsOf(principal)[name], item)
