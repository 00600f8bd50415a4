/**
 * Server middleware: code that runs around the handling of every request a
 * server's sessions serve (`tools/*`, `resources/*`, `prompts/*`,
 * `completion/complete`, `logging/setLevel`, `subscriptions/listen`; the
 * lifecycle's `initialize` and `ping` are answered by the session itself).
 * A middleware is a function of the request and the Effect that handles it;
 * it may run code before and after, replace the result, or fail with a
 * protocol error (`McpError`), which reaches the client as that JSON-RPC
 * error. A defect in a middleware is answered like a handler's: an internal
 * error without its message.
 *
 * `Middleware.layer(a, b, c)` registers middleware with the McpServer below
 * it for as long as the Layer lives: `a` is outermost (it runs first and sees
 * the outcome last). Several Layers compose by their `order` (`layerAt`,
 * lower is outer; `layer` is order 0), then by registration order.
 *
 * Built-ins: `timeout`, `rateLimit` (a token bucket per session or principal
 * on the Clock), `authorize` (the principal's scopes against the item's),
 * `logging` (method, target, outcome, duration; never
 * arguments) and `visibility` / `hideUnauthorized` (per-request filtering of
 * list results). `when`, `forTool`, `forPrompt` and `forResource` narrow a
 * middleware to some requests. See docs/middleware.md.
 */
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Transport from "@effect-mcp/engine/Transport"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import type * as LogLevel from "effect/LogLevel"
import * as Internal from "./internal/middleware.ts"
import type { Obj } from "./internal/params.ts"
import * as McpServer from "./McpServer.ts"

/**
 * What a middleware learns of the request it wraps: the method, the item it
 * is about (`target`: a tool's or prompt's name, a resource's URI, a
 * completion reference's name or URI), the raw params, the session's request
 * info, the HTTP session id and authenticated principal (undefined outside an
 * authenticating HTTP transport), and the server.
 */
export type Request = Internal.Request

/** The handling of one request, as a middleware receives and returns it. */
export type Next = Internal.Next

/** A middleware: from the request and what handles it to the Effect that runs instead. */
export type Middleware = Internal.Middleware

/**
 * The JSON-RPC codes of the built-ins' errors. Both are in the range JSON-RPC
 * leaves to servers (-32000..-32099); `RequestTimeout` is the code the
 * official SDKs use for a request that took too long.
 */
export const Code = {
  /** A request ran past `timeout` (data: `{ timeoutMs }`). */
  RequestTimeout: -32001,
  /** A caller ran out of tokens in `rateLimit` (data: `{ retryAfterMs }`). */
  RateLimited: -32029,
  /** `authorize` refused the request (data: `{ requiredScopes }` when the item's scopes were the reason). */
  Forbidden: -32003
} as const

/**
 * Registers middleware with the McpServer below the Layer, outermost first,
 * at order 0, until the Layer is released.
 *
 * @example
 * ```ts
 * import * as McpServer from "@effect-mcp/server/McpServer"
 * import * as Middleware from "@effect-mcp/server/Middleware"
 * import * as Layer from "effect/Layer"
 *
 * export const Server = Middleware.layer(
 *   Middleware.logging(),
 *   Middleware.rateLimit({ capacity: 20, refillEvery: "1 second" }),
 *   Middleware.timeout("30 seconds")
 * ).pipe(Layer.provideMerge(McpServer.layer({ name: "s", version: "1.0.0" })))
 * ```
 */
export const layer = (...middleware: ReadonlyArray<Middleware>): Layer.Layer<never, never, McpServer.McpServer> =>
  layerAt(0, ...middleware)

/** `layer` at an explicit `order`: Layers with a lower order run outside those with a higher one. */
export const layerAt = (
  order: number,
  ...middleware: ReadonlyArray<Middleware>
): Layer.Layer<never, never, McpServer.McpServer> =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const registry = Internal.registryOf(yield* McpServer.McpServer)
      yield* Effect.acquireRelease(
        Effect.sync(() => registry.add(order, middleware)),
        (entry) => Effect.sync(() => registry.remove(entry))
      )
    })
  )

/** `middleware` for the requests `predicate` accepts; the others pass straight through. */
export const when =
  (predicate: (request: Request) => boolean, middleware: Middleware): Middleware =>
  (request, next) =>
    predicate(request) ? middleware(request, next) : next

/** `middleware` for `tools/call` of the tool `name`. */
export const forTool = (name: string, middleware: Middleware): Middleware =>
  when((r) => r.method === "tools/call" && r.target === name, middleware)

/** `middleware` for `prompts/get` of the prompt `name`. */
export const forPrompt = (name: string, middleware: Middleware): Middleware =>
  when((r) => r.method === "prompts/get" && r.target === name, middleware)

/** `middleware` for `resources/read`, `resources/subscribe` and `resources/unsubscribe` of `uri`. */
export const forResource = (uri: string, middleware: Middleware): Middleware =>
  when((r) => r.method.startsWith("resources/") && r.target === uri, middleware)

/** Requests that last as long as the client wants (a listen stream) are no candidates for a timeout. */
const longLived = (method: string) => method === "subscriptions/listen"

/**
 * Fails a request that runs longer than `duration` with the JSON-RPC error
 * `Code.RequestTimeout` (data `{ timeoutMs }`), interrupting its handler.
 * `subscriptions/listen` is exempt: it lasts until the client ends it.
 */
export const timeout = (duration: Duration.Input): Middleware => {
  const timeoutMs = Duration.toMillis(Duration.fromInputUnsafe(duration))
  const orElse = () =>
    Effect.fail(
      new McpError.JsonRpcError({ code: Code.RequestTimeout, message: "Request timed out", data: { timeoutMs } })
    )
  return (request, next) => (longLived(request.method) ? next : Effect.timeoutOrElse(next, { duration, orElse }))
}

/** Options of `rateLimit`. */
export interface RateLimitOptions {
  /** Requests a caller may make at once (the bucket's size). */
  readonly capacity: number
  /** One token comes back per `refillEvery`, up to `capacity`. */
  readonly refillEvery: Duration.Input
  /**
   * Whose bucket a request draws from. Default: the authenticated principal's
   * `owner`, else the session (stdio, memory, a stateful HTTP session).
   * Stateless requests without a principal share one bucket. A key that is
   * an object keeps its bucket only as long as the object lives.
   */
  readonly key?: ((request: Request) => unknown) | undefined
}

/**
 * The default caller of a request: the principal, else the session. The
 * session's state object, not its HTTP id, so that its bucket goes with it.
 */
/**
 * Whom a request counts against by default in a limit: its principal when the
 * server authenticates, else its session (a stateless request: all of them together).
 */
export const callerOf = (request: Request): unknown =>
  request.principal?.owner ?? (request.info.revision.stateless ? "stateless" : request.info.state)

interface Bucket {
  tokens: number
  at: number
}

/**
 * A token bucket per caller on the Clock (so TestClock drives it): each
 * request takes a token; one comes back every `refillEvery`. A caller with no
 * token left is refused with `Code.RateLimited` (data `{ retryAfterMs }`, when
 * the next token comes) without running the handler.
 */
export const rateLimit = (options: RateLimitOptions): Middleware => {
  const capacity = Math.max(1, options.capacity)
  const intervalMs = Math.max(1, Duration.toMillis(Duration.fromInputUnsafe(options.refillEvery)))
  const key = options.key ?? callerOf
  // Sessions are objects (dropped with the session); principals and session ids are strings.
  const byObject = new WeakMap<object, Bucket>()
  const byValue = new Map<unknown, Bucket>()
  // A full bucket is the same as none: once the map has grown, those are dropped (amortized over the growth).
  let sweepAt = 1024
  const sweep = (now: number) => {
    for (const [caller, bucket] of byValue) {
      if (bucket.tokens + (now - bucket.at) / intervalMs >= capacity) byValue.delete(caller)
    }
    sweepAt = Math.max(1024, byValue.size * 2)
  }
  const take = (caller: unknown, now: number): number => {
    const isObject = typeof caller === "object" && caller !== null
    let bucket = isObject ? byObject.get(caller) : byValue.get(caller)
    if (bucket === undefined) {
      bucket = { tokens: capacity, at: now }
      if (isObject) byObject.set(caller, bucket)
      else {
        if (byValue.size >= sweepAt) sweep(now)
        byValue.set(caller, bucket)
      }
    }
    bucket.tokens = Math.min(capacity, bucket.tokens + (now - bucket.at) / intervalMs)
    bucket.at = now
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1
      return 0
    }
    return Math.ceil((1 - bucket.tokens) * intervalMs)
  }
  return (request, next) =>
    Effect.clockWith((clock) => {
      const retryAfterMs = take(key(request), clock.currentTimeMillisUnsafe())
      return retryAfterMs === 0
        ? next
        : Effect.fail(
            new McpError.JsonRpcError({ code: Code.RateLimited, message: "Rate limited", data: { retryAfterMs } })
          )
    })
}

/** Options of `logging`. */
export interface LoggingOptions {
  /** Level of the log line. Default "Info". */
  readonly level?: LogLevel.Severity | undefined
  /** Extra annotations of the line, from the request (what you add is yours to keep free of secrets). */
  readonly annotate?: ((request: Request) => Obj) | undefined
}

const outcomeOf = (exit: Exit.Exit<unknown, McpError.McpError>): Obj => {
  if (Exit.isSuccess(exit)) {
    const value = exit.value as { readonly isError?: unknown } | undefined
    return { outcome: value?.isError === true ? "tool_error" : "success" }
  }
  const error = exit.cause.reasons.find((r) => r._tag === "Fail")
  if (error !== undefined && error._tag === "Fail") return { outcome: "error", errorCode: error.error.code }
  return { outcome: exit.cause.reasons.some((r) => r._tag === "Die") ? "defect" : "interrupted" }
}

/**
 * Logs one line per request through Effect's Logger (not to the client) once
 * it ends: "MCP request" annotated with `method`, `target`, `outcome`
 * (`success`, `tool_error`, `error` with `errorCode`, `interrupted`,
 * `defect`) and `durationMs` on the Clock. Never the arguments, the result or
 * any credential.
 */
export const logging = (options?: LoggingOptions): Middleware => {
  const level = options?.level ?? "Info"
  return (request, next) =>
    Effect.flatMap(Clock.currentTimeMillis, (start) =>
      Effect.onExit(next, (exit) =>
        Effect.flatMap(Clock.currentTimeMillis, (end) =>
          Effect.logWithLevel(level)("MCP request").pipe(
            Effect.annotateLogs({
              ...options?.annotate?.(request),
              method: request.method,
              ...(request.target === undefined ? {} : { target: request.target }),
              ...outcomeOf(exit),
              durationMs: end - start
            })
          )
        )
      )
    )
}

/** An item of a list result, as `visibility` predicates see it. */
export interface ListItem {
  /** The item as the list result carries it (`name`, `uri`, `annotations`, ...). */
  readonly definition: Obj
  /** The scopes its registration requires (`Tool.make`'s `scopes`, ...), if any. */
  readonly scopes: ReadonlyArray<string> | undefined
}

/** A predicate per list: keeps the items it returns true for. */
export interface VisibilityOptions {
  /** Which tools `tools/list` shows. */
  readonly tools?: ((item: ListItem, request: Request) => boolean) | undefined
  /** Which resources `resources/list` shows. */
  readonly resources?: ((item: ListItem, request: Request) => boolean) | undefined
  /** Which templates `resources/templates/list` shows (their `scopes` are not looked up: undefined). */
  readonly resourceTemplates?: ((item: ListItem, request: Request) => boolean) | undefined
  /** Which prompts `prompts/list` shows. */
  readonly prompts?: ((item: ListItem, request: Request) => boolean) | undefined
}

const lists = {
  "tools/list": { key: "tools", option: "tools", scopesOf: "tools/call", id: "name" },
  "resources/list": { key: "resources", option: "resources", scopesOf: "resources/read", id: "uri" },
  "resources/templates/list": {
    key: "resourceTemplates",
    option: "resourceTemplates",
    scopesOf: "",
    id: "uriTemplate"
  },
  "prompts/list": { key: "prompts", option: "prompts", scopesOf: "prompts/get", id: "name" }
} as const

/**
 * Filters list results per request: each item of `tools/list`,
 * `resources/list`, `resources/templates/list` and `prompts/list` stays only
 * if its predicate accepts it. Pages keep their cursors (a page may come out
 * shorter). Hiding is not authorization: a hidden item can still be called by
 * name unless something refuses it (the HTTP transport's scope check).
 */
export const visibility =
  (options: VisibilityOptions): Middleware =>
  (request, next) => {
    const list = lists[request.method as keyof typeof lists]
    if (list === undefined) return next
    const keep = options[list.option]
    if (keep === undefined) return next
    const scopesOf = McpServer.requiredScopesOf(request.server)
    return Effect.map(next, (result) => {
      const items = (result as Obj)[list.key]
      if (!Array.isArray(items)) return result
      const visible = items.filter((definition: Obj) => {
        const id = definition[list.id]
        const scopes = list.scopesOf === "" || typeof id !== "string" ? undefined : scopesOf(list.scopesOf, id)
        return keep({ definition, scopes }, request)
      })
      return { ...(result as Obj), [list.key]: visible }
    })
  }

/** Whether `principal` holds every scope of `scopes` (no scopes, or no authentication: yes). */
const holds = (principal: Transport.Authenticated | undefined, scopes: ReadonlyArray<string> | undefined) =>
  principal === undefined || scopes === undefined || scopes.every((s) => principal.scopes.includes(s))

/**
 * Hides the tools, resources and prompts whose scopes the request's principal
 * lacks (`visibility` on their registered scopes). Without authentication
 * (stdio, an HTTP server with no `authentication`) nothing is hidden.
 */
export const hideUnauthorized: Middleware = visibility({
  tools: (item, request) => holds(request.principal, item.scopes),
  resources: (item, request) => holds(request.principal, item.scopes),
  prompts: (item, request) => holds(request.principal, item.scopes)
})

/**
 * Refuses a request unless `allow` accepts it, with `Code.Forbidden` (data
 * `{ requiredScopes }`) and without running the handler. `allow` gets the
 * request and the scopes its item was registered with (see
 * `McpServer.requiredScopesOf`); the default accepts when the principal holds
 * them all, or when there is no principal (stdio, or an HTTP server without
 * `authentication`). A protected HTTP server already answers a missing item
 * scope with a 403 before dispatch: this is for rules of your own, and for
 * transports without that check.
 */
export const authorize = (
  allow: (request: Request, requiredScopes: ReadonlyArray<string> | undefined) => boolean = (request, scopes) =>
    holds(request.principal, scopes)
): Middleware => {
  return (request, next) => {
    const requiredScopes =
      request.target === undefined
        ? undefined
        : McpServer.requiredScopesOf(request.server)(request.method, request.target)
    return allow(request, requiredScopes)
      ? next
      : Effect.fail(
          new McpError.JsonRpcError({
            code: Code.Forbidden,
            message: "Forbidden",
            ...(requiredScopes === undefined ? {} : { data: { requiredScopes } })
          })
        )
  }
}
