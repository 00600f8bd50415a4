/**
 * Serves an McpServer Layer on Node in one call: over this process's stdio
 * (`serveStdio`), or over HTTP (`serveHttp` / `layerHttp`: Streamable HTTP,
 * plus the legacy HTTP+SSE endpoints when asked).
 *
 * The HTTP defaults are the safe ones: bound to 127.0.0.1, `Host` and
 * `Origin` checked against the loopback names (and the name bound to),
 * request bodies capped at 4 MiB, at most 10,000 sessions, idle sessions
 * closed after 30 minutes. The HTTP stack is loaded on first use: a stdio
 * server never loads it.
 *
 * @example
 * ```ts
import { NodeMcpServer } from "@effect-mcp/platform-node"
 * import { McpServer, Tool } from "@effect-mcp/server"
 * import { NodeRuntime } from "@effect/platform-node"
 * import { Effect, Layer, Schema } from "effect"
 *
 * const Echo = Tool.make("echo", {
 *   input: Schema.Struct({ text: Schema.String }),
 *   handler: ({ text }) => Effect.succeed({ content: [{ type: "text", text }] })
 * })
 * const Server = Tool.layer(Echo).pipe(Layer.provideMerge(McpServer.layer({ name: "echo", version: "1.0.0" })))
 *
 * NodeRuntime.runMain(NodeMcpServer.serveHttp(Server, { port: 3000 }))
 * ```
 */
import type * as StdioTransport from "@effect-mcp/engine/StdioTransport"
import type * as HttpEndpoints from "@effect-mcp/server/HttpEndpoints"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Effect from "effect/Effect"
import type * as HttpServer from "effect/http/HttpServer"
import type * as HttpServerError from "effect/http/HttpServerError"
import * as Layer from "effect/Layer"
import { reserveStdout } from "./internal/stdoutReserved.ts"
import * as NodeStdio from "./NodeStdio.ts"

/** How `serveStdio` reads and writes this process's stdin and stdout. */
export interface StdioOptions extends StdioTransport.ServerOptions {}

/**
 * Where and how `serveHttp` / `layerHttp` listen: the options of the server's
 * endpoints (`HttpEndpoints.Options`, the ones every HTTP server shares among
 * them) and the listener's own. Every field is optional.
 */
export interface HttpOptions extends Omit<HttpEndpoints.Options, "allowedHosts" | "auth"> {
  /** Interface to bind. Default `127.0.0.1` (this machine only). */
  readonly host?: string | undefined
  /** Port to bind; 0 picks a free one (read it back with `url`). Default 0. */
  readonly port?: number | undefined
  /**
   * Host names (no port) accepted in `Host` and in `Origin`. Default: the
   * loopback names plus `host` when it is a name or address of its own; on
   * a wildcard bind (`0.0.0.0`, `::`) the loopback names only, with a warning.
   */
  readonly allowedHosts?: ReadonlyArray<string> | undefined
  /**
   * Makes the server an OAuth 2.1 protected resource: `@effect-mcp/auth`'s
   * `HttpProtection.make(...)`, or a function making it from the endpoint's
   * URL once the server listens (for port 0). Every request to the endpoints
   * (legacy SSE included) needs a bearer token; items' `scopes` are checked
   * before dispatch; the metadata routes are served without a token. See
   * docs/authorization.md. Default: none (no authentication).
   */
  readonly auth?: HttpAuth | ((endpointUrl: string) => HttpAuth) | undefined
}

/**
 * What the `auth` option takes: the HTTP transports' authentication hook and
 * the routes to serve beside the endpoints without authentication (its
 * metadata documents). `@effect-mcp/auth`'s `HttpProtection` is one.
 */
export type HttpAuth = HttpEndpoints.HttpAuth

/**
 * Serves one session over this process's stdin and stdout; completes when
 * the client closes stdin. Only MCP messages reach stdout, from the start of
 * the program to its end: the built-in loggers (`Effect.log`) write to stderr,
 * the server Layer's build included, and the console methods that print to
 * stdout (`console.log`, `console.info`, ..., and effect's `Console` over
 * them) print to stderr instead, restored when it completes or is
 * interrupted. When it fails (a server Layer that cannot be built, say), the
 * console stays on stderr, so the runner's report of the failure
 * (`NodeRuntime.runMain` logs it, then exits with code 1) goes to stderr too.
 * Writing to `process.stdout` directly would still corrupt the protocol
 * stream.
 *
 * @example
 * ```ts
 * import { NodeMcpServer } from "@effect-mcp/platform-node"
 * import { McpServer } from "@effect-mcp/server"
 * import { NodeRuntime } from "@effect/platform-node"
 *
 * const Server = McpServer.layer({ name: "empty", version: "1.0.0" })
 * NodeRuntime.runMain(NodeMcpServer.serveStdio(Server))
 * ```
 */
export const serveStdio = <E, R>(
  server: Layer.Layer<McpServer.McpServer, E, R>,
  options?: StdioOptions
): Effect.Effect<void, E, R> =>
  // The server Layer builds inside the reservation: what it logs while it builds goes to stderr too.
  reserveStdout(McpServer.serve.pipe(Effect.provide(NodeStdio.layerServer(options)), Effect.provide(server)))

/**
 * The server listening over HTTP for as long as the Layer lives; it provides
 * the `HttpServer` (read the address with `url`). Use it to run the server
 * next to other Layers or in a test; `serveHttp` is the one call for a `main`.
 *
 * @example
 * ```ts
 * import { NodeMcpServer } from "@effect-mcp/platform-node"
 * import { McpServer } from "@effect-mcp/server"
 * import { Console, Effect } from "effect"
 *
 * const Server = McpServer.layer({ name: "empty", version: "1.0.0" })
 * const program = Effect.gen(function* () {
 *   yield* Console.log(`listening on ${yield* NodeMcpServer.url}/mcp`)
 * }).pipe(Effect.provide(NodeMcpServer.layerHttp(Server, { legacySse: true })))
 * ```
 */
export const layerHttp = <E, R>(
  server: Layer.Layer<McpServer.McpServer, E, R>,
  options: HttpOptions = {}
): Layer.Layer<HttpServer.HttpServer, E | HttpServerError.ServeError, R> =>
  Layer.unwrap(
    Effect.map(
      Effect.promise(() => import("./internal/serveHttp.ts")),
      (module) => module.layer(server, options)
    )
  )

/**
 * Serves the server over HTTP until interrupted (Ctrl-C under
 * `NodeRuntime.runMain`), logging the endpoint's URL once it listens.
 *
 * @example
 * ```ts
 * import { NodeMcpServer } from "@effect-mcp/platform-node"
 * import { McpServer } from "@effect-mcp/server"
 * import { NodeRuntime } from "@effect/platform-node"
 *
 * const Server = McpServer.layer({ name: "empty", version: "1.0.0" })
 * NodeRuntime.runMain(NodeMcpServer.serveHttp(Server, { port: 3000, allowedOrigins: ["https://app.example.com"] }))
 * ```
 */
export const serveHttp = <E, R>(
  server: Layer.Layer<McpServer.McpServer, E, R>,
  options: HttpOptions = {}
): Effect.Effect<never, E | HttpServerError.ServeError, R> =>
  Effect.gen(function* () {
    yield* Effect.logInfo(`MCP server listening on ${yield* url}${options.path ?? "/mcp"}`)
    return yield* Effect.never
  }).pipe(Effect.provide(layerHttp(server, options)))

/**
 * The base URL the HTTP server listens on, e.g. `http://127.0.0.1:54321`.
 *
 * @example
 * ```ts
 * import { NodeMcpServer } from "@effect-mcp/platform-node"
 * import { Effect } from "effect"
 *
 * const endpoint = Effect.map(NodeMcpServer.url, (base) => `${base}/mcp`)
 * ```
 */
export const url: Effect.Effect<string, never, HttpServer.HttpServer> = Effect.flatMap(
  Effect.promise(() => import("./NodeHttpServer.ts")),
  (module) => module.url
)
