/**
 * MCP Apps (SEP-1865, `io.modelcontextprotocol/ui`): interactive HTML
 * interfaces a server offers with its tools. The interface is a resource
 * under the `ui://` scheme whose `mimeType` is `text/html;profile=mcp-app`;
 * a tool names it in `_meta.ui.resourceUri` (older hosts read the flat key
 * `_meta["ui/resourceUri"]`, which servers also set), together with who may
 * call the tool (`visibility`: the model, the app, or both). The resource's
 * `_meta.ui` (on its listing, or on the read contents, which win) carries the
 * Content Security Policy domains, sandbox permissions, a dedicated origin and
 * a border preference. A host that renders apps declares the extension in
 * its client capabilities with the MIME types it renders.
 *
 * The shapes follow `@modelcontextprotocol/ext-apps` 2.0.4
 * (`McpUiToolMeta`, `McpUiResourceMeta`, `McpUiClientCapabilities`).
 */
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

/** The identifier under `capabilities.extensions`. */
export const extensionId = "io.modelcontextprotocol/ui"
/** The MIME type of an MCP App's HTML resource. */
export const mimeType = "text/html;profile=mcp-app"
/** The URI scheme of UI resources. */
export const scheme = "ui://"
/** The flat `_meta` key older hosts read for a tool's UI resource (the nested `_meta.ui.resourceUri` is current). */
export const resourceUriMetaKey = "ui/resourceUri"

/** Who may call a tool: the model (the agent), the app (from its own server only). Default: both. */
export const Visibility = Schema.Literals(["model", "app"]).annotate({ identifier: "McpUiToolVisibility" })
export type Visibility = typeof Visibility.Type

/** A tool's `_meta.ui`: the UI resource it renders with, and who may call it. */
export const ToolMeta = Schema.Struct({
  resourceUri: Schema.optionalKey(Schema.String),
  visibility: Schema.optionalKey(Schema.Array(Visibility))
}).annotate({ identifier: "McpUiToolMeta" })
export type ToolMeta = typeof ToolMeta.Type

/** The origins an app may reach, per CSP directive; empty or absent means none. */
export const Csp = Schema.Struct({
  /** `connect-src`: fetch, XHR, WebSocket. */
  connectDomains: Schema.optionalKey(Schema.Array(Schema.String)),
  /** `img-src`, `script-src`, `style-src`, `font-src`, `media-src`. */
  resourceDomains: Schema.optionalKey(Schema.Array(Schema.String)),
  /** `frame-src`: nested iframes. */
  frameDomains: Schema.optionalKey(Schema.Array(Schema.String)),
  /** `base-uri`. */
  baseUriDomains: Schema.optionalKey(Schema.Array(Schema.String))
}).annotate({ identifier: "McpUiResourceCsp" })
export type Csp = typeof Csp.Type

const Permission = Schema.Struct({})

/** Sandbox permissions an app asks for. */
export const Permissions = Schema.Struct({
  camera: Schema.optionalKey(Permission),
  microphone: Schema.optionalKey(Permission),
  geolocation: Schema.optionalKey(Permission),
  clipboardWrite: Schema.optionalKey(Permission)
}).annotate({ identifier: "McpUiResourcePermissions" })
export type Permissions = typeof Permissions.Type

/** A UI resource's `_meta.ui`: security policy, permissions, origin and rendering preference. */
export const ResourceMeta = Schema.Struct({
  csp: Schema.optionalKey(Csp),
  permissions: Schema.optionalKey(Permissions),
  /** A dedicated origin for the app (the host decides its form). */
  domain: Schema.optionalKey(Schema.String),
  /** Whether the host should draw a border around the app. */
  prefersBorder: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "McpUiResourceMeta" })
export type ResourceMeta = typeof ResourceMeta.Type

/** What a host declares at `capabilities.extensions["io.modelcontextprotocol/ui"]`. */
export const ClientCapabilities = Schema.Struct({
  /** The UI MIME types it renders (`text/html;profile=mcp-app` for MCP Apps). */
  mimeTypes: Schema.optionalKey(Schema.Array(Schema.String))
}).annotate({ identifier: "McpUiClientCapabilities" })
export type ClientCapabilities = typeof ClientCapabilities.Type

/** The capabilities entry of a host that renders MCP Apps (merge it into a client's `capabilities`). */
export const clientCapabilities: { readonly extensions: { readonly [extensionId]: ClientCapabilities } } = {
  extensions: { [extensionId]: { mimeTypes: [mimeType] } }
}

type Obj = { readonly [key: string]: unknown }

/** The MCP Apps declaration in a client's capabilities; undefined when absent. */
export const clientCapabilityOf = (capabilities: unknown): ClientCapabilities | undefined => {
  if (!Predicate.isObject(capabilities)) return undefined
  const extensions = (capabilities as Obj).extensions
  if (!Predicate.isObject(extensions)) return undefined
  const value = (extensions as Obj)[extensionId]
  return Predicate.isObject(value) ? (value as ClientCapabilities) : undefined
}

/** Whether a client with `capabilities` renders MCP Apps (declares the extension with their MIME type). */
export const rendersApps = (capabilities: unknown): boolean =>
  clientCapabilityOf(capabilities)?.mimeTypes?.includes(mimeType) === true

/** A tool's `_meta.ui`, when it has one that is an object. */
export const toolMetaOf = (tool: { readonly _meta?: unknown }): ToolMeta | undefined => {
  const meta = tool._meta
  if (!Predicate.isObject(meta)) return undefined
  const ui = (meta as Obj).ui
  return Predicate.isObject(ui) ? (ui as ToolMeta) : undefined
}

/**
 * The UI resource a tool renders with: `_meta.ui.resourceUri`, else the
 * flat `_meta["ui/resourceUri"]`; only a `ui://` URI counts.
 */
export const resourceUriOf = (tool: { readonly _meta?: unknown }): string | undefined => {
  const nested = toolMetaOf(tool)?.resourceUri
  const flat = Predicate.isObject(tool._meta) ? (tool._meta as Obj)[resourceUriMetaKey] : undefined
  const uri = typeof nested === "string" ? nested : typeof flat === "string" ? flat : undefined
  return uri?.startsWith(scheme) ? uri : undefined
}

/** Who may call a tool (`["model", "app"]` when it does not say). */
export const visibilityOf = (tool: { readonly _meta?: unknown }): ReadonlyArray<Visibility> =>
  toolMetaOf(tool)?.visibility ?? ["model", "app"]
