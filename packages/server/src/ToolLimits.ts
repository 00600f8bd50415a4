/**
 * Limits on tool calls, per caller and per tool: how many calls a caller may
 * make in a time (a token bucket on the Clock, as `Middleware.rateLimit`) and
 * how many it may have running at once. The 2025-03-26 tools page says a
 * server MUST rate-limit tool invocations; this is the middleware for it.
 *
 * Three levels, each optional, checked outermost first: `perCaller` counts
 * every `tools/call` of a caller, whatever the tool; `perTool` counts each
 * tool of a caller on its own; `tools` gives named tools limits of their own
 * in place of `perTool`'s. A call must pass every level that applies; a
 * refused call does not run its handler and takes nothing from the levels
 * inside the one that refused it.
 *
 * The caller is the authenticated principal's `owner`, else the session (as
 * `Middleware.rateLimit`); `caller` chooses otherwise (a constant makes a
 * limit global). Other methods pass through.
 */
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as McpServer from "./McpServer.ts"
import * as Middleware from "./Middleware.ts"

/** The limits of one level. */
export interface Limit {
  /**
   * A token bucket: `capacity` calls at once, one more per `refillEvery` (refused: `Middleware.Code.RateLimited`);
   * whose bucket is the level's (`Options.caller`, and the tool for `perTool` and `tools`).
   */
  readonly rate?: Omit<Middleware.RateLimitOptions, "key"> | undefined
  /** Calls running at once (refused: `Code.TooManyConcurrent`). */
  readonly concurrency?: number | undefined
}

/** Options of `middleware`. */
export interface Options {
  /** Every tool call of a caller counts here. */
  readonly perCaller?: Limit | undefined
  /** Each tool of a caller counts on its own here (unless `tools` names it). */
  readonly perTool?: Limit | undefined
  /** Limits of named tools, in place of `perTool`'s. */
  readonly tools?: { readonly [tool: string]: Limit } | undefined
  /**
   * Who a call counts for. Default: the authenticated principal's `owner`,
   * else the session; stateless requests without a principal are one caller.
   */
  readonly caller?: ((request: Middleware.Request) => unknown) | undefined
}

/**
 * The JSON-RPC code of a call refused for concurrency: the code of
 * `Middleware.Code.RateLimited`, so a client that retries a rate-limited call
 * (`Interceptor.isTransient`) retries this one too; the message and `data`
 * (`{ maxConcurrent }`) tell them apart.
 */
export const Code = { TooManyConcurrent: Middleware.Code.RateLimited } as const

/** The default caller: the principal, else the session's state object (its limits go with it). */
/**
 * One key per (caller, tool): an object per pair for an object caller (kept
 * as long as the caller lives), a string otherwise.
 */
const pairKeys = () => {
  const byObject = new WeakMap<object, Map<string, object>>()
  return (caller: unknown, tool: string): unknown => {
    if (typeof caller !== "object" || caller === null) return `${typeof caller}:${String(caller)}\u0000${tool}`
    let tools = byObject.get(caller)
    if (tools === undefined) {
      tools = new Map()
      byObject.set(caller, tools)
    }
    let key = tools.get(tool)
    if (key === undefined) {
      key = {}
      tools.set(tool, key)
    }
    return key
  }
}

/**
 * Calls running at once per key, refused past `max`. A count, not a
 * `Semaphore`: a call over the limit is refused, never queued, so nothing
 * waits for a permit; a key's count is dropped when it comes back to zero.
 */
const concurrencyLimit = (max: number, key: (request: Middleware.Request) => unknown): Middleware.Middleware => {
  const maxConcurrent = Math.max(1, max)
  const running = new Map<unknown, number>()
  const refused = Effect.fail(
    new McpError.JsonRpcError({
      code: Code.TooManyConcurrent,
      message: "Too many concurrent calls",
      data: { maxConcurrent }
    })
  )
  return (request, next) =>
    Effect.suspend(() => {
      const k = key(request)
      const n = running.get(k) ?? 0
      if (n >= maxConcurrent) return refused
      running.set(k, n + 1)
      return Effect.ensuring(
        next,
        Effect.sync(() => {
          const left = (running.get(k) ?? 1) - 1
          if (left === 0) running.delete(k)
          else running.set(k, left)
        })
      )
    })
}

/** The middleware of one level: its bucket outside its concurrency count. */
const level = (limit: Limit, key: (request: Middleware.Request) => unknown): ReadonlyArray<Middleware.Middleware> => [
  ...(limit.rate === undefined ? [] : [Middleware.rateLimit({ ...limit.rate, key })]),
  ...(limit.concurrency === undefined ? [] : [concurrencyLimit(limit.concurrency, key)])
]

const chain =
  (middleware: ReadonlyArray<Middleware.Middleware>): Middleware.Middleware =>
  (request, next) =>
    middleware.reduceRight((inner, m) => m(request, inner), next)

/**
 * The limits as one middleware, for `tools/call` only.
 *
 * @example
 * ```ts
 * import * as McpServer from "@effect-mcp/server/McpServer"
 * import * as Middleware from "@effect-mcp/server/Middleware"
 * import * as ToolLimits from "@effect-mcp/server/ToolLimits"
 * import * as Layer from "effect/Layer"
 *
 * export const Server = Middleware.layer(
 *   ToolLimits.middleware({
 *     perCaller: { rate: { capacity: 60, refillEvery: "1 second" }, concurrency: 8 },
 *     tools: { render: { concurrency: 1 } }
 *   })
 * ).pipe(Layer.provideMerge(McpServer.layer({ name: "s", version: "1.0.0" })))
 * ```
 */
export const middleware = (options: Options): Middleware.Middleware => {
  const caller = options.caller ?? Middleware.callerOf
  const pair = pairKeys()
  const perPair = (request: Middleware.Request) => pair(caller(request), request.target ?? "")
  const outer = options.perCaller === undefined ? [] : level(options.perCaller, caller)
  const perTool = chain(options.perTool === undefined ? [] : level(options.perTool, perPair))
  const named = new Map<string, Middleware.Middleware>()
  for (const [tool, limit] of Object.entries(options.tools ?? {})) named.set(tool, chain(level(limit, perPair)))
  const inner: Middleware.Middleware = (request, next) => (named.get(request.target ?? "") ?? perTool)(request, next)
  const all = chain([...outer, inner])
  return (request, next) => (request.method === "tools/call" ? all(request, next) : next)
}

/** Registers `middleware(options)` with the McpServer below (at order 0, as `Middleware.layer`). */
export const layer = (options: Options): Layer.Layer<never, never, McpServer.McpServer> =>
  Middleware.layer(middleware(options))
