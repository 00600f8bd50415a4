/**
 * The host's one list of what every connected server offers: tools and
 * prompts under collision-safe catalog names (see `Naming`), resources and
 * resource templates by URI, each with the server it comes from.
 */
import * as Apps from "@effect-mcp/protocol/Apps"
import type * as CacheHints from "@effect-mcp/protocol/CacheHints"
import type * as Prompts from "@effect-mcp/protocol/Prompts"
import type * as Resources from "@effect-mcp/protocol/Resources"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Naming from "./Naming.ts"

/** One item of the catalog: its catalog name, the server offering it, and the item as the server listed it. */
export interface Entry<A> {
  /** The catalog name (tools, prompts) or the URI / URI template (resources). */
  readonly name: string
  readonly server: string
  readonly item: A
}

/** Every server's tools, prompts, resources and resource templates. */
export interface Catalog {
  readonly tools: ReadonlyArray<Entry<Tools.Tool>>
  readonly prompts: ReadonlyArray<Entry<Prompts.Prompt>>
  readonly resources: ReadonlyArray<Entry<Resources.Resource>>
  readonly resourceTemplates: ReadonlyArray<Entry<Resources.ResourceTemplate>>
  /** The cache hints each server's lists carried, by server (none for a server before 2026-07-28). */
  readonly hints?: { readonly [server: string]: ListingHints } | undefined
}

/** The four lists of a listing. */
export type ListKind = "tools" | "prompts" | "resources" | "resourceTemplates"

/**
 * The 2026-07-28 cache hints of one list as the host fetched it: the tightest
 * its pages carried (the shortest `ttlMs`, `private` if any page was), and
 * when it was listed (epoch milliseconds, on the Clock), which the `ttlMs` counts from.
 */
export interface ListHints {
  readonly ttlMs: number
  readonly cacheScope: CacheHints.CacheScope
  readonly listedAt: number
}

/** The hints of a server's lists, by kind (a list whose pages carried none has none). */
export type ListingHints = { readonly [K in ListKind]?: ListHints | undefined }

/** What one server offers, as listed. */
export interface Listing {
  readonly tools: ReadonlyArray<Tools.Tool>
  readonly prompts: ReadonlyArray<Prompts.Prompt>
  readonly resources: ReadonlyArray<Resources.Resource>
  readonly resourceTemplates: ReadonlyArray<Resources.ResourceTemplate>
  /** The cache hints its lists carried. */
  readonly hints?: ListingHints | undefined
}

/** A catalog with nothing in it. */
export const empty: Catalog = { tools: [], prompts: [], resources: [], resourceTemplates: [] }

/** A listing with nothing in it. */
export const emptyListing: Listing = empty as unknown as Listing

const named = <A extends { readonly name: string }>(
  servers: ReadonlyArray<readonly [string, Listing]>,
  pick: (listing: Listing) => ReadonlyArray<A>,
  naming: Naming.Options
): ReadonlyArray<Entry<A>> => {
  const items = servers.flatMap(([server, listing]) => pick(listing).map((item) => ({ server, item })))
  const names = Naming.assign(
    items.map(({ server, item }) => ({ server, name: item.name })),
    naming,
    // Every server given, listing or not: a server's prefix does not depend on which others are connected.
    servers.map(([server]) => server)
  )
  return items.map(({ server, item }, i) => ({ name: names[i]!, server, item }))
}

/**
 * The catalog of `servers` (in the order given, which numbers repeated names and prefixes; a server not
 * connected is given with an empty listing), named as `naming` says.
 */
export const make = (servers: ReadonlyArray<readonly [string, Listing]>, naming: Naming.Options = {}): Catalog => {
  const hints: { [server: string]: ListingHints } = {}
  for (const [server, listing] of servers) if (listing.hints !== undefined) hints[server] = listing.hints
  return {
    tools: named(servers, (l) => l.tools, naming),
    prompts: named(servers, (l) => l.prompts, naming),
    resources: servers.flatMap(([server, l]) => l.resources.map((item) => ({ name: item.uri, server, item }))),
    resourceTemplates: servers.flatMap(([server, l]) =>
      l.resourceTemplates.map((item) => ({ name: item.uriTemplate, server, item }))
    ),
    hints
  }
}

/**
 * The tightest cache hints the servers put on their `kind` lists, as of `now`
 * (epoch milliseconds): what is left of the shortest `ttlMs` (never the whole
 * of it again, 0 once it ran out), `private` if any server's list was.
 * Undefined when no server's list carried hints (none is on 2026-07-28):
 * a list made of the catalog may then be given no more than its own.
 */
export const listHints = (
  catalog: Catalog,
  kind: ListKind,
  now: number
): { readonly ttlMs: number; readonly cacheScope: CacheHints.CacheScope } | undefined => {
  let ttlMs = Number.POSITIVE_INFINITY
  let cacheScope: CacheHints.CacheScope = "public"
  let any = false
  for (const listing of Object.values(catalog.hints ?? {})) {
    const hints = listing[kind]
    if (hints === undefined) continue
    any = true
    ttlMs = Math.min(ttlMs, Math.max(0, hints.ttlMs - (now - hints.listedAt)))
    if (hints.cacheScope === "private") cacheScope = "private"
  }
  return any ? { ttlMs, cacheScope } : undefined
}

/**
 * Whether the model may see a catalog tool: every tool but those MCP Apps
 * marks as the app's alone (`_meta.ui.visibility` without `"model"`), which
 * only the app's own calls reach (`McpHost.callTool` still routes them).
 */
export const forModel = (entry: Entry<Tools.Tool>): boolean => Apps.visibilityOf(entry.item).includes("model")

/** A tool as a model should see it: the server's tool under its catalog name. */
export const toolAsListed = (entry: Entry<Tools.Tool>): Tools.Tool => ({ ...entry.item, name: entry.name })

const skillMd = "/SKILL.md"

// The literal text of a URI template before its first expression (`file:///{path}` -> `file:///`).
const literalPrefix = (template: string): string => {
  const brace = template.indexOf("{")
  return brace < 0 ? template : template.slice(0, brace)
}

/**
 * The servers that may hold `uri`: those listing it, else those listing a
 * skill's `SKILL.md` whose folder holds it (SEP-2640 servers list a skill's
 * `SKILL.md` only; its other files are read by URI from the same server),
 * else those with a template whose literal beginning it starts with (the
 * longest such folder or beginning wins).
 */
export const serversForUri = (catalog: Catalog, uri: string): ReadonlyArray<string> => {
  const listed = new Set(catalog.resources.filter((r) => r.name === uri).map((r) => r.server))
  if (listed.size > 0) return [...listed]
  let folder = 0
  let owners = new Set<string>()
  for (const r of catalog.resources) {
    if (!r.name.endsWith(skillMd)) continue
    // The folder with its trailing slash: `skill://pdf/` holds `skill://pdf/x`, not `skill://pdf2/x`.
    const root = r.name.slice(0, 1 - skillMd.length)
    if (!uri.startsWith(root) || root.length < folder) continue
    if (root.length > folder) {
      folder = root.length
      owners = new Set()
    }
    owners.add(r.server)
  }
  if (owners.size > 0) return [...owners]
  let best = 0
  let servers = new Set<string>()
  for (const t of catalog.resourceTemplates) {
    const prefix = literalPrefix(t.name)
    if (prefix.length === 0 || !uri.startsWith(prefix) || prefix.length < best) continue
    if (prefix.length > best) {
      best = prefix.length
      servers = new Set()
    }
    servers.add(t.server)
  }
  return [...servers]
}
