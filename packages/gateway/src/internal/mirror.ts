/**
 * Keeps the gateway server's items in step with the host's catalog: each
 * kind's items are registered in a scope of their own, and when the catalog
 * changes, a kind whose entries changed is registered anew and its previous
 * scope closed. The server announces each change as `list_changed` to the
 * downstream sessions (a kind that did not change announces nothing).
 *
 * Resources and resource templates keep their URIs: when two upstreams list
 * the same one, the first in configuration order serves it (the host's
 * catalog is in that order).
 *
 * In discovery mode the server lists discovery's three tools, registered once;
 * the catalog's tools are registered unlisted (`listed: false`), so that a
 * client that knows a name may call it directly (the policy, limits and audit
 * apply as to any call), and a change of them also builds a new search index.
 * A catalog tool named as one of discovery's is not callable directly.
 *
 * Skills (skills.ts) are listed from the upstreams declaring the Skills
 * extension as the catalog changes, and registered after the resources: the
 * server declares the extension while one is registered.
 */
import type * as Catalog from "@effect-mcp/host/Catalog"
import type * as ProtocolSkills from "@effect-mcp/protocol/Skills"
import type * as McpServer from "@effect-mcp/server/McpServer"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import * as CatalogIndex from "./catalogIndex.ts"
import * as Discovery from "./discovery.ts"
import * as Items from "./items.ts"
import * as Skills from "./skills.ts"
import * as Tasks from "./tasks.ts"

type Kind = "tool" | "prompt" | "resource" | "template" | "skill"

const firstByName = <A>(entries: ReadonlyArray<Catalog.Entry<A>>): ReadonlyArray<Catalog.Entry<A>> => {
  const seen = new Set<string>()
  return entries.filter((e) => !seen.has(e.name) && seen.add(e.name) !== undefined)
}

const itemsOf = (
  routes: Items.Routes,
  catalog: Catalog.Catalog,
  kind: Kind,
  skills: ReadonlyArray<Catalog.Entry<ProtocolSkills.Skill>>
): { readonly entries: ReadonlyArray<Catalog.Entry<unknown>>; readonly make: () => ReadonlyArray<unknown> } => {
  switch (kind) {
    case "tool": {
      if (routes.discovery === undefined) {
        return { entries: catalog.tools, make: () => catalog.tools.map((e) => Items.tool(routes, e)) }
      }
      const entries = catalog.tools.filter((e) => !Discovery.isDiscoveryTool(e.name))
      return { entries, make: () => entries.map((e) => ({ ...Items.tool(routes, e), listed: false })) }
    }
    case "prompt":
      return { entries: catalog.prompts, make: () => catalog.prompts.map((e) => Items.prompt(routes, e)) }
    case "resource": {
      const entries = firstByName(catalog.resources)
      return { entries, make: () => entries.map((e) => Items.resource(routes, e)) }
    }
    case "template": {
      const entries = firstByName(catalog.resourceTemplates)
      return { entries, make: () => entries.flatMap((e) => Items.template(routes, e) ?? []) }
    }
    case "skill": {
      // After the resources: a SKILL.md an earlier upstream lists as its own resource is that upstream's to serve.
      const entries = skills.filter((e) => (routes.index.resource.get(e.name) ?? e.server) === e.server)
      return { entries, make: () => entries.map((e) => Skills.skill(routes, catalog, e)) }
    }
  }
}

const kinds: ReadonlyArray<Kind> = ["tool", "prompt", "resource", "template", "skill"]

/**
 * Registers the catalog's items now, then follows the catalog until the
 * scope closes (which removes them all). Returns what mirrors the catalog as
 * it is now, in step with the following (one at a time): the gateway runs it
 * before it answers, as the change that settled its upstreams may not have
 * reached the follower yet.
 */
export const run = (
  routes: Items.Routes,
  server: McpServer.McpServerShape,
  context: Context.Context<never>
): Effect.Effect<Effect.Effect<void>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const parent = yield* Effect.scope
    const current = new Map<Kind, { readonly key: string; readonly scope: Scope.Closeable }>()
    const discovery = routes.discovery
    if (discovery !== undefined) yield* server.register("tool", Discovery.tools(routes, discovery), context)
    const apply = (catalog: Catalog.Catalog) =>
      Effect.flatMap(Skills.listed(routes.host), (skills) => applyWith(catalog, skills))
    const applyWith = (catalog: Catalog.Catalog, skills: ReadonlyArray<Catalog.Entry<ProtocolSkills.Skill>>) =>
      Effect.forEach(
        kinds,
        (kind) =>
          Effect.gen(function* () {
            const { entries, make } = itemsOf(routes, catalog, kind, skills)
            // A tool of an upstream serving the Tasks extension takes tasks (its listing cannot say so).
            const extension =
              kind === "tool"
                ? yield* Tasks.extensionUpstreams(
                    routes.host,
                    entries.map((e) => e.server)
                  )
                : undefined
            // What a downstream client sees of the kind: unchanged entries need no new registration.
            const key = JSON.stringify([entries.map((e) => [e.name, e.server, e.item]), [...(extension ?? [])]])
            const previous = current.get(kind)
            if (previous?.key === key) return
            // The names served from now on, for the list filter and the audit.
            if (extension !== undefined) {
              routes.extensionTasks.clear()
              for (const server of extension) routes.extensionTasks.add(server)
            }
            if (kind === "skill") {
              // Each file of each skill, with its upstream, for the policy (skills.ts).
              routes.skillFiles.clear()
              for (const e of entries as ReadonlyArray<Catalog.Entry<ProtocolSkills.Skill>>) {
                for (const file of Skills.files(catalog, e)) routes.skillFiles.set(file.name, file)
              }
            } else {
              const index = routes.index[kind]
              index.clear()
              for (const e of entries) if (!index.has(e.name)) index.set(e.name, e.server)
            }
            // Announced as any change of the tools (a client may hold definitions it looked up).
            if (kind === "tool" && discovery !== undefined) discovery.index = CatalogIndex.make(catalog.tools)
            const scope = yield* Scope.fork(parent)
            // Registered before the previous ones go: items kept under the same key are replaced, never missing.
            yield* Scope.provide(server.register(kind, make(), context), scope)
            current.set(kind, { key, scope })
            if (previous !== undefined) yield* Scope.close(previous.scope, Exit.void)
          }),
        { discard: true }
      )
    const oneAtATime = yield* Semaphore.make(1)
    const applied = (catalog: Catalog.Catalog) => oneAtATime.withPermit(apply(catalog))
    yield* applied(yield* routes.host.catalog)
    yield* routes.host.catalogChanges.pipe(Stream.runForEach(applied), Effect.forkScoped)
    return Effect.flatMap(routes.host.catalog, applied)
  })
