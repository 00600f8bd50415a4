/**
 * Node wiring for `@effect-mcp/http`'s transports: serves an `HttpRouter` app
 * (`StreamableHttpServer.layer`, `SseServer.layer`, or both) with Node's
 * `http` server. Everything else lives in `@effect-mcp/http`, which knows no Node.
 *
 * Binds 127.0.0.1 by default. On a loopback bind the DNS-rebinding
 * protection is on (only loopback names in `Host` and `Origin`). On any other
 * interface `layerStreamableHttp` and `layerSse` refuse to start (with
 * `RebindingRequiredError`) unless the options say what to accept:
 * `allowedHosts` with the names clients use, or the named opt-out
 * `dnsRebindingProtection: false` (behind a proxy that checks them itself).
 */
import * as SseServer from "@effect-mcp/http/SseServer"
import type { HostChecks } from "@effect-mcp/http/HttpServeOptions"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as PlatformNodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerError from "effect/http/HttpServerError"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"

/** Where the HTTP server listens. */
export interface ListenOptions {
  /** Interface to bind. Default `127.0.0.1`. */
  readonly host?: string | undefined
  /** Port to bind; 0 picks a free one (read it back with `url`). Default 0. */
  readonly port?: number | undefined
}

/**
 * The server could not listen: `message` names the address and the OS error
 * (`cannot listen on 127.0.0.1:8080: address already in use (EADDRINUSE)`),
 * `code` is Node's error code. Still a `ServeError` (its tag included), with
 * Node's error as its `cause`.
 */
export class ListenError extends HttpServerError.ServeError {
  /** `host:port` as asked for (`[host]:port` for an IPv6 host). */
  readonly address: string
  /** Node's error code: `EADDRINUSE`, `EACCES`, `EADDRNOTAVAIL`, `ENOTFOUND`... */
  readonly code: string | undefined

  constructor(options: { readonly host: string; readonly port: number; readonly cause: unknown }) {
    super({ cause: options.cause })
    this.address = options.host.includes(":") ? `[${options.host}]:${options.port}` : `${options.host}:${options.port}`
    const code = Predicate.isObject(options.cause) ? (options.cause as { readonly code?: unknown }).code : undefined
    this.code = typeof code === "string" ? code : undefined
  }

  override get message(): string {
    return `cannot listen on ${this.address}: ${osErrorOf(this.cause, this.code)}`
  }
}

/**
 * What the OS said, without the parts the message already has: Node writes
 * `listen EADDRINUSE: address already in use 127.0.0.1:8080`, which becomes
 * `address already in use (EADDRINUSE)`; anything else is kept whole.
 */
const osErrorOf = (cause: unknown, code: string | undefined): string => {
  const message = cause instanceof Error ? cause.message : String(cause)
  if (code === undefined) return message
  const match = new RegExp(`^\\w+ ${code}: (.*?)(?: \\S+:\\d+)?$`).exec(message)
  return match === null ? message : `${match[1]} (${code})`
}

/**
 * Serves the routes `app` adds to the `HttpRouter` on `host:port`; releasing
 * the layer closes the server. A failed listen is a `ListenError`.
 */
export const layer = <E, R>(app: Layer.Layer<never, E, R>, options?: ListenOptions) => {
  const host = options?.host ?? "127.0.0.1"
  const port = options?.port ?? 0
  // Shutdown runs in three steps, so that an open SSE stream ends (its chunked body finished) rather than
  // being cut:
  // 1. the serve layer's own finalizer, the first to run, stops taking requests (`stopTaking`);
  // 2. the routes' finalizers close their sessions, which end their streams: the handlers writing them
  //    finish their responses;
  // 3. the listener's finalizers close the connections (`close`: each one as its response finishes), and
  //    only then interrupt the handlers still running. The handlers run in a scope of the listener's for
  //    that: in the serve layer's scope (effect's default) they would be interrupted before step 2, and an
  //    interrupted handler destroys its response, so the client saw its stream cut, not ended.
  // No preemptive shutdown: it would wait (20 s by default) for the open streams step 2 ends.
  const listener = Layer.effectContext(
    Effect.gen(function* () {
      const server = createServer()
      const gate: Gate = {
        closing: false,
        closed: Deferred.makeUnsafe(),
        finished: () => {
          if (gate.closing) server.closeIdleConnections()
        }
      }
      const filters = filtered(server, gate)
      const http = yield* PlatformNodeHttpServer.make(() => server, { host, port, disablePreemptiveShutdown: true })
      // Forked before `close` is registered, so it closes after it (finalizers run last first).
      const handlers = yield* Scope.fork(yield* Scope.Scope, "sequential")
      yield* Effect.addFinalizer(() => close(server, gate))
      const served = HttpServer.make({
        address: http.address,
        serve: (httpApp, middleware) =>
          Effect.andThen(
            Effect.addFinalizer(() => Effect.sync(() => stopTaking(server, gate))),
            Scope.provide(middleware === undefined ? http.serve(httpApp) : http.serve(httpApp, middleware), handlers)
          )
      })
      return Context.make(HttpServer.HttpServer, served).pipe(Context.add(RequestFilters, filters))
    })
  )
  const listening = Layer.merge(listener, PlatformNodeHttpServer.layerHttpServices)
  return HttpRouter.serve(app, { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provideMerge(
      Layer.catchTag(listening, "ServeError", (error) =>
        failed<Layer.Success<typeof listening>>(new ListenError({ host, port, cause: error.cause }))
      )
    )
  )
}

/**
 * Whether the server still takes requests, and when its listener closed:
 * once shutdown began, a request on a connection kept alive gets 503 at once
 * instead of reaching routes whose sessions are closing.
 */
interface Gate {
  closing: boolean
  /** A response finished: during shutdown its connection, idle now, closes. */
  readonly finished: () => void
  /** Done once the listener closed: every connection gone. */
  readonly closed: Deferred.Deferred<void>
}

/** Step 1 of shutdown: no new connection, no new request; the idle connections close now. */
const stopTaking = (server: Server, gate: Gate): void => {
  if (gate.closing) return
  gate.closing = true
  const closed = () => Deferred.doneUnsafe(gate.closed, Exit.void)
  if (server.listening) server.close(closed)
  else closed()
}

/**
 * Sees a request before the Effect app: returns true when it took the
 * request (it answers `response` itself, or hands both to `app` later, the
 * Effect app as Node's `request` listener), false to leave it to the app.
 * Runs for every request: it must decide at once and cheaply.
 */
export type RequestFilter = (
  request: IncomingMessage,
  response: ServerResponse,
  app: (request: IncomingMessage, response: ServerResponse) => void
) => boolean

/**
 * The request filters of the server `layer` made (available to its routes):
 * a fast path in plain Node for some requests, ahead of effect's HTTP server
 * (the cluster's relay of calls to another runner is one). A filter added
 * is removed when its scope closes.
 */
export class RequestFilters extends Context.Service<
  RequestFilters,
  {
    /** Puts `filter` after those added before it, until the scope closes. */
    readonly add: (filter: RequestFilter) => Effect.Effect<void, never, Scope.Scope>
  }
>()("@effect-mcp/platform-node/NodeHttpServer/RequestFilters") {}

/**
 * Puts the filters in front of the server's `request` listeners (the Effect
 * app, attached later by `serve`): Node has no way to stop an event from
 * reaching the other listeners, so the server's own `emit` is wrapped.
 */
const filtered = (server: Server, gate: Gate): RequestFilters["Service"] => {
  const filters: Array<RequestFilter> = []
  // Typed loosely: its overloads per event name would not take the arguments passed through.
  const emit = server.emit as (this: Server, event: string | symbol, ...args: Array<unknown>) => boolean
  const app = (request: IncomingMessage, response: ServerResponse) => {
    emit.call(server, "request", request, response)
  }
  server.emit = function (this: Server, event: string | symbol, ...args: Array<unknown>): boolean {
    if (event === "request") {
      const request = args[0] as IncomingMessage
      const response = args[1] as ServerResponse
      if (gate.closing) {
        response.writeHead(503, { connection: "close", "content-length": "0" }).end()
        return true
      }
      response.on("finish", gate.finished)
      for (const filter of filters) if (filter(request, response, app)) return true
    }
    return emit.call(this, event, ...args)
  } as Server["emit"]
  return {
    add: (filter) =>
      Effect.acquireRelease(
        Effect.sync(() => filters.push(filter)),
        () =>
          Effect.sync(() => {
            const at = filters.indexOf(filter)
            if (at >= 0) filters.splice(at, 1)
          })
      )
  }
}

/** How long connections still open when the server closes may take to finish before they are cut. */
const closeGraceMs = 250

/**
 * Step 3 of shutdown, once the routes are gone: the connections idle by now
 * close at once (a stream ended in step 2 leaves its connection idle), the
 * others when they finish or after `closeGraceMs` (a client that sent half a
 * request would otherwise hold the close until Node's header timeout).
 */
const close = (server: Server, gate: Gate): Effect.Effect<void> =>
  Effect.suspend(() => {
    stopTaking(server, gate)
    server.closeIdleConnections()
    const cut = setTimeout(() => server.closeAllConnections(), closeGraceMs)
    return Effect.ensuring(
      Deferred.await(gate.closed),
      Effect.sync(() => clearTimeout(cut))
    )
  })

// A Layer that only fails provides whatever the one it replaces did.
const failed = <A>(error: ListenError): Layer.Layer<A, ListenError> =>
  Layer.effectDiscard(Effect.fail(error)) as Layer.Layer<unknown, ListenError> as Layer.Layer<A, ListenError>

const isLoopback = (host: string) =>
  host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host)

/**
 * A Streamable HTTP or legacy SSE endpoint was to listen on a non-loopback
 * address without saying which `Host` and `Origin` values to accept: other
 * machines can reach it, and a page whose name resolves to it could too.
 * Give `allowedHosts` (and `allowedOrigins` for browser clients), or opt out
 * by name with `dnsRebindingProtection: false`.
 */
export class RebindingRequiredError extends Schema.TaggedError<RebindingRequiredError>()("RebindingRequiredError", {
  host: Schema.String
}) {
  override get message(): string {
    return `MCP endpoint on non-loopback address ${this.host}: set allowedHosts to the names clients use, or dnsRebindingProtection: false to turn the Host/Origin checks off`
  }
}

/**
 * Whether a bind may start with these rebinding options: on loopback the
 * engine's default holds; elsewhere an explicit list of hosts or the explicit
 * opt-out is required (protection must never turn itself off).
 */
const rebindingFor = (options: HostChecks & ListenOptions): Layer.Layer<never, RebindingRequiredError> => {
  const host = options.host ?? "127.0.0.1"
  if (isLoopback(host)) return Layer.empty
  if (
    options.dnsRebindingProtection === false ||
    (options.allowedHosts !== undefined && options.allowedHosts.length > 0)
  ) {
    return Layer.empty
  }
  return Layer.effectDiscard(Effect.fail(new RebindingRequiredError({ host })))
}

/** Serves `app` once the bind is allowed: checked before the listener is made, so a refused bind opens no socket. */
const checked = <R>(
  app: Layer.Layer<never, never, R>,
  options: HostChecks & ListenOptions
): Layer.Layer<
  HttpServer.HttpServer,
  HttpServerError.ServeError | RebindingRequiredError,
  Exclude<R, HttpRouter.HttpRouter>
> =>
  Layer.provideMerge(layer(app, options), rebindingFor(options)) as Layer.Layer<
    HttpServer.HttpServer,
    HttpServerError.ServeError | RebindingRequiredError,
    Exclude<R, HttpRouter.HttpRouter>
  >

/**
 * A Streamable HTTP endpoint (at `options.path`, default `/mcp`) on `host:port`.
 *
 * @example
 * ```ts
 * import * as NodeHttpServer from "@effect-mcp/platform-node/NodeHttpServer"
 * import * as McpServer from "@effect-mcp/server/McpServer"
 * import * as Layer from "effect/Layer"
 *
 * const Server = McpServer.layer({ name: "http", version: "1.0.0" })
 *
 * // Each new session runs `McpServer.makeSession`; `NodeMcpServer.layerHttp(Server, options)` wires this for you.
 * export const Http = NodeHttpServer.layerStreamableHttp({
 *   session: McpServer.makeSession,
 *   port: 3000,
 *   allowedOrigins: ["https://app.example.com"]
 * }).pipe(Layer.provide(Server))
 * ```
 */
export const layerStreamableHttp = <E, R>(
  options: StreamableHttpServer.Options<E, R> & ListenOptions
): Layer.Layer<
  HttpServer.HttpServer,
  HttpServerError.ServeError | RebindingRequiredError,
  Exclude<R, StreamableHttpServer.SessionServices>
> => checked(StreamableHttpServer.layer(options), options)

/**
 * A legacy HTTP+SSE endpoint pair (`/sse` and `/messages` by default) on `host:port`.
 *
 * @example
 * ```ts
 * import * as NodeHttpServer from "@effect-mcp/platform-node/NodeHttpServer"
 * import * as McpServer from "@effect-mcp/server/McpServer"
 * import * as Layer from "effect/Layer"
 *
 * const Server = McpServer.layer({ name: "legacy", version: "1.0.0" })
 *
 * export const Legacy = NodeHttpServer.layerSse({ session: McpServer.makeSession, port: 3001 }).pipe(Layer.provide(Server))
 * ```
 */
export const layerSse = <E, R>(
  options: SseServer.Options<E, R> & ListenOptions
): Layer.Layer<
  HttpServer.HttpServer,
  HttpServerError.ServeError | RebindingRequiredError,
  Exclude<R, SseServer.SessionServices>
> => checked(SseServer.layer(options), options)

/** The base URL the server listens on, e.g. `http://127.0.0.1:54321`. */
export const url: Effect.Effect<string, never, HttpServer.HttpServer> = Effect.map(
  Effect.service(HttpServer.HttpServer),
  (server) => HttpServer.formatAddress(server.address)
)
