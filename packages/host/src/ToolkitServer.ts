/**
 * The reverse of `AiToolkit`: an `effect/ai` Toolkit, with its handler
 * Layer, served as MCP tools by an `McpServer`. It lives here rather than in
 * `@effect-mcp/server` so that a server that does not use it never loads
 * `effect/ai`.
 *
 * Each tool the application handles (provider-defined tools run at the model
 * provider and are left out) becomes an MCP tool of the same name:
 *
 * - its `inputSchema` is the parameters Schema's JSON Schema (2020-12, as
 *   `Tool.make` of `@effect-mcp/server` makes it; a dynamic tool's JSON
 *   Schema as given), its description and `Title`, `Readonly`,
 *   `Destructive`, `Idempotent` and `OpenWorld` annotations carry over, and
 *   a success Schema whose JSON Schema is an object is advertised as its
 *   `outputSchema`;
 * - arguments are decoded with the parameters Schema's JSON codec (what the
 *   `inputSchema` describes) before the handler runs, so invalid ones are
 *   refused as any MCP tool's are (-32602, or an `isError` result,
 *   whichever the revision prescribes);
 * - the handler's result, encoded by the success Schema, is the result's
 *   text (a string as is, anything else as JSON) and, when it is an object,
 *   its `structuredContent`;
 * - a failure the tool returns (`failureMode: "return"`) or fails with, when
 *   its failure Schema encodes it, is an `isError` result carrying the
 *   encoded failure; another failure is reported by tag and message, and a
 *   defect never reaches the client (the server answers "Internal error"
 *   with a correlation id and logs the cause);
 * - each preliminary result a handler reports (`context.preliminary`) is a
 *   progress notification, when the client asked for progress: progress 1,
 *   2, ... with the encoded value as text for its message.
 *
 * A tool's `needsApproval` is `LanguageModel`'s business and is not asked
 * here: an MCP client's host has its own consent.
 */
import * as FastGetter from "@effect-mcp/protocol/FastGetter"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as McpTool from "@effect-mcp/server/Tool"
import * as AiTool from "effect/ai/Tool"
import type * as Toolkit from "effect/ai/Toolkit"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { McpServer } from "@effect-mcp/server/McpServer"

type Obj = { readonly [key: string]: unknown }

/** What serving a toolkit needs: its handlers, and the services its Schemas use. */
export type Requirements<Tools extends Record<string, AiTool.Any>> =
  | AiTool.HandlersFor<Tools>
  | AiTool.HandlerServices<Tools[keyof Tools]>

const isObject = (u: unknown): u is Obj => Predicate.isObject(u) && !Array.isArray(u)

const textOf = (encoded: unknown): string =>
  typeof encoded === "string" ? encoded : encoded === undefined ? "" : JSON.stringify(encoded)

const annotationsOf = (tool: AiTool.Any): Tools.ToolAnnotations | undefined => {
  const map = tool.annotations.mapUnsafe
  const hints: { [key: string]: boolean } = {}
  const pairs = [
    ["readOnlyHint", AiTool.Readonly],
    ["destructiveHint", AiTool.Destructive],
    ["idempotentHint", AiTool.Idempotent],
    ["openWorldHint", AiTool.OpenWorld]
  ] as const
  for (const [hint, reference] of pairs) if (map.has(reference.key)) hints[hint] = map.get(reference.key) as boolean
  return Object.keys(hints).length === 0 ? undefined : hints
}

/** The advertised output schema: only for a success Schema whose JSON Schema is an object (MCP's rule before 2026-07-28). */
const outputSchemaOf = (tool: AiTool.Any): Obj | undefined => {
  const schema = AiTool.getJsonSchemaFromSchema(tool.successSchema) as Obj
  return schema.type === "object" ? { $schema: McpTool.jsonSchemaDialect, ...schema } : undefined
}

const definitionOf = (tool: AiTool.Any): Tools.Tool => {
  const dynamicSchema = AiTool.isDynamic(tool) ? (tool.jsonSchema as Obj | undefined) : undefined
  const inputSchema =
    dynamicSchema === undefined
      ? McpTool.jsonSchemaOf(tool.parametersSchema)
      : { $schema: McpTool.jsonSchemaDialect, type: "object", ...dynamicSchema }
  const description = AiTool.getDescription(tool)
  const title = Option.getOrUndefined(Context.getOption(tool.annotations, AiTool.Title))
  const annotations = annotationsOf(tool)
  const outputSchema = outputSchemaOf(tool)
  return {
    name: tool.name,
    ...(title === undefined ? {} : { title }),
    ...(description === undefined ? {} : { description }),
    inputSchema: inputSchema as Tools.ToolInputSchema,
    ...(outputSchema === undefined ? {} : { outputSchema: outputSchema as Tools.ToolOutputSchema }),
    ...(annotations === undefined ? {} : { annotations })
  }
}

/** An `isError` result carrying an encoded failure (as `structuredContent` too when it is an object and no output schema constrains it). */
const errorResult = (encoded: unknown, hasOutputSchema: boolean): Tools.CallToolResult => ({
  content: [{ type: "text", text: textOf(encoded) }],
  ...(isObject(encoded) && !hasOutputSchema ? { structuredContent: encoded } : {}),
  isError: true
})

const toMcpTool = (
  tool: AiTool.Any,
  handle: (
    name: string,
    params: unknown
  ) => Effect.Effect<AiTool.HandlerResult<AiTool.Any>, unknown, ServerRequest.ServerRequest>
): McpTool.Tool => {
  let definition: Tools.Tool | undefined
  const jsonArgs = AiTool.isDynamic(tool) && tool.jsonSchema !== undefined
  let decoder: ((args: unknown) => Result.Result<unknown, Schema.SchemaError>) | undefined
  let encoder: ((value: unknown) => Effect.Effect<unknown, Schema.SchemaError>) | undefined
  let failureEncoder: ((error: unknown) => Result.Result<unknown, Schema.SchemaError>) | undefined
  const fields: Omit<McpTool.Tool, "definition"> = {
    name: tool.name,
    decode: (args) => {
      // A dynamic tool with a JSON Schema has no Schema to check with: its handler gets the arguments as sent.
      if (jsonArgs) return Result.succeed(args ?? {})
      // Arguments are JSON: decoded by the Schema's JSON codec, which the advertised inputSchema describes.
      decoder ??= Schema.decodeUnknownResult(Schema.toCodecJson(tool.parametersSchema as Schema.Codec<unknown>), {
        errors: "all"
      })
      return Result.mapError(decoder(args ?? {}), (error) => error.message)
    },
    // The Toolkit decodes the parameters itself, from their encoded form: it is given the decoded ones encoded back
    // (the same as sent for plain JSON schemas; a `Date` is sent as a string but encoded as a `Date`).
    handler: (input) => {
      if (jsonArgs) return handle(tool.name, input)
      encoder ??= Schema.encodeUnknownEffect(tool.parametersSchema as Schema.Codec<unknown>)
      return Effect.flatMap(Effect.orDie(encoder(input)), (params) => handle(tool.name, params))
    },
    toResult: (value) => {
      const result = value as AiTool.HandlerResult<AiTool.Any>
      if (result.isFailure)
        return Result.succeed(errorResult(result.encodedResult, made.definition.outputSchema !== undefined))
      const encoded = result.encodedResult
      return Result.succeed({
        content: encoded === undefined ? [] : [{ type: "text", text: textOf(encoded) }],
        ...(isObject(encoded) ? { structuredContent: encoded } : {})
      })
    },
    failureResult: (error) => {
      failureEncoder ??= Schema.encodeUnknownResult(tool.failureSchema as Schema.Codec<unknown, unknown>)
      const encoded = failureEncoder(error)
      return Result.isFailure(encoded)
        ? undefined
        : errorResult(encoded.success, made.definition.outputSchema !== undefined)
    }
  }
  // Made on first read, as `@effect-mcp/server`'s tools are: a server pays for the schemas its clients list. An
  // accessor added after, with a getter shared by every tool (FastGetter): an object literal with a getter is a
  // dictionary, and the tool is read on every call.
  const made: McpTool.Tool = FastGetter.define(fields, "definition", () => {
    definition ??= definitionOf(tool)
    return definition
  })
  return made
}

/**
 * The toolkit's tools as MCP tools, their handlers the ones in context (run
 * with the services the toolkit's Schemas need, captured here).
 */
export const tools = <Tools extends Record<string, AiTool.Any>>(
  toolkit: Toolkit.Toolkit<Tools>
): Effect.Effect<ReadonlyArray<McpTool.Tool>, never, Requirements<Tools>> =>
  Effect.gen(function* () {
    const withHandler = (yield* toolkit) as unknown as Toolkit.WithHandler<Record<string, AiTool.Any>>
    const services = yield* Effect.context<Requirements<Tools>>()
    const handle = (name: string, params: unknown) =>
      withHandler.handle(name, params as never).pipe(
        Effect.flatMap((results) => {
          let final: AiTool.HandlerResult<AiTool.Any> | undefined
          let step = 0
          return Stream.runForEach(results, (result) => {
            if (!result.preliminary) {
              final = result
              return Effect.void
            }
            step += 1
            return ServerRequest.progress({ progress: step, message: textOf(result.encodedResult) })
          }).pipe(
            // The Toolkit always ends a call with a final result; its absence is a bug, not the client's business.
            Effect.flatMap(() => (final === undefined ? Effect.die("no final result") : Effect.succeed(final)))
          )
        }),
        Effect.provideContext(services as Context.Context<never>)
      ) as Effect.Effect<AiTool.HandlerResult<AiTool.Any>, unknown, ServerRequest.ServerRequest>
    return Object.values(withHandler.tools)
      .filter((tool) => !AiTool.isProviderDefined(tool))
      .map((tool) => toMcpTool(tool, handle))
  })

/**
 * A Layer registering the toolkit's tools on the `McpServer` for as long as
 * it lives; provide the toolkit's handler Layer (`toolkit.toLayer(...)`) to it.
 *
 * @example
 * ```ts
 * import * as ToolkitServer from "@effect-mcp/host/ToolkitServer"
 * import * as McpServer from "@effect-mcp/server/McpServer"
 * import * as Tool from "effect/ai/Tool"
 * import * as Toolkit from "effect/ai/Toolkit"
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import * as Schema from "effect/Schema"
 *
 * const Weather = Toolkit.make(
 *   Tool.make("forecast", {
 *     description: "Tomorrow's forecast for a city",
 *     parameters: Schema.Struct({ city: Schema.String }),
 *     success: Schema.Struct({ summary: Schema.String })
 *   })
 * )
 * const Handlers = Weather.toLayer({ forecast: ({ city }) => Effect.succeed({ summary: `sunny in ${city}` }) })
 *
 * export const Server = ToolkitServer.layer(Weather).pipe(
 *   Layer.provide(Handlers),
 *   Layer.provideMerge(McpServer.layer({ name: "weather", version: "1.0.0" }))
 * )
 * ```
 */
export const layer = <Tools extends Record<string, AiTool.Any>>(
  toolkit: Toolkit.Toolkit<Tools>
): Layer.Layer<never, never, McpServer | Requirements<Tools>> =>
  Layer.effectDiscard(Effect.flatMap(tools(toolkit), (made) => McpTool.register(...made)))
