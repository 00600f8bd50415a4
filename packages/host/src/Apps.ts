/**
 * MCP Apps (SEP-1865) across a host's servers: which catalog tools render
 * with a UI resource, and that resource fetched from the tool's own server
 * (a `ui://` URI means something only to the server that named it). The
 * host's clients declare that they render apps when their options carry
 * `Apps.capabilities` of `@effect-mcp/client` (see docs/apps.md).
 */
import * as ClientApps from "@effect-mcp/client/Apps"
import type * as McpClient from "@effect-mcp/client/McpClient"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Effect from "effect/Effect"
import type * as Catalog from "./Catalog.ts"
import { HostError } from "./HostError.ts"
import type * as McpHost from "./McpHost.ts"

/** A catalog tool that renders with a UI resource. */
export interface AppTool {
  /** Its catalog name. */
  readonly name: string
  readonly server: string
  readonly tool: Tools.Tool
  /** The `ui://` resource, on `server`. */
  readonly resourceUri: string
}

const appToolOf = (entry: Catalog.Entry<Tools.Tool>): AppTool | undefined => {
  const resourceUri = ClientApps.resourceUriOf(entry.item)
  return resourceUri === undefined
    ? undefined
    : { name: entry.name, server: entry.server, tool: entry.item, resourceUri }
}

/** Every catalog tool that names a UI resource. */
export const tools = (host: McpHost.McpHostShape): Effect.Effect<ReadonlyArray<AppTool>> =>
  Effect.map(host.catalog, (catalog) => catalog.tools.flatMap((entry) => appToolOf(entry) ?? []))

/**
 * The UI resource of the catalog tool `name`, read from its server: fails
 * with `HostError` (`UnknownTool`) for a name the catalog lacks, and with
 * `AppError` (`NoUi`) for a tool that names no UI resource.
 *
 * @example
 * ```ts
 * import * as Apps from "@effect-mcp/host/Apps"
 * import * as McpHost from "@effect-mcp/host/McpHost"
 * import * as Effect from "effect/Effect"
 *
 * export const dashboard = Effect.gen(function* () {
 *   const host = yield* McpHost.McpHost
 *   const ui = yield* Apps.forTool(host, "weather__forecast")
 *   return ui.html // render it in a sandboxed frame with ui.ui?.csp
 * })
 * ```
 */
export const forTool = (
  host: McpHost.McpHostShape,
  name: string,
  options?: McpClient.RequestOptions
): Effect.Effect<ClientApps.UiResource, McpHost.CallError | ClientApps.AppError> =>
  Effect.gen(function* () {
    const catalog = yield* host.catalog
    const entry = catalog.tools.find((t) => t.name === name)
    if (entry === undefined) {
      return yield* new HostError({ reason: "UnknownTool", message: `no tool named ${name} in the catalog` })
    }
    const client = yield* host.client(entry.server)
    return yield* ClientApps.forTool(client, entry.item, options)
  })
