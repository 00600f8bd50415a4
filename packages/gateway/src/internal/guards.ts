/**
 * The gateway's server middleware: the policy applied to every list (the
 * items' handlers apply it to every request, see `items.ts`), the audit
 * record of every routed request, and the upstream's cache hints passed on.
 * The first two find an item's upstream in the routes' index, which the
 * mirror keeps in step with the catalog.
 */
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as Catalog from "@effect-mcp/host/Catalog"
import * as FastGetter from "@effect-mcp/protocol/FastGetter"
import * as Middleware from "@effect-mcp/server/Middleware"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Resource from "@effect-mcp/server/Resource"
import * as Audit from "../Audit.ts"
import type * as Policy from "../Policy.ts"
import type * as Items from "./items.ts"

/** Keeps in each list only the items the request's principal may see (tools too unless `tools` is false). */
export const visibility = (
  routes: Pick<Items.Routes, "index">,
  policy: Policy.Policy,
  lists: { readonly tools: boolean }
): Middleware.Middleware => {
  const rule =
    (kind: Policy.Item["kind"], id: "name" | "uri" | "uriTemplate") =>
    (item: Middleware.ListItem, request: Middleware.Request): boolean => {
      const name = item.definition[id]
      const upstream = typeof name === "string" ? routes.index[kind].get(name) : undefined
      // Not the gateway's (nothing else registers items on its server): nothing to decide.
      if (upstream === undefined || typeof name !== "string") return true
      return policy({ kind, name, upstream, definition: item.definition }, request.principal)
    }
  return Middleware.visibility({
    tools: lists.tools ? rule("tool", "name") : undefined,
    prompts: rule("prompt", "name"),
    resources: rule("resource", "uri"),
    resourceTemplates: rule("template", "uriTemplate")
  })
}

const audited = new Set(["tools/call", "prompts/get", "resources/read"])

/** Sends one record per routed request to `sink` (see `Audit`). */
export const audit =
  (
    routes: Pick<Items.Routes, "index" | "routed">,
    sink: (record: Audit.Record) => Effect.Effect<void>
  ): Middleware.Middleware =>
  (request, next) => {
    if (!audited.has(request.method) || request.target === undefined) return next
    const method = request.method as Audit.Record["method"]
    const target = request.target
    const params = request.params as { readonly arguments?: unknown } | undefined
    return Effect.flatMap(CurrentRequest.CurrentRequest, (current) =>
      Audit.audited(
        sink,
        // `upstream` is known before the handler runs for a name; for a URI a template serves, from the handler
        // that routed it. A getter added with FastGetter: an object literal with a getter is a dictionary.
        FastGetter.define(
          {
            method,
            target,
            principal: request.principal,
            arguments: method === "resources/read" ? undefined : params?.arguments
          },
          "upstream",
          () =>
            routes.routed.get(current) ??
            routes.index[method === "tools/call" ? "tool" : method === "prompts/get" ? "prompt" : "resource"].get(
              target
            )
        ),
        next
      )
    )
  }

// A result of a revision with cache hints carries them (the server adds them): only those are rewritten.
const withHints = (result: unknown, hints: Partial<Resource.Cache>): unknown =>
  typeof result === "object" && result !== null && "ttlMs" in result ? { ...result, ...hints } : result

/** The catalog's list each list method answers with. */
const listKinds: { readonly [method: string]: Catalog.ListKind } = {
  "tools/list": "tools",
  "prompts/list": "prompts",
  "resources/list": "resources",
  "resources/templates/list": "resourceTemplates"
}

/** The tighter of two hints: the shorter `ttlMs`, `private` if either is. */
const tighter = (a: Resource.Cache, b: Partial<Resource.Cache> | undefined): Resource.Cache => ({
  ttlMs: Math.max(0, Math.min(a.ttlMs, b?.ttlMs ?? Number.POSITIVE_INFINITY)),
  cacheScope: a.cacheScope === "public" && b?.cacheScope !== "private" ? "public" : "private"
})

/**
 * The 2026-07-28 cache hints of the gateway's answers. A read carries the
 * upstream's (what is left of them when served from the gateway's cache):
 * never a longer `ttlMs`, never `public` what the upstream made `private`,
 * and within the gateway's own `read` hints when it has some. A list carries
 * the server's own list hints within the tightest the upstreams put on theirs
 * (`Catalog.listHints`: what is left of the shortest `ttlMs`, `private` if
 * any upstream's was); in discovery mode `tools/list` lists the gateway's own
 * tools, on its own hints. With a policy (`perPrincipal`) what one principal
 * is answered may differ from another's, so reads and lists are `private`
 * whatever the upstream or the server said.
 */
export const cacheHints =
  (
    routes: Pick<Items.Routes, "readHints" | "discovery">,
    catalog: Effect.Effect<Catalog.Catalog>,
    own: Resource.Cache | undefined,
    perPrincipal: boolean
  ): Middleware.Middleware =>
  (request, next) => {
    const scope = perPrincipal ? ({ cacheScope: "private" } as const) : undefined
    if (request.method === "resources/read") {
      return Effect.flatMap(CurrentRequest.CurrentRequest, (current) =>
        Effect.map(next, (result) => {
          const upstream = routes.readHints.get(current)
          if (upstream === undefined) return scope === undefined ? result : withHints(result, scope)
          return withHints(result, tighter(tighter(upstream, own), scope))
        })
      )
    }
    const kind = listKinds[request.method]
    if (kind === undefined || (kind === "tools" && routes.discovery !== undefined)) {
      return kind === undefined || scope === undefined ? next : Effect.map(next, (result) => withHints(result, scope))
    }
    return Effect.flatMap(next, (result) =>
      Effect.flatMap(catalog, (now) =>
        Effect.map(Clock.currentTimeMillis, (at) => {
          const listed = result as Partial<Resource.Cache>
          if (listed.ttlMs === undefined) return result
          const server = { ttlMs: listed.ttlMs, cacheScope: listed.cacheScope ?? "private" }
          return withHints(result, tighter(tighter(server, Catalog.listHints(now, kind, at)), scope))
        })
      )
    )
  }
