/**
 * Tools: a name, an input (an Effect Schema, whose decoded value the handler
 * receives, or a raw JSON Schema the arguments are validated against), an
 * optional output Schema (advertised as `outputSchema`, returned as
 * `structuredContent` plus a JSON text block), an optional failure Schema
 * (a typed failure it encodes is returned as an `isError` result with the
 * encoded failure as JSON text and, where the revision has it and the tool
 * declares no output schema, as `structuredContent`), metadata, and a handler.
 *
 * A defect of the handler never reaches the client: it gets an `isError`
 * result saying "Internal error (correlation id ...)", and the Cause is
 * logged with that id.
 *
 * The advertised `inputSchema` is the Schema's JSON form as JSON Schema
 * 2020-12: unions stay unions, named schemas become `$defs`, and `strict`
 * tools say `additionalProperties: false` (and reject unknown keys). It is
 * generated when a `tools/list` page first shows the tool, and the argument
 * decoder on its first call: making and registering a tool costs well under
 * a microsecond, however many a server has.
 */
import type * as ContentBlock from "@effect-mcp/protocol/Content"
import type * as Meta from "@effect-mcp/protocol/Meta"
import type * as Tools from "@effect-mcp/protocol/Tools"
import type * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaJITCompiler from "effect/schema/SchemaJITCompiler"
import * as SchemaParser from "effect/SchemaParser"
import type * as Scope from "effect/Scope"
import * as JsonSchema from "./internal/jsonSchema.ts"
import { describe as describeIssue } from "./internal/issues.ts"
import * as Registration from "./internal/registration.ts"
import type { McpServer } from "./McpServer.ts"
import type { ServerRequest } from "./ServerRequest.ts"
import type { TaskSupport } from "./Task.ts"

type Obj = { readonly [key: string]: unknown }

/** The JSON Schema dialect of advertised input and output schemas. */
export const jsonSchemaDialect = "https://json-schema.org/draft/2020-12/schema"

/** A raw JSON Schema for tool arguments: an object schema. */
export interface JsonSchemaInput {
  readonly type: "object"
  readonly [keyword: string]: unknown
}

/** A Schema with no service requirements (tool inputs and outputs are plain JSON). */
export type AnySchema = Schema.Codec<unknown, unknown, never, never>

/** A tool's input: an Effect Schema or a raw JSON Schema. */
export type Input = AnySchema | JsonSchemaInput

/** What the handler receives for an input. */
export type InputOf<I> = I extends AnySchema ? I["Type"] : { readonly [key: string]: unknown }

/** What a handler without an output Schema returns: text, blocks, or a full result. */
export type Content =
  | string
  | ContentBlock.ContentBlock
  | ReadonlyArray<ContentBlock.ContentBlock>
  | Tools.CallToolResult

/** What the handler returns for an output Schema (or content, without one). */
export type OutputOf<O> = O extends AnySchema ? O["Type"] : Content

/** Services every handler has without asking: they are provided per request. */
export type Provided = ServerRequest | CurrentRequest.CurrentRequest

/** A tool ready to register; `R` is what its handler needs beyond the per-request services. */
export interface Tool<R = never> {
  readonly name: string
  /** The revision-neutral definition `tools/list` advertises (shaped per revision when sent; made on first read). */
  readonly definition: Tools.Tool
  /** Checks raw arguments; the message explains what is wrong. */
  readonly decode: (args: unknown) => Result.Result<unknown, string>
  /** Runs the tool on decoded arguments. */
  readonly handler: (input: unknown) => Effect.Effect<unknown, unknown, R | Provided>
  /** Turns the handler's value into a result (fails with a message when the output does not fit its Schema). */
  readonly toResult: (value: unknown) => Result.Result<Tools.CallToolResult, string>
  /**
   * The `isError` result of a typed failure its failure Schema encodes
   * (`structuredContent` set; revision shaping may drop it); undefined for
   * any other failure, or when the tool declares no failure Schema.
   */
  readonly failureResult: (error: unknown) => Tools.CallToolResult | undefined
  /**
   * Scopes a caller's access token must carry to call the tool (checked by a
   * protected HTTP server before the request reaches the handler, answered
   * 403 `insufficient_scope` otherwise; see docs/authorization.md). None by default.
   */
  readonly scopes?: ReadonlyArray<string> | undefined
  /** How the tool takes task execution (default `"forbidden"`); see `Options.taskSupport`. */
  readonly taskSupport?: TaskSupport | undefined
  /** Who makes the task of a task-executed call; see `Options.taskCreation`. */
  readonly taskCreation?: "call" | "handler" | undefined
  /**
   * `false`: `tools/list` leaves the tool out, and a client that knows its name may still call it (a
   * gateway's discovery mode lists a search tool, not the thousands it finds). Default: listed.
   */
  readonly listed?: boolean | undefined
}

/** What `make` takes: metadata, the input (and optional output and failure) Schemas, and the handler. */
export interface Options<I extends Input, O extends AnySchema | undefined, E, R> {
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly input: I
  readonly output?: O
  /**
   * The Schema of the handler's typed failures the client may see with their
   * fields (usually a `Schema.TaggedError` class, or a union of them). A
   * failure it encodes becomes an `isError` result carrying the encoded
   * failure; other failures are reported by tag and message only.
   */
  readonly failure?: AnySchema | undefined
  /** Reject arguments with unknown keys and advertise `additionalProperties: false` (Schema inputs). */
  readonly strict?: boolean | undefined
  readonly annotations?: Tools.ToolAnnotations | undefined
  readonly icons?: ContentBlock.Icons | undefined
  readonly _meta?: Meta.Meta | undefined
  /**
   * Scopes a caller's access token must carry to call the tool (checked by a
   * protected HTTP server before the request reaches the handler, answered
   * 403 `insufficient_scope` otherwise; see docs/authorization.md). None by default.
   */
  readonly scopes?: ReadonlyArray<string> | undefined
  /**
   * Whether calls run as tasks (docs/tasks.md). `"optional"`: when the client
   * can take one (the 2025-11-25 `task` parameter, or the Tasks extension
   * declared on a 2026-07-28 request), the call is answered at once with a
   * task and the handler runs in the background. `"required"`: always; a
   * client that cannot take a task is refused (-32601 on 2025-11-25, -32021
   * Missing Required Client Capability on 2026-07-28). Advertised as
   * `execution.taskSupport` where the revision has it. Default `"forbidden"`.
   */
  readonly taskSupport?: TaskSupport | undefined
  /**
   * `"call"` (default): the server makes the task as the call arrives.
   * `"handler"`: the handler runs in the request and makes the task itself
   * with `Task.background` (e.g. after asking the client for input).
   */
  readonly taskCreation?: "call" | "handler" | undefined
  /** `false`: left out of `tools/list`, callable by a client that knows its name (the `listed` of `Tool`). Default: listed. */
  readonly listed?: boolean | undefined
  /** Runs the tool on the decoded input. */
  readonly handler: (input: InputOf<I>) => Effect.Effect<OutputOf<O>, E, R>
}

/** The `inputSchema` / `outputSchema` of a Schema: JSON Schema 2020-12 with its `$defs`. */
export const jsonSchemaOf = (schema: Schema.Top, options?: { readonly strict?: boolean | undefined }): Obj => {
  const document = Schema.toJsonSchemaDocument(
    schema,
    options?.strict === true ? { onExcessProperty: "error" } : undefined
  )
  const definitions = document.definitions as Obj
  let root = document.schema as Obj
  // A named root schema is a `$ref`: inline it so the root says `type: "object"` as MCP requires.
  if (typeof root.$ref === "string" && root.$ref.startsWith("#/$defs/")) {
    const target = definitions[root.$ref.slice("#/$defs/".length)]
    if (Predicate.isObject(target)) root = target as Obj
  }
  const defs = Object.keys(definitions).length > 0 ? { $defs: definitions } : {}
  return { $schema: jsonSchemaDialect, ...objectRoot(root), ...defs }
}

/**
 * Tool arguments are always a JSON object and MCP requires `type: "object"` at
 * the root. An empty Struct describes "anything but null" and a root union
 * lists its members: both get the object type added (a union keeps its `anyOf`).
 */
const objectRoot = (root: Obj): Obj => {
  if (root.type === "object") return root
  const { not, ...rest } = root
  const notNull = Predicate.isObject(not) && (not as Obj).type === "null"
  return { type: "object", ...(notNull ? rest : root) }
}

/**
 * An output schema is any JSON Schema (objects only before 2026-07-28, which
 * revision shaping handles: it keeps a schema whose root says `type: "object"`).
 * A root union whose members are all objects is one, so it says so, as
 * `objectRoot` does for arguments; without it the older revisions would drop
 * the schema and the structured content with it.
 */
const outputSchemaOf = (schema: Schema.Top): Obj => {
  const document = Schema.toJsonSchemaDocument(schema)
  const definitions = document.definitions as Record<string, Obj>
  const defs = Object.keys(definitions).length > 0 ? { $defs: definitions } : {}
  const root = document.schema as Obj
  const isObject = (member: unknown): boolean => {
    if (!Predicate.isObject(member)) return false
    const ref = (member as Obj).$ref
    const resolved = typeof ref === "string" && ref.startsWith("#/$defs/") ? definitions[ref.slice(8)] : member
    return Predicate.isObject(resolved) && (resolved as Obj).type === "object"
  }
  const anyOf = root.anyOf
  const objects =
    root.type === undefined && Array.isArray(anyOf) && anyOf.length > 0 && anyOf.every(isObject)
      ? { type: "object", ...root }
      : root
  return { $schema: jsonSchemaDialect, ...objects, ...defs }
}

const isSchema = (u: unknown): u is AnySchema => Schema.isSchema(u)

const isBlock = (u: unknown): u is ContentBlock.ContentBlock =>
  Predicate.isObject(u) && typeof (u as Obj).type === "string"

/** The result of a handler's content value. */
export const contentResult = (value: Content): Tools.CallToolResult => {
  if (typeof value === "string") return { content: [{ type: "text", text: value }] }
  if (Array.isArray(value)) return { content: value as ReadonlyArray<ContentBlock.ContentBlock> }
  if (isBlock(value)) return { content: [value] }
  return value as Tools.CallToolResult
}

/**
 * Makes a tool.
 *
 * @example
 * ```ts
 * import * as Tool from "@effect-mcp/server/Tool"
 * import * as Effect from "effect/Effect"
 * import * as Schema from "effect/Schema"
 *
 * class NotFound extends Schema.TaggedError<NotFound>()("NotFound", { id: Schema.String }) {}
 *
 * export const getUser = Tool.make("get_user", {
 *   description: "Looks a user up by id",
 *   input: Schema.Struct({ id: Schema.String }),
 *   output: Schema.Struct({ name: Schema.String }),
 *   failure: NotFound, // sent to the client as an isError result with its fields
 *   annotations: { readOnlyHint: true },
 *   handler: ({ id }) => (id === "1" ? Effect.succeed({ name: "Ada" }) : Effect.fail(new NotFound({ id })))
 * })
 * ```
 */
export const make = <I extends Input, E, R, O extends AnySchema | undefined = undefined>(
  name: string,
  options: Options<I, O, E, R>
): Tool<Exclude<R, Provided>> =>
  new MadeTool(name, options as unknown as AnyOptions) as unknown as Tool<Exclude<R, Provided>>

type AnyOptions = Options<Input, AnySchema | undefined, unknown, unknown>

/**
 * A tool made by `make`. What it derives from its Schemas is worked out on
 * first use, not when it is made: the JSON Schemas on the first `tools/list`
 * (generating one costs tens of microseconds, most of registering a tool),
 * the argument decoder on the first call, the encoders on the first result.
 * A server registering thousands of tools pays for those its clients use.
 * Its behaviour is on the prototype: a tool holds its options and caches.
 */
class MadeTool implements Tool<unknown> {
  readonly name: string
  readonly handler: Tool["handler"]
  private readonly options: AnyOptions
  private madeDefinition: Tools.Tool | undefined = undefined
  private decoder: Tool["decode"] | undefined = undefined
  private outputEncoder: ((value: unknown) => Result.Result<unknown, Schema.SchemaError>) | undefined = undefined
  private failureEncoder: ((error: unknown) => Result.Result<unknown, Schema.SchemaError>) | undefined = undefined

  constructor(name: string, options: AnyOptions) {
    this.name = name
    this.options = options
    this.handler = options.handler as unknown as Tool["handler"]
  }

  get scopes(): ReadonlyArray<string> | undefined {
    return this.options.scopes
  }

  get taskSupport(): TaskSupport | undefined {
    return this.options.taskSupport
  }

  get taskCreation(): "call" | "handler" | undefined {
    return this.options.taskCreation
  }

  get listed(): boolean | undefined {
    return this.options.listed
  }

  get definition(): Tools.Tool {
    this.madeDefinition ??= definitionOf(this.name, this.options)
    return this.madeDefinition
  }

  decode(args: unknown): Result.Result<unknown, string> {
    this.decoder ??= decoderOf(this.options)
    return this.decoder(args)
  }

  toResult(value: unknown): Result.Result<Tools.CallToolResult, string> {
    const output = this.options.output
    if (output === undefined) return Result.succeed(contentResult(value as Content))
    this.outputEncoder ??= Schema.encodeUnknownResult(Schema.toCodecJson(output))
    return Result.match(this.outputEncoder(value), {
      onFailure: (error) =>
        Result.fail(`the tool's output does not match its output schema: ${describeIssue(error.issue)}`),
      onSuccess: (structured) =>
        Result.succeed({ content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured })
    })
  }

  failureResult(error: unknown): Tools.CallToolResult | undefined {
    const failure = this.options.failure
    if (failure === undefined) return undefined
    this.failureEncoder ??= Schema.encodeUnknownResult(Schema.toCodecJson(failure))
    const encoded = this.failureEncoder(error)
    if (Result.isFailure(encoded)) return undefined
    return {
      content: [{ type: "text", text: JSON.stringify(encoded.success) }],
      structuredContent: encoded.success,
      isError: true
    }
  }
}

const definitionOf = (name: string, options: AnyOptions): Tools.Tool => {
  const input = options.input
  const inputSchema = isSchema(input)
    ? jsonSchemaOf(input, { strict: options.strict })
    : input.$schema === undefined
      ? { $schema: jsonSchemaDialect, ...input }
      : input
  const outputSchema = options.output === undefined ? undefined : outputSchemaOf(options.output)
  return {
    name,
    ...(options.title === undefined ? {} : { title: options.title }),
    ...(options.description === undefined ? {} : { description: options.description }),
    inputSchema: inputSchema as Tools.ToolInputSchema,
    ...(outputSchema === undefined ? {} : { outputSchema: outputSchema as Tools.ToolOutputSchema }),
    ...(options.annotations === undefined ? {} : { annotations: options.annotations }),
    ...(options.icons === undefined ? {} : { icons: options.icons }),
    ...(options._meta === undefined ? {} : { _meta: options._meta }),
    // Revision shaping keeps `execution` only where it exists (2025-11-25).
    ...(options.taskSupport === undefined || options.taskSupport === "forbidden"
      ? {}
      : { execution: { taskSupport: options.taskSupport } })
  }
}

const decoderOf = (options: AnyOptions): Tool["decode"] => {
  const input = options.input
  if (!isSchema(input)) {
    return (args) => {
      const issues = JsonSchema.validate(input as JsonSchema.JsonSchema, args ?? {})
      return issues.length === 0 ? Result.succeed(args ?? {}) : Result.fail(JsonSchema.describe(issues))
    }
  }
  const codec = Schema.toCodecJson(input)
  const onExcessProperty = options.strict === true ? "error" : "ignore"
  // Arguments are decoded on every call: valid ones by effect's JIT-compiled synchronous
  // decoder (no Effect, no fiber, stopping at the first issue); invalid ones again by the
  // interpreter, collecting every issue so the caller can fix them all at once.
  SchemaJITCompiler.enable(codec.ast)
  const fast = SchemaParser.decodeUnknownSync(codec, { onExcessProperty })
  const decoder = Schema.decodeUnknownResult(codec, { onExcessProperty, errors: "all" })
  return (args) => {
    const value = args ?? {}
    try {
      return Result.succeed(fast(value))
    } catch {
      return Result.mapError(decoder(value), (error) => describeIssue(error.issue))
    }
  }
}

/** Registers tools on the server for as long as the current scope lasts. */
export const register = <R>(
  ...tools: ReadonlyArray<Tool<R>>
): Effect.Effect<void, never, McpServer | R | Scope.Scope> => Registration.register("tool", tools)

/** A Layer registering tools for as long as it lives. */
export const layer = <R>(...tools: ReadonlyArray<Tool<R>>): Layer.Layer<never, never, McpServer | R> =>
  Registration.layer("tool", tools)
