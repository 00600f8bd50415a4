/**
 * MCP Apps (SEP-1865, `io.modelcontextprotocol/ui`) on the server: a UI
 * resource is an HTML document under `ui://` served with the MCP Apps MIME
 * type (`text/html;profile=mcp-app`), its `_meta.ui` (CSP domains, sandbox
 * permissions, origin, border) on both its listing and its read contents;
 * an app tool is an ordinary tool whose `_meta.ui.resourceUri` names it
 * (with the flat `_meta["ui/resourceUri"]` older hosts read) and says who
 * may call it (`visibility`).
 *
 * Both are plain `Resource`s and `Tool`s: register them with
 * `Resource.layer` and `Tool.layer`. Hosts that render apps declare the
 * extension in their capabilities; `rendersApps` tells a handler whether the
 * client asking does (so a tool can answer with text alone otherwise).
 */
import * as Apps from "@effect-mcp/protocol/Apps"
import * as Effect from "effect/Effect"
import * as Resource from "./Resource.ts"
import { ServerRequest } from "./ServerRequest.ts"
import * as Tool from "./Tool.ts"

/** What `resource` takes: a `ui://` URI, metadata, the HTML (or the Effect producing it), and `_meta.ui`. */
export interface ResourceOptions<E, R> {
  /** A `ui://` URI. */
  readonly uri: string
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  /** The HTML document: a string, or an Effect run on every read. */
  readonly html: string | Effect.Effect<string, E, R>
  /** Origins the app may reach (none by default). */
  readonly csp?: Apps.Csp | undefined
  /** Sandbox permissions it asks for. */
  readonly permissions?: Apps.Permissions | undefined
  /** A dedicated origin for the app. */
  readonly domain?: string | undefined
  /** Whether the host should draw a border around it. */
  readonly prefersBorder?: boolean | undefined
  /** Other `_meta` entries of the resource. */
  readonly _meta?: { readonly [key: string]: unknown } | undefined
  readonly cache?: Resource.Cache | undefined
}

/** The `_meta.ui` of a UI resource, from the options that set it (undefined when none do). */
const uiMetaOf = (options: ResourceOptions<unknown, unknown>): Apps.ResourceMeta | undefined => {
  const ui: { -readonly [K in keyof Apps.ResourceMeta]: Apps.ResourceMeta[K] } = {}
  if (options.csp !== undefined) ui.csp = options.csp
  if (options.permissions !== undefined) ui.permissions = options.permissions
  if (options.domain !== undefined) ui.domain = options.domain
  if (options.prefersBorder !== undefined) ui.prefersBorder = options.prefersBorder
  return Object.keys(ui).length === 0 ? undefined : ui
}

/**
 * A UI resource: an HTML document served as `text/html;profile=mcp-app`
 * (a URI outside `ui://` is a defect: hosts ignore it).
 *
 * @example
 * ```ts
 * import * as App from "@effect-mcp/server/App"
 * import * as Resource from "@effect-mcp/server/Resource"
 *
 * export const Dashboard = App.resource({
 *   uri: "ui://weather/dashboard",
 *   name: "Weather dashboard",
 *   html: "<!doctype html><html><body><div id=app></div></body></html>",
 *   csp: { connectDomains: ["https://api.weather.example"] }
 * })
 *
 * export const Resources = Resource.layer(Dashboard)
 * ```
 */
export const resource = <E = never, R = never>(
  options: ResourceOptions<E, R>
): Resource.Resource<Exclude<R, Tool.Provided>> => {
  if (!options.uri.startsWith(Apps.scheme)) {
    throw new Error(`an MCP App resource needs a ${Apps.scheme} URI, not ${options.uri}`)
  }
  const ui = uiMetaOf(options as ResourceOptions<unknown, unknown>)
  const meta = ui === undefined ? options._meta : { ...options._meta, ui }
  const html: Effect.Effect<string, E, R> =
    typeof options.html === "string" ? Effect.succeed(options.html) : options.html
  const uri = options.uri
  return Resource.make({
    uri,
    name: options.name,
    title: options.title,
    description: options.description,
    mimeType: Apps.mimeType,
    _meta: meta,
    cache: options.cache,
    // The read contents carry `_meta.ui` too: hosts prefer it to the listing's.
    read: Effect.map(html, (text) => ({
      uri,
      mimeType: Apps.mimeType,
      text,
      ...(meta === undefined ? {} : { _meta: meta })
    }))
  })
}

/** What `tool` adds to `Tool.make`'s options: the UI resource it renders with, and who may call it. */
export interface ToolOptions {
  /** The UI resource (or its `ui://` URI). */
  readonly ui: Resource.Resource<unknown> | string
  /** Who may call the tool: the model, the app, or both (the default). */
  readonly visibility?: ReadonlyArray<Apps.Visibility> | undefined
}

/** The `_meta` of an app tool: `ui.resourceUri` (and `visibility`) and the flat key older hosts read. */
export const toolMeta = (
  options: ToolOptions,
  meta?: { readonly [key: string]: unknown } | undefined
): { readonly [key: string]: unknown } => {
  const uri = typeof options.ui === "string" ? options.ui : options.ui.uri
  const ui: Apps.ToolMeta =
    options.visibility === undefined ? { resourceUri: uri } : { resourceUri: uri, visibility: options.visibility }
  return { ...meta, ui, [Apps.resourceUriMetaKey]: uri }
}

/**
 * A tool that renders with a UI resource: `Tool.make` with `_meta.ui` set.
 *
 * @example
 * ```ts
 * import * as App from "@effect-mcp/server/App"
 * import * as Effect from "effect/Effect"
 * import * as Schema from "effect/Schema"
 *
 * export const Forecast = App.tool("forecast", {
 *   ui: "ui://weather/dashboard",
 *   description: "The week's forecast, with an interactive dashboard",
 *   input: Schema.Struct({ city: Schema.String }),
 *   handler: ({ city }) => Effect.succeed(`Sunny all week in ${city}`)
 * })
 * ```
 */
export const tool = <I extends Tool.Input, E, R, O extends Tool.AnySchema | undefined = undefined>(
  name: string,
  options: Tool.Options<I, O, E, R> & ToolOptions
): Tool.Tool<Exclude<R, Tool.Provided>> => {
  const { ui, visibility, ...rest } = options
  return Tool.make(name, { ...rest, _meta: toolMeta({ ui, visibility }, rest._meta) } as Tool.Options<I, O, E, R>)
}

/**
 * Whether the client of the request being served renders MCP Apps (it
 * declared `io.modelcontextprotocol/ui` with the MCP Apps MIME type), on any
 * revision: under `capabilities.extensions` in `initialize` up to 2025-11-25,
 * in the request's client capabilities on 2026-07-28.
 */
export const rendersApps: Effect.Effect<boolean, never, ServerRequest> = ServerRequest.use((request) =>
  Effect.succeed(Apps.rendersApps(request.clientCapabilities))
)
