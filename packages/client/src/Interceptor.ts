/**
 * Client interceptors: code that runs around each request an `McpClient`
 * makes (`ping`, the `list*` pages and Streams, `resources/read`,
 * `prompts/get`, `completion/complete`, `tools/call`, `logging/setLevel` and
 * raw `request`s). An interceptor is a function of the request and the Effect
 * that sends it; it may run code before and after (logging), run it again
 * (retries) or replace its outcome. Streams of progress
 * (`callToolWithProgress`), subscriptions and tasks pass through untouched.
 *
 * `Interceptor.layer(a, b)` re-provides the `McpClient` below it with the
 * interceptors applied, `a` outermost; `Interceptor.wrap` does the same to a
 * client value. Built-ins: `retry` (idempotent requests only, on a
 * `Schedule`) and `logging`. See docs/middleware.md.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import type * as LogLevel from "effect/LogLevel"
import type * as Schedule from "effect/Schedule"
import type * as Stream from "effect/Stream"
import * as Paging from "./internal/paging.ts"
import * as McpClient from "./McpClient.ts"

/** What an interceptor learns of a request. */
export interface Request {
  readonly method: string
  /** The tool's or prompt's name, the resource's URI (undefined for other methods). */
  readonly target: string | undefined
  /**
   * Whether sending it twice does no more than sending it once: every list
   * method, `resources/read`, `prompts/get`, `completion/complete` and `ping`;
   * `tools/call` only for a tool the server's `tools/list` (as seen through
   * this client) annotated `idempotentHint` or `readOnlyHint`.
   */
  readonly idempotent: boolean
}

/** An interceptor: from a request and the Effect that sends it, to the Effect that runs instead. */
export type Interceptor = <A, E>(request: Request, next: Effect.Effect<A, E>) => Effect.Effect<A, E>

const idempotentMethods: ReadonlySet<string> = new Set([
  "ping",
  "tools/list",
  "resources/list",
  "resources/templates/list",
  "prompts/list",
  "resources/read",
  "prompts/get",
  "completion/complete",
  "tasks/get",
  "tasks/list"
])

/** Options of `wrap` and `layer`. */
export interface Options {
  /** Most pages a wrapped `list*` Stream reads (as `McpClient.Options.maxPages`). Default 1000. */
  readonly maxPages?: number | undefined
}

/**
 * The client with `interceptors` applied, the first outermost. Its other
 * members (the session, revision, streams of notifications) are the client's.
 */
export const wrap = (
  client: McpClient.McpClientShape,
  interceptors: ReadonlyArray<Interceptor>,
  options?: Options
): McpClient.McpClientShape => {
  if (interceptors.length === 0) return client
  const maxPages = options?.maxPages ?? 1000
  // Tools the server declared safe to repeat, as the lists this client read said.
  const repeatable = new Map<string, boolean>()
  const learn = (tools: ReadonlyArray<{ readonly name: string; readonly annotations?: object | undefined }>) => {
    for (const tool of tools) {
      const a = (tool.annotations ?? {}) as { readonly idempotentHint?: unknown; readonly readOnlyHint?: unknown }
      repeatable.set(tool.name, a.idempotentHint === true || a.readOnlyHint === true)
    }
  }
  const intercept = <A, E>(
    method: string,
    target: string | undefined,
    next: Effect.Effect<A, E>
  ): Effect.Effect<A, E> => {
    const request: Request = {
      method,
      target,
      idempotent: method === "tools/call" ? repeatable.get(target ?? "") === true : idempotentMethods.has(method)
    }
    let effect = next
    for (let i = interceptors.length - 1; i >= 0; i--) effect = interceptors[i]!(request, effect)
    return effect
  }
  const listTools: McpClient.McpClientShape["listTools"] = (cursor, o) =>
    intercept(
      "tools/list",
      undefined,
      Effect.tap(client.listTools(cursor, o), (page) => Effect.sync(() => learn(page.tools)))
    )
  const listResources: McpClient.McpClientShape["listResources"] = (cursor, o) =>
    intercept("resources/list", undefined, client.listResources(cursor, o))
  const listResourceTemplates: McpClient.McpClientShape["listResourceTemplates"] = (cursor, o) =>
    intercept("resources/templates/list", undefined, client.listResourceTemplates(cursor, o))
  const listPrompts: McpClient.McpClientShape["listPrompts"] = (cursor, o) =>
    intercept("prompts/list", undefined, client.listPrompts(cursor, o))
  const paged = <A, E>(
    method: string,
    fetch: (cursor: string | undefined) => Effect.Effect<{ readonly nextCursor?: string | undefined }, E>,
    items: (page: never) => ReadonlyArray<A>
  ) =>
    Paging.stream({
      method,
      maxPages,
      fetch: (cursor) =>
        Effect.map(fetch(cursor), (page) => ({ items: items(page as never), nextCursor: page.nextCursor }))
    })
  const overrides: Partial<McpClient.McpClientShape> = {
    ping: (o) => intercept("ping", undefined, client.ping(o)),
    listTools,
    tools: paged("tools/list", listTools, (page: { tools: never }) => page.tools) as Stream.Stream<never, never>,
    callTool: ((name: string, args?: object, o?: object) =>
      intercept("tools/call", name, client.callTool(name, args as never, o as never))) as never,
    listResources,
    resources: paged("resources/list", listResources, (page: { resources: never }) => page.resources) as never,
    listResourceTemplates,
    resourceTemplates: paged(
      "resources/templates/list",
      listResourceTemplates,
      (page: { resourceTemplates: never }) => page.resourceTemplates
    ) as never,
    readResource: (uri, o) => intercept("resources/read", uri, client.readResource(uri, o)),
    listPrompts,
    prompts: paged("prompts/list", listPrompts, (page: { prompts: never }) => page.prompts) as never,
    getPrompt: (name, args, o) => intercept("prompts/get", name, client.getPrompt(name, args, o)),
    complete: (ref, argument, context, o) =>
      intercept("completion/complete", "name" in ref ? ref.name : ref.uri, client.complete(ref, argument, context, o)),
    setLoggingLevel: (level) => intercept("logging/setLevel", undefined, client.setLoggingLevel(level)),
    request: (method, params, o) => {
      const p = (params ?? {}) as { readonly name?: unknown; readonly uri?: unknown }
      const target = typeof p.name === "string" ? p.name : typeof p.uri === "string" ? p.uri : undefined
      return intercept(method, target, client.request(method, params, o))
    }
  }
  // The client's getters (its session is replaced when the server ends one) stay live through the prototype.
  return Object.assign(Object.create(client) as McpClient.McpClientShape, overrides)
}

/**
 * Re-provides the `McpClient` below it with `interceptors` applied, the first outermost.
 *
 * @example
 * ```ts
 * import * as Interceptor from "@effect-mcp/client/Interceptor"
 * import * as Schedule from "effect/Schedule"
 *
 * // Provide McpClient.layer(...) to it.
 * export const Intercepted = Interceptor.layer(
 *   Interceptor.logging(),
 *   Interceptor.retry({ schedule: Schedule.max([Schedule.exponential("100 millis"), Schedule.recurs(3)]) })
 * )
 * ```
 */
export const layer = (
  ...interceptors: ReadonlyArray<Interceptor>
): Layer.Layer<McpClient.McpClient, never, McpClient.McpClient> =>
  Layer.effect(
    McpClient.McpClient,
    McpClient.McpClient.use((client) => Effect.succeed(wrap(client, interceptors)))
  )

/**
 * Whether a failure may pass if the request is sent again: the request timed
 * out, the session closed, or the server answered internal error (-32603),
 * request timeout (-32001) or rate limited (-32029, `Middleware.Code` of
 * `@effect-mcp/server`).
 */
export const isTransient = (error: unknown): boolean => {
  const e = error as { readonly _tag?: unknown; readonly code?: unknown } | undefined
  if (e === undefined || e === null) return false
  switch (e._tag) {
    case "RequestTimeout":
    case "SessionClosed":
    case "InternalError":
      return true
    case "JsonRpcError":
      return e.code === -32001 || e.code === -32029
    default:
      return false
  }
}

/** Options of `retry`. */
export interface RetryOptions {
  /** When to try again (its input is the failure), e.g. `Schedule.max([Schedule.exponential("100 millis"), Schedule.recurs(3)])`. */
  readonly schedule: Schedule.Schedule<unknown, unknown>
  /** Which failures are worth another try. Default `isTransient`. */
  readonly while?: ((error: unknown) => boolean) | undefined
}

/**
 * Sends an idempotent request again on `schedule` while it fails with a
 * transient error. Other requests (a `tools/call` of a tool not annotated
 * idempotent or read-only, `logging/setLevel`, raw requests of other methods)
 * are sent once.
 */
export const retry = (options: RetryOptions): Interceptor => {
  const retryable = options.while ?? isTransient
  return (request, next) =>
    request.idempotent ? Effect.retry(next, { schedule: options.schedule, while: retryable }) : next
}

/** Options of `logging`. */
export interface LoggingOptions {
  /** Level of the log line. Default "Debug". */
  readonly level?: LogLevel.Severity | undefined
}

/**
 * Logs one line per request once it ends: "MCP client request" annotated
 * with `method`, `target`, `outcome` (`success`, `failure` with the error's
 * `errorTag`, `interrupted`) and `durationMs` on the Clock. Never the
 * arguments or the result.
 */
export const logging = (options?: LoggingOptions): Interceptor => {
  const level = options?.level ?? "Debug"
  return (request, next) =>
    Effect.flatMap(Clock.currentTimeMillis, (start) =>
      Effect.onExit(next, (exit) =>
        Effect.flatMap(Clock.currentTimeMillis, (end) => {
          const failure = Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail") : undefined
          const outcome = Exit.isSuccess(exit)
            ? { outcome: "success" }
            : failure !== undefined && failure._tag === "Fail"
              ? { outcome: "failure", errorTag: String((failure.error as { readonly _tag?: unknown })?._tag) }
              : { outcome: "interrupted" }
          return Effect.logWithLevel(level)("MCP client request").pipe(
            Effect.annotateLogs({
              method: request.method,
              ...(request.target === undefined ? {} : { target: request.target }),
              ...outcome,
              durationMs: end - start
            })
          )
        })
      )
    )
}
