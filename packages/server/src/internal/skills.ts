/**
 * The Skills extension's methods (SEP-2640): `skills/list` (paginated like
 * every list), `skills/get` (one entry by the URI of its `SKILL.md`, -32602
 * for one the server does not serve) and `resources/directory/read` (the
 * direct children of a skill folder, subfolders as `inode/directory`
 * resources), all read live from the registered skills, with the 2026-07-28
 * cache hints of the server's list and read settings.
 */
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Skills from "@effect-mcp/protocol/Skills"
import type * as Session from "@effect-mcp/engine/Session"
import * as Effect from "effect/Effect"
import type * as Skill from "../Skill.ts"
import * as Page from "./page.ts"
import { echo, paramsOf } from "./params.ts"
import type { State } from "./server.ts"
import * as Shape from "./shape.ts"

const conservative = { ttlMs: 0, cacheScope: "private" } as const

type Finish = <A extends object>(info: Session.RequestInfo, result: A) => A

const invalid = (message: string, uri: string) => new McpError.InvalidParams({ message, data: { uri: echo(uri) } })

/** A folder's direct children, from every registered skill's files: files, and subfolders once each. */
const childrenOf = (skills: ReadonlyArray<Skill.Skill>, directory: string) => {
  const prefix = `${directory}/`
  const children = new Map<string, Skills.DirectoryResource>()
  let isFile = false
  for (const skill of skills) {
    for (const resource of skill.resources) {
      const uri = resource.uri
      if (uri === directory) isFile = true
      if (!uri.startsWith(prefix)) continue
      const rest = uri.slice(prefix.length)
      const slash = rest.indexOf("/")
      if (slash < 0) children.set(uri, resource.definition as Skills.DirectoryResource)
      else {
        const sub = `${prefix}${rest.slice(0, slash)}`
        if (!children.has(sub)) {
          children.set(sub, { uri: sub, name: rest.slice(0, slash), mimeType: Skills.directoryMimeType })
        }
      }
    }
  }
  return isFile || children.size === 0 ? undefined : [...children.values()]
}

/** The handlers of the extension's methods, for a server's sessions. */
export const make = (
  server: State,
  finish: Finish,
  pageSize: number
): ReadonlyArray<readonly [string, Session.Handler]> => {
  const listCache = server.options.cache?.list ?? conservative
  const readCache = server.options.cache?.read ?? conservative

  const list: Session.Handler = (params, info) =>
    Effect.suspend(() => {
      const cursor = paramsOf(params).cursor
      const page = Page.paginate(
        server.skills.sorted(),
        (e) => e.key,
        typeof cursor === "string" ? cursor : undefined,
        pageSize
      )
      if (page._tag === "Failure") return Effect.fail(page.failure)
      const skills = page.success.items.map((entry) => entry.item.entry)
      const result =
        page.success.nextCursor === undefined ? { skills } : { skills, nextCursor: page.success.nextCursor }
      return Effect.succeed(finish(info, Shape.withCacheHints(info.revision.version, result, listCache)))
    })

  const get: Session.Handler = (params, info) =>
    Effect.suspend(() => {
      const uri = String(paramsOf(params).uri)
      const found = server.skills.get(uri)
      if (found === undefined) return Effect.fail(invalid(`Unknown skill: ${echo(uri)}`, uri))
      return Effect.succeed(
        finish(info, Shape.withCacheHints(info.revision.version, { skill: found.item.entry }, readCache))
      )
    })

  const readDirectory: Session.Handler = (params, info) =>
    Effect.suspend(() => {
      const p = paramsOf(params)
      const uri = String(p.uri).replace(/\/+$/, "")
      const children = childrenOf(
        server.skills.sorted().map((e) => e.item),
        uri
      )
      if (children === undefined) return Effect.fail(invalid(`Not a directory: ${echo(uri)}`, String(p.uri)))
      const sorted = children.sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0))
      const page = Page.paginate(sorted, (r) => r.uri, typeof p.cursor === "string" ? p.cursor : undefined, pageSize)
      if (page._tag === "Failure") return Effect.fail(page.failure)
      const resources = page.success.items
      const result =
        page.success.nextCursor === undefined ? { resources } : { resources, nextCursor: page.success.nextCursor }
      return Effect.succeed(finish(info, Shape.withCacheHints(info.revision.version, result, readCache)))
    })

  return [
    [Skills.listMethod, list],
    [Skills.getMethod, get],
    [Skills.directoryReadMethod, readDirectory]
  ]
}
