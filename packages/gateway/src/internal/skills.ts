/**
 * Skills (SEP-2640) through the gateway. The skills of each upstream whose
 * connection declares the Skills extension are listed (`skills/list`) when
 * the catalog changes (an upstream's skills change with its resources, which
 * it announces as `resources/list_changed`) and registered on the gateway's
 * server as skills: the server then declares the extension, while at least
 * one is registered, and answers `skills/list`, `skills/get` and
 * `resources/directory/read` from the upstreams' entries as they are (their
 * digests are the upstream's, which the client verifies the files it reads
 * against). Each file of a skill is a resource of the gateway's read from
 * the upstream that serves the skill, as a listed resource is; only the
 * `SKILL.md` is listed, as the upstream lists it.
 *
 * When two upstreams serve a skill at the same URI, the first in
 * configuration order serves it, as for resources; a skill whose `SKILL.md`
 * an earlier upstream lists as a resource of its own is left out (its reads
 * would reach that upstream).
 *
 * Under a policy, a skill is seen as its `SKILL.md` resource and each file as
 * the resource of its URI: a skill hidden from a principal is neither in its
 * `skills/list` nor found by its `skills/get`, and a directory lists only the
 * files (and folders holding files) it may see.
 */
import * as ClientSkills from "@effect-mcp/client/Skills"
import type * as Transport from "@effect-mcp/engine/Transport"
import type * as Catalog from "@effect-mcp/host/Catalog"
import type * as McpHost from "@effect-mcp/host/McpHost"
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Resources from "@effect-mcp/protocol/Resources"
import * as Skills from "@effect-mcp/protocol/Skills"
import type * as Middleware from "@effect-mcp/server/Middleware"
import type * as Skill from "@effect-mcp/server/Skill"
import * as Effect from "effect/Effect"
import type * as Policy from "../Policy.ts"
import * as Items from "./items.ts"

/**
 * The skills of the upstreams whose connection declares the Skills extension now, each with the upstream serving
 * it, in configuration order, the first of each URI. An upstream whose listing fails serves none until the next
 * change (it is logged).
 */
export const listed = (host: McpHost.McpHostShape): Effect.Effect<ReadonlyArray<Catalog.Entry<Skills.Skill>>> =>
  Effect.map(
    Effect.forEach(
      host.servers,
      (server) =>
        Effect.gen(function* () {
          // Only a connection that is there now: `client` would wait for one.
          const status = yield* Effect.result(host.status(server))
          if (status._tag === "Failure" || status.success._tag !== "Ready") return []
          if (Skills.capabilityOf(status.success.connection.serverCapabilities) === undefined) return []
          const client = yield* Effect.result(host.client(server))
          if (client._tag === "Failure") return []
          const skills = yield* Effect.result(ClientSkills.list(client.success))
          if (skills._tag === "Failure") {
            yield* Effect.logWarning(
              `gateway: the skills of ${JSON.stringify(server)} could not be listed`,
              skills.failure
            )
            return []
          }
          return skills.success.map((skill) => ({ name: skill.uri, server, item: skill }))
        }),
      { concurrency: "unbounded" }
    ),
    (all) => {
      const seen = new Set<string>()
      return all.flat().filter((e) => !seen.has(e.name) && seen.add(e.name) !== undefined)
    }
  )

/** The files of a skill's entry, its `SKILL.md` first: those its manifest lists, or the `SKILL.md` alone (`"dynamic"`). */
const filesOf = (skill: Skills.Skill): ReadonlyArray<{ readonly uri: string; readonly size?: number }> => {
  const files = skill.resources === "dynamic" ? [] : skill.resources.filter((r) => r.uri !== skill.uri)
  const manifest = skill.resources === "dynamic" ? undefined : skill.resources.find((r) => r.uri === skill.uri)
  return [manifest ?? { uri: skill.uri }, ...files]
}

/**
 * The catalog entry of each file of the skill `entry`, as a resource of its upstream: the `SKILL.md` as the
 * upstream lists it (else named and described by its frontmatter), the others named by their path in the skill.
 */
export const files = (
  catalog: Catalog.Catalog,
  entry: Catalog.Entry<Skills.Skill>
): ReadonlyArray<Catalog.Entry<Resources.Resource>> => {
  const skill = entry.item
  const root = skill.uri.slice(0, skill.uri.length - Skills.skillMd.length)
  return filesOf(skill).map((file) => {
    const listed =
      file.uri === skill.uri
        ? catalog.resources.find((r) => r.name === file.uri && r.server === entry.server)
        : undefined
    if (listed !== undefined) return listed
    const definition: Resources.Resource =
      file.uri === skill.uri
        ? {
            uri: file.uri,
            name: skill.frontmatter.name,
            description: skill.frontmatter.description,
            mimeType: Skills.skillMdMimeType,
            ...(file.size === undefined ? {} : { size: file.size })
          }
        : {
            uri: file.uri,
            name: file.uri.startsWith(root) ? file.uri.slice(root.length) : file.uri,
            ...(file.size === undefined ? {} : { size: file.size })
          }
    return { name: file.uri, server: entry.server, item: definition }
  })
}

/** The skill `entry` as the gateway's server registers it: the upstream's entry, each file read from the upstream. */
export const skill = (
  routes: Items.Routes,
  catalog: Catalog.Catalog,
  entry: Catalog.Entry<Skills.Skill>
): Skill.Skill => ({
  uri: entry.item.uri,
  entry: entry.item,
  resources: files(catalog, entry).map((file) => Items.resource(routes, file))
})

/** Whether `principal` may see the skill file `uri` (a skill: its `SKILL.md`); a URI of no skill is not the gateway's to hide. */
const visibleFile = (
  routes: Pick<Items.Routes, "skillFiles">,
  policy: Policy.Policy,
  principal: Transport.Authenticated | undefined,
  uri: string
): boolean => {
  const file = routes.skillFiles.get(uri)
  return file === undefined || policy(Items.itemOf("resource", uri, file), principal)
}

type Obj = { readonly [key: string]: unknown }

/**
 * The policy on the Skills extension's methods: `skills/list` keeps the skills the request's principal may see (a
 * page keeps its cursor, and may come out shorter), `skills/get` of a hidden skill is answered as for one the server
 * does not serve, and `resources/directory/read` keeps the files it may see and the folders holding one (a folder
 * holding none is answered as one that is not a directory).
 */
export const visibility =
  (routes: Pick<Items.Routes, "skillFiles">, policy: Policy.Policy): Middleware.Middleware =>
  (request, next) => {
    const principal = request.principal
    switch (request.method) {
      case Skills.listMethod:
        return Effect.map(next, (result) => {
          const skills = (result as Obj).skills
          if (!Array.isArray(skills)) return result
          return {
            ...(result as Obj),
            skills: skills.filter(
              (s: Obj) => typeof s.uri !== "string" || visibleFile(routes, policy, principal, s.uri)
            )
          }
        })
      case Skills.getMethod: {
        const uri = String((request.params as Obj | undefined)?.uri)
        return visibleFile(routes, policy, principal, uri)
          ? next
          : Effect.fail(
              new McpError.InvalidParams({
                message: `Unknown skill: ${Items.echo(uri)}`,
                data: { uri: Items.echo(uri) }
              })
            )
      }
      case Skills.directoryReadMethod: {
        const params = request.params as Obj | undefined
        const asked = String(params?.uri)
        // What the principal may see: its files, and the folders above them.
        const seen = [...routes.skillFiles.keys()].filter((uri) => visibleFile(routes, policy, principal, uri))
        const holds = (child: string) => seen.some((uri) => uri === child || uri.startsWith(`${child}/`))
        return Effect.flatMap(next, (result) => {
          const children = (result as Obj).resources
          if (!Array.isArray(children)) return Effect.succeed(result)
          const kept = children.filter((c: Obj) => typeof c.uri !== "string" || holds(c.uri))
          // The one page of a folder the principal sees nothing in: as the server answers a folder it does not serve.
          if (
            kept.length === 0 &&
            children.length > 0 &&
            params?.cursor === undefined &&
            !("nextCursor" in (result as Obj))
          ) {
            return Effect.fail(
              new McpError.InvalidParams({
                message: `Not a directory: ${Items.echo(asked.replace(/\/+$/, ""))}`,
                data: { uri: Items.echo(asked) }
              })
            )
          }
          return Effect.succeed({ ...(result as Obj), resources: kept })
        })
      }
      default:
        return next
    }
  }
