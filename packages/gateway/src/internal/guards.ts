/**
 * The gateway's server middleware: the policy applied to every list and to
 * what the server answers before any item's handler runs (the items'
 * handlers apply it to every request, see `items.ts`), the audit record of
 * every routed request, and the upstream's cache hints passed on. The first
 * two find an item's upstream in the routes' index, which the mirror keeps in
 * step with the catalog.
 */
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as Catalog from "@effect-mcp/host/Catalog"
import * as FastGetter from "@effect-mcp/protocol/FastGetter"
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Resources from "@effect-mcp/protocol/Resources"
import * as Middleware from "@effect-mcp/server/Middleware"
import type * as Resource from "@effect-mcp/server/Resource"
import * as ResourceTemplate from "@effect-mcp/server/ResourceTemplate"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Audit from "../Audit.ts"
import type * as Policy from "../Policy.ts"
import * as Items from "./items.ts"

type TemplateEntry = Catalog.Entry<Resources.ResourceTemplate>

// The catalog's templates as the server matches a URI against them (each URI template once, the first listing it,
// as the mirror registers them; one it cannot parse is not registered), made once per catalog.
const matchers = new WeakMap<
  ReadonlyArray<TemplateEntry>,
  ReadonlyArray<readonly [TemplateEntry, (uri: string) => unknown]>
>()
const matchersOf = (templates: ReadonlyArray<TemplateEntry>) => {
  let made = matchers.get(templates)
  if (made === undefined) {
    const seen = new Set<string>()
    made = templates.flatMap((entry) => {
      if (seen.has(entry.name)) return []
      seen.add(entry.name)
      try {
        const { match } = ResourceTemplate.make({
          uriTemplate: entry.item.uriTemplate,
          name: entry.item.name,
          read: () => Effect.die("never read")
        })
        return [[entry, match] as const]
      } catch {
        return []
      }
    })
    matchers.set(templates, made)
  }
  return made
}

/**
 * What the server would answer a `prompts/get` or `completion/complete` if the prompt or template it names did not
 * exist, when the policy hides it from the request's principal (undefined: not hidden, the server answers).
 */
const hiddenAnswer = (
  catalog: Catalog.Catalog,
  policy: Policy.Policy,
  request: Middleware.Request
): McpError.McpError | undefined => {
  const params = request.params as { readonly name?: unknown; readonly ref?: unknown } | undefined
  const ref = (request.method === "completion/complete" ? (params?.ref ?? {}) : undefined) as
    | { readonly type?: unknown; readonly name?: unknown; readonly uri?: unknown }
    | undefined
  if (ref === undefined || ref.type === "ref/prompt") {
    const name = String(ref === undefined ? params?.name : ref.name)
    const entry = catalog.prompts.find((p) => p.name === name)
    return entry === undefined || policy(Items.promptItem(entry), request.principal)
      ? undefined
      : new McpError.InvalidParams({ message: `Unknown prompt: ${Items.echo(name)}` })
  }
  // A URI template, or a URI the server finds a template for: hidden when every template serving it is.
  const uri = String(ref.uri)
  const exact = catalog.resourceTemplates.find((t) => t.name === uri)
  const serving =
    exact !== undefined
      ? [exact]
      : matchersOf(catalog.resourceTemplates).flatMap(([entry, match]) => (match(uri) === undefined ? [] : [entry]))
  return serving.length === 0 || serving.some((entry) => policy(Items.templateItem(entry), request.principal))
    ? undefined
    : new McpError.InvalidParams({ message: `Unknown resource template: ${Items.echo(uri)}` })
}

/**
 * The policy before the server's handlers: each list keeps only the items the request's principal may see (tools
 * too unless `tools` is false), and a `prompts/get` or `completion/complete` of a prompt or template it may not see
 * is answered as one that does not exist. That refusal comes first because the server answers some of these
 * requests before any handler (a prompt's missing required arguments, an argument no completer serves), and those
 * answers would tell that the item exists.
 */
export const visibility = (
  routes: Pick<Items.Routes, "index">,
  catalog: Effect.Effect<Catalog.Catalog>,
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
  const listed = Middleware.visibility({
    tools: lists.tools ? rule("tool", "name") : undefined,
    prompts: rule("prompt", "name"),
    resources: rule("resource", "uri"),
    resourceTemplates: rule("template", "uriTemplate")
  })
  return (request, next) =>
    request.method === "prompts/get" || request.method === "completion/complete"
      ? Effect.flatMap(catalog, (now) => {
          const answer = hiddenAnswer(now, policy, request)
          return answer === undefined ? next : Effect.fail(answer)
        })
      : listed(request, next)
}

const audited = new Set(["tools/call", "prompts/get", "resources/read"])

/** Sends one record per routed request to the auditor's sink (see `Audit`). */
export const audit =
  (routes: Pick<Items.Routes, "index" | "routed">, auditor: Audit.Auditor): Middleware.Middleware =>
  (request, next) => {
    if (!audited.has(request.method) || request.target === undefined) return next
    const method = request.method as Audit.Record["method"]
    const target = request.target
    const params = request.params as { readonly arguments?: unknown } | undefined
    return Effect.flatMap(CurrentRequest.CurrentRequest, (current) =>
      Audit.audited(
        auditor,
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
