/**
 * Discovery mode: a gateway with thousands of upstream tools lists three
 * tools of its own instead of its catalog, in the shape of the progressive
 * discovery pattern of MCP's "Client Best Practices" (catalog, inspect,
 * execute), served by the gateway so that any client gets it:
 *
 * - `search_tools` (`{ query, cursor? }`): the tools whose name, title,
 *   description or upstream match the query, best first, a page at a time:
 *   each one's name, title, upstream and the first line of its description.
 * - `get_tool_details` (`{ name }`): one tool's whole definition as
 *   `tools/list` would list it (`inputSchema`, `outputSchema`,
 *   `annotations`...), with its upstream.
 * - `call_tool` (`{ name, arguments }`): calls the tool, answering its result
 *   as a direct `tools/call` would.
 *
 * A client that knows a tool's catalog name may also call it directly
 * (`tools/call` of that name): the catalog's tools are served unlisted.
 *
 * The policy, the limits, the circuit breaker and the audit apply to the tool
 * a `call_tool` names exactly as to a direct call of it (the limits count it
 * under its own name, the audit records it); a tool hidden from the caller is
 * neither found, described nor callable, by `call_tool` or directly
 * (`-32602 Unknown tool: <name>`, as for one that does not exist). Searching and describing are answered by the
 * gateway alone: no upstream, limit or audit record is involved.
 *
 * **Ranking.** A query is split into words (lowercased runs of letters and
 * digits, camelCase split). Each word scores a tool once, at the best place it
 * is found: equal to a word of its name 6 (the start of one 3), of its title 4
 * (2), of its description 2 (1), of its upstream's name 2 (1). A tool's score
 * is the sum over the query's words; a query equal to a tool's whole name
 * (case aside) puts it first. Tools that score nothing are not found; ties go
 * by name (code point order). A blank query lists every tool by name. The
 * index behind it is built when the catalog's tools change, not per query.
 *
 * Prompts and resources are listed as without discovery.
 */

/** The names of the gateway's own tools in discovery mode. */
export const toolNames = {
  search: "search_tools",
  details: "get_tool_details",
  call: "call_tool"
} as const

/** What `Gateway.Options.discovery` takes. */
export interface Options {
  /** Tools per `search_tools` page. Default 20; at most 100. */
  readonly pageSize?: number | undefined
}

/** The default page size. */
export const defaultPageSize = 20

/** The largest page size: a page is meant for a model's context. */
export const maxPageSize = 100

/** The page size of `options`, within 1 and `maxPageSize`. */
export const pageSizeOf = (options: Options | true | undefined): number => {
  const size = options === undefined || options === true ? undefined : options.pageSize
  return size === undefined ? defaultPageSize : Math.min(maxPageSize, Math.max(1, Math.floor(size)))
}

/** One tool `search_tools` found. */
export interface Match {
  /** Its catalog name (what `get_tool_details` and `call_tool` take). */
  readonly name: string
  readonly title?: string
  /** The first line of its description, at most 200 characters. */
  readonly description?: string
  /** The upstream that serves it. */
  readonly upstream: string
}

/** A page of `search_tools`. */
export interface Page {
  readonly tools: ReadonlyArray<Match>
  /** Pass it back with the same query for the next page; absent on the last. */
  readonly nextCursor?: string
}
