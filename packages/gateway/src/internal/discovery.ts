/**
 * Discovery mode's three tools (see `Discovery`): `search_tools` over the
 * catalog index, `get_tool_details` and `call_tool`, each answering only
 * about the tools the caller's principal may see; and the view of a
 * `call_tool` the gateway's guards take, so that the limits and the audit
 * see it as the call of the tool it names.
 */
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import type * as Transport from "@effect-mcp/engine/Transport"
import type * as Catalog from "@effect-mcp/host/Catalog"
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Tools from "@effect-mcp/protocol/Tools"
import type * as Middleware from "@effect-mcp/server/Middleware"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as Effect from "effect/Effect"
import * as Base64Url from "effect/encoding/Base64Url"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Discovery from "../Discovery.ts"
import type * as CatalogIndex from "./catalogIndex.ts"
import * as Items from "./items.ts"

const unknownTool = (name: string) => new McpError.InvalidParams({ message: `Unknown tool: ${Items.echo(name)}` })

const visible = (
  routes: Items.Routes,
  entry: Catalog.Entry<Tools.Tool>,
  principal: Transport.Authenticated | undefined
) => routes.policy === undefined || routes.policy(Items.toolItem(entry), principal)

/** The tool of `name` when the caller may see it. */
const find = (routes: Items.Routes, current: CatalogIndex.Current, name: string) =>
  Effect.flatMap(CurrentRequest.CurrentRequest, (request) => {
    const entry = current.index.get(name)
    return entry === undefined || !visible(routes, entry, request.principal)
      ? Effect.fail(unknownTool(name))
      : Effect.succeed(entry)
  })

// A description's first line, short: the whole of it is what `get_tool_details` is for.
const summaryOf = (description: string | undefined): string | undefined => {
  const line = description?.trim().split("\n", 1)[0]?.trim()
  if (line === undefined || line.length === 0) return undefined
  return line.length <= 200 ? line : `${line.slice(0, 199)}…`
}

const matchOf = (entry: Catalog.Entry<Tools.Tool>): Discovery.Match => {
  const description = summaryOf(entry.item.description)
  return {
    name: entry.name,
    ...(entry.item.title === undefined ? {} : { title: entry.item.title }),
    ...(description === undefined ? {} : { description }),
    upstream: entry.server
  }
}

// A cursor is where the next page starts among what the caller sees, bound to its query.
const cursorOf = (offset: number, query: string) => Base64Url.encode(JSON.stringify([offset, query]))

const offsetOf = (cursor: string, query: string): Effect.Effect<number, McpError.InvalidParams> => {
  const text = Base64Url.decodeString(cursor)
  let parsed: unknown
  try {
    parsed = Result.isSuccess(text) ? JSON.parse(text.success) : undefined
  } catch {
    parsed = undefined
  }
  const [offset, of] = Array.isArray(parsed) && parsed.length === 2 ? parsed : []
  return typeof offset === "number" && Number.isSafeInteger(offset) && offset >= 0 && of === query
    ? Effect.succeed(offset)
    : Effect.fail(
        new McpError.InvalidParams({
          message: "Invalid params: invalid cursor (not one search_tools gave for this query)",
          data: { cursor: Items.echo(cursor) }
        })
      )
}

const Match = Schema.Struct({
  name: Schema.String,
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  upstream: Schema.String
})

const search = (routes: Items.Routes, current: CatalogIndex.Current) =>
  Tool.make(Discovery.toolNames.search, {
    title: "Search tools",
    description:
      "Searches the tools this server can call, by words of their names, titles, descriptions or servers, " +
      "best match first. Returns names and one-line descriptions, a page at a time (pass nextCursor back with " +
      "the same query for more); an empty query lists every tool. Get a tool's input schema with " +
      `${Discovery.toolNames.details}, then call it with ${Discovery.toolNames.call}.`,
    input: Schema.Struct({
      query: Schema.String.check(Schema.isMaxLength(1000)),
      cursor: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(4096)))
    }),
    output: Schema.Struct({ tools: Schema.Array(Match), nextCursor: Schema.optionalKey(Schema.String) }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    handler: ({ query, cursor }) =>
      Effect.gen(function* () {
        const request = yield* CurrentRequest.CurrentRequest
        const offset = cursor === undefined ? 0 : yield* offsetOf(cursor, query)
        const { index, pageSize } = current
        const tools: Array<Discovery.Match> = []
        let skipped = 0
        let more = false
        // Ranked first, then filtered: only as far as this page (and one more, to know whether another follows).
        for (const id of index.search(query)) {
          const entry = index.entries[id]!
          if (!visible(routes, entry, request.principal)) continue
          if (skipped < offset) {
            skipped++
            continue
          }
          if (tools.length === pageSize) {
            more = true
            break
          }
          tools.push(matchOf(entry))
        }
        return more ? { tools, nextCursor: cursorOf(offset + pageSize, query) } : { tools }
      })
  })

const details = (routes: Items.Routes, current: CatalogIndex.Current) =>
  Tool.make(Discovery.toolNames.details, {
    title: "Get tool details",
    description:
      `The whole definition of a tool ${Discovery.toolNames.search} found: its input schema (the arguments ` +
      `${Discovery.toolNames.call} takes for it), output schema, annotations and server.`,
    input: Schema.Struct({ name: Schema.String }),
    output: Schema.Struct({ upstream: Schema.String, tool: Schema.Record(Schema.String, Schema.Unknown) }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    handler: ({ name }) =>
      Effect.map(find(routes, current, name), (entry) => ({
        upstream: entry.server,
        tool: Items.toolItem(entry).definition as { readonly [key: string]: unknown }
      }))
  })

// What a failure the server does not turn into a protocol error says, as it says it for a direct call.
const messageOf = (error: unknown): string => {
  const e = (Predicate.isObject(error) ? error : {}) as { readonly message?: unknown; readonly _tag?: unknown }
  const message = typeof e.message === "string" && e.message.length > 0 ? e.message : undefined
  const tag = typeof e._tag === "string" ? e._tag : undefined
  if (message !== undefined) return tag === undefined ? message : `${tag}: ${message}`
  return tag ?? String(error)
}

const call = (routes: Items.Routes, current: CatalogIndex.Current) =>
  Tool.make(Discovery.toolNames.call, {
    title: "Call a tool",
    description:
      `Calls a tool ${Discovery.toolNames.search} found, by its name, with arguments that fit its input schema ` +
      `(see ${Discovery.toolNames.details}); answers what the tool answers.`,
    input: Schema.Struct({
      name: Schema.String,
      arguments: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
    }),
    handler: ({ name, arguments: args }) =>
      Effect.gen(function* () {
        const entry = current.index.get(name)
        // The tool's own handler applies the policy (a hidden tool is unknown), the circuit and the routing.
        if (entry === undefined) return yield* unknownTool(name)
        const result = yield* Effect.catch(Items.tool(routes, entry).handler(args ?? {}), (error) =>
          // Protocol errors (the policy's, the circuit's, the upstream's) stay errors, as for a direct call.
          McpError.isMcpError(error) || error instanceof ServerRequest.ClientRequestError
            ? Effect.fail(error)
            : Effect.succeed({
                content: [{ type: "text" as const, text: `Tool ${name} failed: ${messageOf(error)}` }],
                isError: true
              })
        )
        return result as Tools.CallToolResult
      })
  })

/** Whether `name` is one of discovery's own tools (which a catalog tool of the same name cannot replace). */
export const isDiscoveryTool = (name: string): boolean =>
  name === Discovery.toolNames.search || name === Discovery.toolNames.details || name === Discovery.toolNames.call

/** The three tools, reading `current` (which the mirror keeps in step with the catalog). */
export const tools = (routes: Items.Routes, current: CatalogIndex.Current): ReadonlyArray<Tool.Tool> => [
  search(routes, current),
  details(routes, current),
  call(routes, current)
]

/**
 * `middleware` as it applies in discovery mode: a `call_tool` is seen as the
 * `tools/call` of the tool it names (target and arguments), and searching or
 * describing, which reach no upstream, pass it by.
 */
export const asDirect =
  (middleware: Middleware.Middleware): Middleware.Middleware =>
  (request, next) => {
    if (request.method !== "tools/call") return middleware(request, next)
    switch (request.target) {
      case Discovery.toolNames.search:
      case Discovery.toolNames.details:
        return next
      case Discovery.toolNames.call: {
        const params = (Predicate.isObject(request.params) ? request.params : {}) as { readonly arguments?: unknown }
        const outer = (Predicate.isObject(params.arguments) ? params.arguments : {}) as {
          readonly name?: unknown
          readonly arguments?: unknown
        }
        const name = typeof outer.name === "string" ? outer.name : undefined
        return middleware({ ...request, target: name, params: { ...params, name, arguments: outer.arguments } }, next)
      }
      default:
        return middleware(request, next)
    }
  }
