/**
 * Prompts: message templates with declared arguments. Required arguments are
 * checked before the handler runs (a missing one is -32602, as every
 * revision prescribes); arguments may offer completions.
 */
import type * as Content from "@effect-mcp/protocol/Content"
import type * as Meta from "@effect-mcp/protocol/Meta"
import type * as Prompts from "@effect-mcp/protocol/Prompts"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Registration from "./internal/registration.ts"
import type { McpServer } from "./McpServer.ts"
import type { Completer } from "./ResourceTemplate.ts"
import type { Provided } from "./Tool.ts"

/** One prompt argument: its metadata, whether it is required, and an optional completer. */
export interface Argument<R = never> {
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly required?: boolean | undefined
  readonly complete?: Completer<R> | undefined
}

/** A prompt's arguments by name. */
export type Arguments<R = never> = { readonly [name: string]: Argument<R> }

/** What the handler's argument types depend on: which arguments are required. */
export type ArgumentFlags = { readonly [name: string]: { readonly required?: boolean | undefined } }

/** The values a handler receives: required arguments are strings, optional ones may be missing. */
export type ValuesOf<A extends { readonly [name: string]: { readonly required?: boolean | undefined } }> = {
  readonly [K in keyof A]: A[K]["required"] extends true ? string : string | undefined
}

/** What a handler returns: one user text message, messages, or a full result. */
export type Messages = string | ReadonlyArray<Prompts.PromptMessage> | Prompts.GetPromptResult

/** A prompt ready to register; `R` is what its handler needs beyond the per-request services. */
export interface Prompt<R = never> {
  readonly name: string
  readonly definition: Prompts.Prompt
  readonly arguments: Arguments<R | Provided>
  /** Builds the messages from the argument values. */
  readonly handler: (values: {
    readonly [name: string]: string | undefined
  }) => Effect.Effect<Messages, unknown, R | Provided>
  /**
   * Scopes a caller's access token must carry to get the prompt (checked by a
   * protected HTTP server before the request reaches the handler, answered
   * 403 `insufficient_scope` otherwise; see docs/authorization.md). None by default.
   */
  readonly scopes?: ReadonlyArray<string> | undefined
}

/** What `make` takes: the prompt's name, metadata, arguments and handler. */
export interface Options<A extends ArgumentFlags, E, R> {
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly icons?: Content.Icons | undefined
  readonly _meta?: Meta.Meta | undefined
  /**
   * Scopes a caller's access token must carry to get the prompt (checked by a
   * protected HTTP server before the request reaches the handler, answered
   * 403 `insufficient_scope` otherwise; see docs/authorization.md). None by default.
   */
  readonly scopes?: ReadonlyArray<string> | undefined
  /** Completers see the services of the handler (their own requirements are not inferred). */
  readonly arguments?: A & Arguments<NoInfer<R>>
  /** Builds the messages from the argument values (required arguments are strings, optional ones may be missing). */
  readonly handler: (values: ValuesOf<A>) => Effect.Effect<Messages, E, R>
}

/**
 * Makes a prompt: its arguments (required ones are strings in the handler, optional ones may be missing, each may have a completer) and a handler building the messages.
 *
 * @example
 * ```ts
 * import * as Prompt from "@effect-mcp/server/Prompt"
 * import * as Effect from "effect/Effect"
 *
 * export const Review = Prompt.make({
 *   name: "review",
 *   description: "Asks for a code review",
 *   arguments: {
 *     language: { required: true, complete: (prefix) => Effect.succeed(["go", "rust", "ts"].filter((l) => l.startsWith(prefix))) },
 *     focus: { description: "What to look at" }
 *   },
 *   handler: ({ language, focus }) => Effect.succeed(`Review this ${language} code, focusing on ${focus ?? "anything"}.`)
 * })
 * ```
 */
export const make = <E, R, const A extends ArgumentFlags = {}>(
  // The handler's parameter type mentions only `A`: were `R` in it, TypeScript would fix `R` (to `unknown`,
  // with no completer to infer it from) before reading the handler's return type.
  options: Options<A, E, R>
): Prompt<Exclude<R, Provided>> => {
  type Out = Prompt<Exclude<R, Provided>>
  const args = (options.arguments ?? {}) as Arguments<unknown>
  const declared: Array<Prompts.PromptArgument> = Object.entries(args).map(([name, a]) => ({
    name,
    ...(a.title === undefined ? {} : { title: a.title }),
    ...(a.description === undefined ? {} : { description: a.description }),
    ...(a.required === undefined ? {} : { required: a.required })
  }))
  const definition: Prompts.Prompt = {
    name: options.name,
    ...(options.title === undefined ? {} : { title: options.title }),
    ...(options.description === undefined ? {} : { description: options.description }),
    ...(declared.length === 0 ? {} : { arguments: declared }),
    ...(options.icons === undefined ? {} : { icons: options.icons }),
    ...(options._meta === undefined ? {} : { _meta: options._meta })
  }
  return {
    name: options.name,
    definition,
    arguments: args as unknown as Out["arguments"],
    handler: options.handler as unknown as Out["handler"],
    ...(options.scopes === undefined ? {} : { scopes: options.scopes })
  }
}

/** Registers prompts for as long as the current scope lasts. */
export const register = <R>(
  ...prompts: ReadonlyArray<Prompt<R>>
): Effect.Effect<void, never, McpServer | R | Scope.Scope> => Registration.register("prompt", prompts)

/** A Layer registering prompts for as long as it lives. */
export const layer = <R>(...prompts: ReadonlyArray<Prompt<R>>): Layer.Layer<never, never, McpServer | R> =>
  Registration.layer("prompt", prompts)
