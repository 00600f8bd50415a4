/**
 * The host's aggregated tools as an `effect/ai` Toolkit, so that
 * `LanguageModel.generateText({ prompt, toolkit })` drives MCP tools.
 *
 * Each catalog tool becomes a dynamic tool under its catalog name, with the
 * server's description and its `inputSchema` as the JSON Schema of its
 * parameters (validated by the server, not here: the server's answer is
 * what counts, and a model is told about bad arguments like any failure).
 * Its handler routes through `McpHost.callTool`. The model gets the
 * `structuredContent` of a result when it has one, else its text blocks
 * joined; a result with `isError`, and a call that fails (a protocol error
 * such as invalid arguments, a name that left the catalog, a timeout), is
 * a failure result the model sees (`ToolFailure`), not a failure of
 * `generateText`. Interruption and defects are not turned into results.
 *
 * The toolkit follows the catalog: `toolkit()` is an Effect that
 * `generateText` runs on each call, and it reads the catalog as it is then
 * (a tool listed after a `list_changed` is offered from the next call on). It
 * is rebuilt only when the catalog changed, so a model provider's caches
 * keyed by tool identity keep working between changes. `snapshot()` gives
 * the Toolkit and its handlers of one moment, to merge with other toolkits.
 */
import type * as ContentBlock from "@effect-mcp/protocol/Content"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as JsonSchema from "effect/JsonSchema"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Catalog from "./Catalog.ts"
import * as McpHost from "./McpHost.ts"

/**
 * A failed MCP tool call as the model sees it (a tool-result with
 * `isFailure`): `reason` is `ToolError` when the tool ran and reported an
 * error (`isError`), else the tag of the error the call failed with
 * (`InvalidParams`, `HostError`, `RequestTimeout`, ...).
 */
export class ToolFailure extends Schema.TaggedError<ToolFailure>()("ToolFailure", {
  /** The tool's catalog name. */
  tool: Schema.String,
  reason: Schema.String,
  /** The result's text, or the error's message. */
  message: Schema.String,
  /** The `structuredContent` of an `isError` result, when it had one. */
  structuredContent: Schema.optional(Schema.Unknown)
}) {}

/** A catalog tool as an `effect/ai` tool: JSON Schema parameters, any JSON value back, failures returned to the model. */
export type McpTool = Tool.Dynamic<
  string,
  {
    readonly parameters: JsonSchema.JsonSchema
    readonly success: typeof Schema.Unknown
    readonly failure: typeof ToolFailure
    readonly failureMode: "return"
  }
>

/** The tools of the toolkit, by catalog name. */
export type McpTools = { readonly [name: string]: McpTool }

/** Which catalog tools the model is offered, and how they are called. */
export interface Options {
  /** Keeps the catalog tools it returns true for (default: every tool the model may see, `Catalog.forModel`). */
  readonly filter?: ((entry: Catalog.Entry<Tools.Tool>) => boolean) | undefined
  /** Options of every call (its `timeout`, ...). */
  readonly call?: McpHost.CallOptions | undefined
  /**
   * Asks for the calls' progress and reports each update (`{ progress,
   * total, message }`) as a preliminary result, which `streamText` shows as
   * a tool-result with `preliminary: true` (the model gets the final one
   * only). Default false.
   */
  readonly progress?: boolean | undefined
}

/** The Toolkit of one moment of the catalog and the handlers of its tools, to merge with other toolkits. */
export interface Snapshot {
  readonly toolkit: Toolkit.Toolkit<McpTools>
  /** Provide these where the toolkit (or a merge of it) is yielded. */
  readonly handlers: Context.Context<Tool.HandlersFor<McpTools>>
}

const describeBlock = (block: ContentBlock.ContentBlock): string => {
  switch (block.type) {
    case "text":
      return block.text
    case "resource":
      return "text" in block.resource ? block.resource.text : `[resource ${block.resource.uri}]`
    case "resource_link":
      return `[resource ${block.uri}]`
    case "image":
    case "audio":
      return `[${block.type} ${block.mimeType}]`
    default:
      return `[${(block as { readonly type: string }).type}]`
  }
}

/** The text of a result: its text blocks (and text resources) joined by newlines; other blocks named in brackets. */
export const textOf = (result: Tools.CallToolResult): string => result.content.map(describeBlock).join("\n")

/**
 * What the model gets for a tool result: its `structuredContent` when it
 * has one, else its text; an `isError` result fails with `ToolFailure`.
 */
export const modelResult = (tool: string, result: Tools.CallToolResult): Effect.Effect<unknown, ToolFailure> => {
  if (result.isError === true) {
    return Effect.fail(
      new ToolFailure({
        tool,
        reason: "ToolError",
        message: textOf(result),
        ...(result.structuredContent === undefined ? {} : { structuredContent: result.structuredContent })
      })
    )
  }
  return Effect.succeed(result.structuredContent ?? textOf(result))
}

const annotated = (tool: McpTool, definition: Tools.Tool): McpTool => {
  let out = tool
  const hints = definition.annotations
  if (definition.title !== undefined) out = out.annotate(Tool.Title, definition.title) as McpTool
  if (hints?.readOnlyHint !== undefined) out = out.annotate(Tool.Readonly, hints.readOnlyHint) as McpTool
  if (hints?.destructiveHint !== undefined) out = out.annotate(Tool.Destructive, hints.destructiveHint) as McpTool
  if (hints?.idempotentHint !== undefined) out = out.annotate(Tool.Idempotent, hints.idempotentHint) as McpTool
  if (hints?.openWorldHint !== undefined) out = out.annotate(Tool.OpenWorld, hints.openWorldHint) as McpTool
  return out
}

/** The dynamic tool of a catalog entry (the `$schema` keyword is dropped: model providers take the bare schema). */
const toolOf = (entry: Catalog.Entry<Tools.Tool>): McpTool => {
  const { $schema: _, ...parameters } = entry.item.inputSchema as { readonly [key: string]: unknown }
  const description = entry.item.description ?? entry.item.title
  const tool = Tool.dynamic(entry.name, {
    ...(description === undefined ? {} : { description }),
    parameters: parameters as JsonSchema.JsonSchema,
    success: Schema.Unknown,
    failure: ToolFailure,
    failureMode: "return"
  }) as McpTool
  return annotated(tool, entry.item)
}

const buildSnapshot = (
  host: McpHost.McpHostShape,
  catalog: Catalog.Catalog,
  options: Options
): Effect.Effect<Snapshot> => {
  const entries = catalog.tools.filter(options.filter ?? Catalog.forModel)
  const toolkit = Toolkit.make(...entries.map(toolOf)) as unknown as Toolkit.Toolkit<McpTools>
  const handlers: {
    [name: string]: (
      params: unknown,
      context: { readonly preliminary: (value: unknown) => Effect.Effect<void> }
    ) => Effect.Effect<unknown, ToolFailure>
  } = {}
  for (const entry of entries) {
    const name = entry.name
    const failure = (error: McpHost.CallError) =>
      Effect.fail(new ToolFailure({ tool: name, reason: error._tag, message: error.message }))
    handlers[name] = (params, context) => {
      const args = params as { readonly [key: string]: unknown } | undefined
      if (options.progress !== true) {
        return host.callTool(name, args, options.call).pipe(
          Effect.catch(failure),
          Effect.flatMap((result) => modelResult(name, result))
        )
      }
      let result: Tools.CallToolResult | undefined
      return Stream.runForEach(host.callToolWithProgress(name, args, options.call), (event) => {
        if (event._tag === "Progress") return context.preliminary(event.update)
        result = event.value
        return Effect.void
      }).pipe(
        Effect.catch(failure),
        // The Stream of a call always ends with its result.
        Effect.flatMap(() => (result === undefined ? Effect.die("no result") : modelResult(name, result)))
      )
    }
  }
  return Effect.map(toolkit.toHandlers(handlers as unknown as Toolkit.HandlersFrom<McpTools>), (context) => ({
    toolkit,
    handlers: context
  }))
}

/** The Toolkit of the catalog as it is now, and its handlers (calls route through the host). */
export const snapshot = (options: Options = {}): Effect.Effect<Snapshot, never, McpHost.McpHost> =>
  Effect.gen(function* () {
    const host = yield* McpHost.McpHost
    return yield* buildSnapshot(host, yield* host.catalog, options)
  })

/**
 * The host's tools as a toolkit with its handlers, for `generateText`'s
 * `toolkit` option. Each run reads the current catalog (rebuilt only when it
 * changed), so passing this Effect itself follows the catalog.
 *
 * @example
 * ```ts
 * import * as AiToolkit from "@effect-mcp/host/AiToolkit"
 * import * as LanguageModel from "effect/ai/LanguageModel"
 *
 * export const answer = (question: string) =>
 *   LanguageModel.generateText({ prompt: question, toolkit: AiToolkit.toolkit() })
 * ```
 */
export const toolkit = (
  options: Options = {}
): Effect.Effect<Toolkit.WithHandler<McpTools>, never, McpHost.McpHost> => {
  // The catalog object is replaced on every change, so it identifies the toolkit built from it.
  let last: { readonly catalog: Catalog.Catalog; readonly toolkit: Toolkit.WithHandler<McpTools> } | undefined
  return Effect.gen(function* () {
    const host = yield* McpHost.McpHost
    const catalog = yield* host.catalog
    if (last !== undefined && last.catalog === catalog) return last.toolkit
    const { handlers, toolkit } = yield* buildSnapshot(host, catalog, options)
    const withHandler = yield* Effect.provideContext(toolkit, handlers)
    last = { catalog, toolkit: withHandler }
    return withHandler
  })
}
