/**
 * Resource templates: a family of resources addressed by an RFC 6570 URI
 * template. A read whose URI matches the template gets the template's
 * variables, decoded by an optional Schema (a URI whose variables do not
 * decode does not match). Variables can offer completions.
 */
import type * as Content from "@effect-mcp/protocol/Content"
import type * as Meta from "@effect-mcp/protocol/Meta"
import type * as Resources from "@effect-mcp/protocol/Resources"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Registration from "./internal/registration.ts"
import * as UriTemplate from "./internal/uriTemplate.ts"
import type { McpServer } from "./McpServer.ts"
import { type Cache, type Contents, metadata } from "./Resource.ts"
import type { Provided } from "./Tool.ts"

/** Suggests values for a variable (or prompt argument) from what the user typed and the values already chosen. */
export type Completer<R = never> = (
  value: string,
  context: { readonly arguments: { readonly [name: string]: string } }
) => Effect.Effect<ReadonlyArray<string>, unknown, R>

/** The variables a URI matched, by name. */
export type Variables = { readonly [name: string]: UriTemplate.Value }

/** A resource template ready to register; `R` is what its read needs beyond the per-request services. */
export interface ResourceTemplate<R = never> {
  readonly uriTemplate: string
  readonly template: UriTemplate.Template
  readonly definition: Resources.ResourceTemplate
  /** The template's variables for `uri`, decoded, or undefined when it does not match. */
  readonly match: (uri: string) => unknown | undefined
  /** Reads the resource a matching URI names, from its decoded variables. */
  readonly read: (params: unknown, uri: string) => Effect.Effect<Contents, unknown, R | Provided>
  readonly complete: { readonly [variable: string]: Completer<R | Provided> }
  readonly cache: Cache | undefined
  /**
   * Scopes a caller's access token must carry to read (or subscribe to) a resource the template matches (checked by a
   * protected HTTP server before the request reaches the handler, answered
   * 403 `insufficient_scope` otherwise; see docs/authorization.md). None by default.
   */
  readonly scopes?: ReadonlyArray<string> | undefined
}

type VariablesSchema = Schema.Codec<unknown, unknown, never, never>

/** Completers by name, whatever services they need. */
export type Completers = { readonly [name: string]: Completer<unknown> }

/** The services a set of completers needs. */
export type CompleterServices<C> = {
  readonly [K in keyof C]: C[K] extends Completer<infer R> ? R : never
}[keyof C]

/** What `make` takes: the URI template, metadata, an optional variables Schema, completers, and the read. */
export interface Options<S extends VariablesSchema | undefined, E, R> {
  readonly uriTemplate: string
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly mimeType?: string | undefined
  readonly annotations?: Content.Annotations | undefined
  readonly icons?: Content.Icons | undefined
  readonly _meta?: Meta.Meta | undefined
  readonly cache?: Cache | undefined
  /**
   * Scopes a caller's access token must carry to read (or subscribe to) a resource the template matches (checked by a
   * protected HTTP server before the request reaches the handler, answered
   * 403 `insufficient_scope` otherwise; see docs/authorization.md). None by default.
   */
  readonly scopes?: ReadonlyArray<string> | undefined
  /** Decodes the matched variables (strings, or string lists for list expansions). */
  readonly variables?: S
  /** Completers see the services of `read` (their own requirements are not inferred). */
  readonly complete?: { readonly [variable: string]: Completer<NoInfer<R>> } | undefined
  /** Reads the resource a matching URI names, from its (decoded) variables and the URI itself. */
  readonly read: (
    variables: S extends VariablesSchema ? S["Type"] : Variables,
    uri: string
  ) => Effect.Effect<Contents, E, R>
}

/**
 * Makes a template; throws `UriTemplate.TemplateError` for a malformed template.
 *
 * @example
 * ```ts
 * import * as Resource from "@effect-mcp/server/Resource"
 * import * as ResourceTemplate from "@effect-mcp/server/ResourceTemplate"
 * import * as Effect from "effect/Effect"
 * import * as Schema from "effect/Schema"
 *
 * const users = new Map([["1", "Ada"]])
 *
 * export const User = ResourceTemplate.make({
 *   uriTemplate: "users://{id}",
 *   name: "user",
 *   variables: Schema.Struct({ id: Schema.String }),
 *   complete: { id: (prefix) => Effect.succeed([...users.keys()].filter((id) => id.startsWith(prefix))) },
 *   read: ({ id }, uri) => {
 *     const name = users.get(id)
 *     return name === undefined ? Effect.fail(Resource.notFound(uri)) : Effect.succeed(name)
 *   }
 * })
 * ```
 */
export const make = <E, R, S extends VariablesSchema | undefined = undefined>(
  options: Options<S, E, R>
): ResourceTemplate<Exclude<R, Provided>> => {
  const template = UriTemplate.parse(options.uriTemplate)
  const decode =
    options.variables === undefined ? undefined : Schema.decodeUnknownResult(options.variables as VariablesSchema)
  return {
    uriTemplate: options.uriTemplate,
    template,
    definition: {
      uriTemplate: options.uriTemplate,
      name: options.name,
      ...metadata(options)
    } as Resources.ResourceTemplate,
    match: (uri) => {
      const variables = UriTemplate.match(template, uri)
      if (variables === undefined || decode === undefined) return variables
      const decoded = decode(variables)
      return Result.isSuccess(decoded) ? decoded.success : undefined
    },
    read: options.read as unknown as ResourceTemplate["read"],
    complete: (options.complete ?? {}) as unknown as ResourceTemplate<Exclude<R, Provided>>["complete"],
    cache: options.cache,
    ...(options.scopes === undefined ? {} : { scopes: options.scopes })
  }
}

/** Expands the template with `variables` (RFC 6570). */
export const expand = (template: ResourceTemplate<unknown> | string, variables: Variables): string =>
  UriTemplate.expand(typeof template === "string" ? template : template.template, variables)

/** Registers templates for as long as the current scope lasts. */
export const register = <R>(
  ...templates: ReadonlyArray<ResourceTemplate<R>>
): Effect.Effect<void, never, McpServer | R | Scope.Scope> => Registration.register("template", templates)

/** A Layer registering templates for as long as it lives. */
export const layer = <R>(...templates: ReadonlyArray<ResourceTemplate<R>>): Layer.Layer<never, never, McpServer | R> =>
  Registration.layer("template", templates)
