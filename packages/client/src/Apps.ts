/**
 * MCP Apps (SEP-1865, `io.modelcontextprotocol/ui`) for hosts: declare that
 * the client renders apps (`capabilities`), find the UI resource a tool
 * renders with (`_meta.ui.resourceUri`, or the older flat key), and fetch
 * it: the HTML document, served as `text/html;profile=mcp-app`, with its
 * `_meta.ui` (CSP domains, sandbox permissions, origin, border) decoded.
 * Rendering it (a sandboxed iframe and the app bridge) stays with the host.
 */
import * as Apps from "@effect-mcp/protocol/Apps"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Base64 from "effect/encoding/Base64"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as McpClient from "./McpClient.ts"

/** What to merge into a client's `capabilities` to say it renders MCP Apps. */
export const capabilities = Apps.clientCapabilities

/** The `ui://` resource a tool renders with, if any. */
export const resourceUriOf: (tool: Tools.Tool) => string | undefined = Apps.resourceUriOf

/** Who may call a tool: the model, the app, or both (when it does not say). */
export const visibilityOf: (tool: Tools.Tool) => ReadonlyArray<Apps.Visibility> = Apps.visibilityOf

/** Whether the model may call the tool (an app-only tool is hidden from the model). */
export const visibleToModel = (tool: Tools.Tool): boolean => visibilityOf(tool).includes("model")

/** A UI resource could not be had: the tool names none, or what the server returned is not an MCP App. */
export class AppError extends Schema.TaggedError<AppError>()("AppError", {
  /**
   * `NoUi`: the tool names no `ui://` resource; `NotAnApp`: the contents read
   * are not `text/html;profile=mcp-app` HTML; `InvalidMeta`: its `_meta.ui` is malformed.
   */
  reason: Schema.Literals(["NoUi", "NotAnApp", "InvalidMeta"]),
  uri: Schema.optional(Schema.String),
  message: Schema.String
}) {}

/** A fetched MCP App: its URI, the HTML document and its `_meta.ui`. */
export interface UiResource {
  readonly uri: string
  readonly mimeType: string
  readonly html: string
  /** The contents' `_meta.ui` (which hosts prefer to the listing's), if any. */
  readonly ui: Apps.ResourceMeta | undefined
  /** The contents' whole `_meta`. */
  readonly _meta: { readonly [key: string]: unknown } | undefined
}

const decodeMeta = Schema.decodeUnknownResult(Apps.ResourceMeta)

// The package builds without DOM or Node types: the platform's decoder, declared.
declare const TextDecoder: new () => { decode(input: Uint8Array): string }

/** Reads a UI resource by its `ui://` URI and checks it is an MCP App. */
export const read = Effect.fnUntraced(function* (
  client: McpClient.McpClientShape,
  uri: string,
  options?: McpClient.RequestOptions
): Effect.fn.Return<UiResource, McpClient.CallError | AppError> {
  if (!uri.startsWith(Apps.scheme)) {
    return yield* new AppError({ reason: "NotAnApp", uri, message: `${uri} is not a ${Apps.scheme} resource` })
  }
  const result = yield* client.readResource(uri, options)
  const contents = result.contents.find((c) => c.mimeType === Apps.mimeType)
  if (contents === undefined) {
    return yield* new AppError({
      reason: "NotAnApp",
      uri,
      message: `${uri} has no ${Apps.mimeType} contents (got ${result.contents.map((c) => c.mimeType).join(", ")})`
    })
  }
  let html: string
  if ("text" in contents && typeof contents.text === "string") html = contents.text
  else {
    const bytes = Base64.decode(String((contents as { readonly blob?: unknown }).blob ?? ""))
    if (Result.isFailure(bytes)) {
      return yield* new AppError({ reason: "NotAnApp", uri, message: `${uri}: the blob is not valid base64` })
    }
    html = new TextDecoder().decode(bytes.success)
  }
  const meta = Predicate.isObject(contents._meta) ? (contents._meta as { readonly [key: string]: unknown }) : undefined
  let ui: Apps.ResourceMeta | undefined
  if (meta?.ui !== undefined) {
    const decoded = decodeMeta(meta.ui)
    if (Result.isFailure(decoded)) {
      return yield* new AppError({
        reason: "InvalidMeta",
        uri,
        message: `${uri}: _meta.ui: ${decoded.failure.message}`
      })
    }
    ui = decoded.success
  }
  return { uri: contents.uri, mimeType: Apps.mimeType, html, ui, _meta: meta }
})

/**
 * The UI resource of a tool, fetched: fails with `AppError` (`NoUi`) when
 * the tool names none.
 *
 * @example
 * ```ts
 * import * as Apps from "@effect-mcp/client/Apps"
 * import * as McpClient from "@effect-mcp/client/McpClient"
 * import * as Effect from "effect/Effect"
 * import * as Stream from "effect/Stream"
 *
 * export const firstApp = Effect.gen(function* () {
 *   const client = yield* McpClient.McpClient
 *   const tools = yield* Stream.runCollect(client.tools)
 *   const tool = tools.find((t) => Apps.resourceUriOf(t) !== undefined)
 *   return tool === undefined ? undefined : yield* Apps.forTool(client, tool)
 * })
 * ```
 */
export const forTool = (
  client: McpClient.McpClientShape,
  tool: Tools.Tool,
  options?: McpClient.RequestOptions
): Effect.Effect<UiResource, McpClient.CallError | AppError> => {
  const uri = resourceUriOf(tool)
  return uri === undefined
    ? Effect.fail(new AppError({ reason: "NoUi", message: `tool ${tool.name} names no ${Apps.scheme} resource` }))
    : read(client, uri, options)
}
