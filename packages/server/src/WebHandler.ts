/// <reference lib="dom" />
// The Fetch API's `Request` and `Response`, for compiling this module (the package has neither DOM nor Node
// types); its declarations name the globals every runtime declares (Workers', Deno's, Bun's, Node's types).
/**
 * An McpServer Layer served as a web-standard handler,
 * `(request: Request) => Promise<Response>`, for every runtime that speaks
 * the Fetch API: Cloudflare Workers (`export default { fetch: handler }`),
 * Deno (`Deno.serve(handler)`), Bun (`Bun.serve({ fetch: handler, idleTimeout: 0 })`, or
 * `server.timeout(request, 0)` for the MCP requests: Bun cuts a connection `idleTimeout`
 * seconds after its request whatever is written on it, keepalives included, which would
 * cut every SSE reply that outlives it), or Node behind any server that hands out web
 * requests. The endpoints are the
 * ones `NodeMcpServer` serves (`HttpEndpoints`), with the same options and
 * the same safe defaults: `Host` and `Origin` checked against the loopback
 * names unless `allowedHosts` says otherwise, bodies capped at 4 MiB, session
 * limits, optional OAuth (`auth`). Built on effect's web handler
 * (`HttpEffect.toWebHandlerLayerWith`): SSE replies and the GET stream are
 * `ReadableStream` bodies.
 *
 * The request's host is its URL's (a web request always carries an absolute
 * URL, and a server answering one ignores a `Host` header that disagrees,
 * RFC 9112 section 3.2.2): a deployed handler must list the names it is
 * reached by in `allowedHosts` (`["mcp.example.com"]`), or every request gets
 * 403. Web requests carry no remote address: `maxSessionsPerClient` counts
 * what `clientOf` returns (a header your platform sets, such as Cloudflare's
 * `cf-connecting-ip`), and without it only `maxSessions` applies.
 *
 * Stateful sessions (`Mcp-Session-Id`, the GET stream, requests to the
 * client) live in the memory of the handler: every request of a session must
 * reach the same handler (one process, one isolate). Stateless serving
 * (`stateless: true`) and the 2026-07-28 revision keep nothing between
 * requests. See docs/runtimes.md.
 *
 * @example
 * ```ts
 * import * as McpServer from "@effect-mcp/server/McpServer"
 * import * as Tool from "@effect-mcp/server/Tool"
 * import * as WebHandler from "@effect-mcp/server/WebHandler"
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import * as Schema from "effect/Schema"
 *
 * const Greet = Tool.make("greet", {
 *   input: Schema.Struct({ name: Schema.String }),
 *   handler: ({ name }) => Effect.succeed(`hello, ${name}`)
 * })
 * const Server = Tool.layer(Greet).pipe(Layer.provideMerge(McpServer.layer({ name: "greeter", version: "1.0.0" })))
 *
 * const { handler } = WebHandler.make(Server, { allowedHosts: ["mcp.example.com"], stateless: true })
 *
 * // Cloudflare Workers; or Deno.serve(handler); or Bun.serve({ fetch: handler, idleTimeout: 0 })
 * export default { fetch: handler }
 * ```
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Headers from "effect/http/Headers"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as HttpEndpoints from "./HttpEndpoints.ts"
import type * as McpServer from "./McpServer.ts"

/**
 * How the handler serves the server: the options of its endpoints, the ones
 * `NodeMcpServer` takes as well (see `HttpEndpoints.Options`). Every field is
 * optional; `allowedHosts` defaults to the loopback names, so a deployed
 * handler lists the names it is reached by.
 */
export interface Options extends HttpEndpoints.Options {}

/** A server as a web-standard handler, and the way to end it. */
export interface WebHandler {
  /**
   * Answers one request. SSE replies and the GET stream are streamed bodies;
   * a session's state stays in this handler between requests. While the
   * server Layer is still being built a request waits for it; if the build
   * failed, the promise rejects with its error.
   */
  readonly handler: (request: Request) => Promise<Response>
  /**
   * Closes every session (their open streams end), then releases the server
   * Layer. Every call returns the same promise.
   */
  readonly dispose: () => Promise<void>
}

/** The authority (`host[:port]`) of an absolute URL; undefined for a path. */
const authorityOf = (url: string): string | undefined => {
  const scheme = url.indexOf("://")
  if (scheme < 0) return undefined
  const start = scheme + 3
  let end = start
  while (end < url.length) {
    const c = url.charCodeAt(end)
    // "/", "?" and "#" end the authority (a Request's URL carries no credentials).
    if (c === 47 || c === 63 || c === 35) break
    end++
  }
  return end === start ? undefined : url.slice(start, end)
}

/**
 * The app with each request's `Host` taken from its URL, where the endpoints'
 * Host/Origin checks read it (a web request's URL is absolute; its `Host`
 * header may be absent, as in a `Request` made in-process).
 */
const hostFromUrl = <E>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, HttpServerRequest.HttpServerRequest | Scope.Scope>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, HttpServerRequest.HttpServerRequest | Scope.Scope> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const host = authorityOf(request.originalUrl)
    return host === undefined || request.headers["host"] === host
      ? app
      : Effect.provideService(
          app,
          HttpServerRequest.HttpServerRequest,
          request.modify({ headers: Headers.set(request.headers, "host", host) })
        )
  })

/**
 * Serves `server` as a web-standard handler. The server Layer starts being
 * built at once (requests arriving before it is ready wait for it), in a
 * runtime of the handler's own; `dispose` ends it. Make the handler once, at
 * the top level of the module the runtime loads, so that every request
 * reaches the same one (and a session its state).
 *
 * @example
 * ```ts
 * import * as McpServer from "@effect-mcp/server/McpServer"
 * import * as WebHandler from "@effect-mcp/server/WebHandler"
 *
 * const Server = McpServer.layer({ name: "empty", version: "1.0.0" })
 * const app = WebHandler.make(Server, { stateless: true })
 *
 * export const answer = async () => {
 *   const response = await app.handler(
 *     new Request("http://localhost/mcp", {
 *       method: "POST",
 *       headers: { accept: "application/json, text/event-stream", "content-type": "application/json" },
 *       body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })
 *     })
 *   )
 *   await app.dispose()
 *   return response.status // 200
 * }
 * ```
 */
export const make = <E>(server: Layer.Layer<McpServer.McpServer, E>, options: Options = {}): WebHandler => {
  const app = HttpEndpoints.layer(options).pipe(Layer.provide(server), Layer.provideMerge(HttpRouter.layer))
  const web = HttpEffect.toWebHandlerLayerWith(app, {
    toHandler: (context) => Effect.succeed(hostFromUrl(Context.get(context, HttpRouter.HttpRouter).asHttpEffect()))
  })
  return { handler: (request) => web.handler(request), dispose: web.dispose }
}
