/**
 * The Streamable HTTP transport, server side: one endpoint answering POST
 * (client messages; replies as JSON or as an SSE stream), GET (a stream for
 * server-initiated messages, or the resumption of a dropped stream with
 * `Last-Event-ID`) and DELETE (ends the session).
 *
 * Each stateful session is an MCP session (built by `options.session`, e.g.
 * `ServerSession.make(...)` or McpServer's `makeSession`) over a transport
 * made for it. Stateless requests (the 2026-07-28 revision, or every request
 * with `stateless: true`) get a session of their own that ends with the reply.
 *
 * A POST's reply starts as soon as its frame was handed to the session, in
 * order (an SSE reply with its priming event or a comment, a JSON reply with
 * its headers), so the client knows it may send the next. Each SSE connection
 * buffers a bounded number of events; `send` suspends while its stream's
 * buffer is full.
 *
 * Only effect's abstract HTTP services are used; serve `handler` (or `layer`,
 * which adds it to an `HttpRouter`) with any platform's HTTP server.
 */
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import type * as Metric from "effect/Metric"
import * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type { CurrentHttpSession } from "./CurrentHttpSession.ts"
import * as EventStore from "./EventStore.ts"
import type * as HttpAuthentication from "./HttpAuthentication.ts"
import * as Cors from "./internal/httpCors.ts"
import * as Headers from "./internal/httpHeaders.ts"
import * as Post from "./internal/httpServerPost.ts"
import * as Get from "./internal/httpServerGet.ts"
import type * as HttpSession from "./internal/httpServerSession.ts"
import * as Sessions from "./internal/httpServerSessions.ts"
import * as Meter from "./internal/httpMeter.ts"
import * as Wire from "./internal/httpWire.ts"
import * as McpMetrics from "@effect-mcp/engine/McpMetrics"
import type * as HttpServeOptions from "./HttpServeOptions.ts"
import type * as SessionRegistry from "@effect-mcp/engine/SessionRegistry"
import type * as SessionSnapshot from "@effect-mcp/engine/SessionSnapshot"
import * as Tracing from "@effect-mcp/engine/Tracing"
import type * as Transport from "@effect-mcp/engine/Transport"

/** Settings of the Streamable HTTP server transport: the shared ones (`HttpServeOptions`) and its own. */
export interface Options<E = never, R = never> extends HttpServeOptions.HttpServeOptions {
  /**
   * Starts one MCP session over the `Transport` it is given, in the `Scope`
   * it is given (closing that scope ends the session): `ServerSession.make(options)`,
   * or McpServer's `makeSession`. `CurrentHttpSession` is provided as well.
   */
  readonly session: Effect.Effect<unknown, E, R>
  /** Where `layer` mounts the endpoint. Default `/mcp`. */
  readonly path?: HttpRouter.PathInput | undefined
  /**
   * Requires credentials on every request (CORS preflights aside), checked
   * by this hook before the body is read (see `HttpAuthentication`): a
   * session belongs to the principal that opened it (another principal
   * naming it gets 404), `maxSessionsPerClient` counts principals (`clientOf`
   * is not used), and handlers read the principal as `CurrentRequest.principal`.
   * `@effect-mcp/auth`'s `HttpProtection` builds one. Default: none.
   */
  readonly authentication?: HttpAuthentication.Authentication | undefined
  /**
   * The `Mcp-Session-Id` an `initialize` opening a session gets, read from
   * its request; undefined (or an id in use) draws a random one. A cluster
   * picks ids whose shard it owns. Default: random ids.
   */
  readonly sessionIdOf?: ((request: HttpServerRequest.HttpServerRequest) => string | undefined) | undefined
}

/**
 * Why a session closed: `"Deleted"` (a DELETE, or `closeSession`), `"Expired"`
 * (idle past the timeout), `"Released"` (`closeSession(id, "Released")`: its
 * keeper let it go to continue elsewhere) or `"Shutdown"` (the server ended).
 */
export type CloseReason = SessionRegistry.CloseReason

/** A change of a session: its new snapshot (`Saved`), or that it closed and why (`Closed`). */
export type SessionChange = SessionRegistry.SessionChange

/** A tool argument mirrored into the `Mcp-Param-<header>` header. */
export type ParamHeader = Headers.ParamHeader

/** The mirrored arguments a tool's `inputSchema` declares with `x-mcp-header` on its top-level properties. */
export const paramHeadersOf: (inputSchema: unknown) => ReadonlyArray<ParamHeader> = Headers.paramHeadersOf

export {
  /** What a session's handlers can ask of the HTTP exchange they run in (see `CurrentHttpSession.ts`). */
  CurrentHttpSession,
  /** Ends the SSE connection carrying the response of the request being served (see `CurrentHttpSession.ts`). */
  closeRequestStream,
  /** The shape of `CurrentHttpSession`. */
  type CurrentHttpSessionShape
} from "./CurrentHttpSession.ts"

/** The Streamable HTTP server: a handler for the endpoint and its sessions. */
export interface StreamableHttpServer {
  /** Answers one request to the endpoint (any method). */
  readonly handler: Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>
  /** Stateful sessions open now. */
  readonly sessionCount: () => number
  /** Ends a session as a DELETE would (or for another `reason`); false when it does not exist. */
  readonly closeSession: (sessionId: string, reason?: CloseReason) => Effect.Effect<boolean>
  /** Whether a stateful session of this id is open here. */
  readonly hasSession: (sessionId: string) => boolean
  /** The snapshot of an open session; undefined when unknown here or not initialized yet. */
  readonly snapshot: (sessionId: string) => SessionSnapshot.SessionSnapshot | undefined
  /**
   * Starts keeping every change of a session's snapshot and every close,
   * until the scope closes; the stream reads them (each session once per
   * read, its latest state). One reader at a time: a cluster writes them down.
   */
  readonly changes: Effect.Effect<Stream.Stream<SessionChange>, never, Scope.Scope>
  /**
   * The change of a session nobody read yet, taken now (undefined when none):
   * a keeper writes a session's snapshot down before answering the request
   * that changed it.
   */
  readonly takeChange: (sessionId: string) => SessionChange | undefined
  /**
   * Reopens a session under the id it had in another process from its
   * snapshot: ready at once, no handshake (a cluster moves sessions this
   * way). False when the id is open already, the server is at `maxSessions`,
   * or the session is bound to a principal other than `authenticated`.
   * With a shared event store that keeps what streams owe
   * (`EventStore.owed`), the requests still unanswered where the session
   * was are answered first, with an InternalError (-32603) on their streams.
   */
  readonly restoreSession: (
    sessionId: string,
    snapshot: SessionSnapshot.SessionSnapshot,
    authenticated?: HttpAuthentication.Authenticated | undefined
  ) => Effect.Effect<boolean>
  /** What the server counted since it started. */
  readonly stats: () => Stats
}

/** What a Streamable HTTP server counts. */
export interface Stats {
  /** SSE connections closed because their client stopped reading (see `writeTimeout`). */
  readonly evictedConnections: number
  /** Idempotent notifications (list_changed, resources/updated) not sent because the same one was still unread. */
  readonly coalescedNotifications: number
}

/** Counts the SSE connections closed because their client stopped reading, across every server of the process. */
export const evictedConnections: Metric.Metric<number, Metric.CounterState<number>> = Sessions.evictedConnections

/**
 * The services the endpoint gives the session factory of each session it
 * starts (its transport, its scope and its HTTP view); the factory's other
 * requirements come from where `make` runs.
 */
export type SessionServices = Transport.Transport | Scope.Scope | CurrentHttpSession

/** Builds the endpoint. Sessions and the idle sweeper live in the current scope. */
export const make = Effect.fnUntraced(function* <E, R>(
  options: Options<E, R>
): Effect.fn.Return<StreamableHttpServer, never, Scope.Scope | Exclude<R, SessionServices>> {
  const serverScope = yield* Scope.Scope
  const context = yield* Effect.context<Exclude<R, SessionServices>>()
  const clock = yield* Clock.Clock
  const stateful = options.stateless !== true
  const store =
    options.eventStore === false
      ? undefined
      : (options.eventStore ?? Context.getOrUndefined(context, EventStore.EventStore) ?? EventStore.makeMemory())
  const retryMs = Duration.toMillis(Duration.fromInputUnsafe(options.retryInterval ?? Duration.seconds(1)))
  const idleMs = Duration.toMillis(Duration.fromInputUnsafe(options.sessionIdleTimeout ?? Duration.minutes(30)))
  const maxBuffered = Math.max(1, options.maxBufferedMessages ?? 1024)
  const writeTimeoutMs = Duration.toMillis(Duration.fromInputUnsafe(options.writeTimeout ?? Duration.seconds(30)))
  const keepaliveMs = Duration.toMillis(Duration.fromInputUnsafe(options.keepaliveInterval ?? Duration.seconds(15)))
  const counters: HttpSession.Counters = { evicted: 0, coalesced: 0 }
  const guard = Wire.makeRebindingGuard(options)
  const allowedOrigin = Cors.makeAllowedOrigin(options)
  const methods = stateful ? ["GET", "POST", "DELETE"] : ["POST"]
  // Undefined when metrics are off: the transport then counts nothing (one branch where it would).
  const meter = McpMetrics.transportMeter("streamable-http", context as Context.Context<never>)
  const settings: HttpSession.Settings = {
    meter,
    clock,
    epoch: clock.currentTimeMillisUnsafe(),
    store,
    retryMs,
    standalone: options.standaloneStream !== false,
    maxBuffered,
    writeTimeoutMs,
    keepaliveMs,
    counters
  }
  const sessions = new Sessions.Sessions({
    settings,
    limits: {
      maxSessions: options.maxSessions ?? 10_000,
      maxSessionsPerClient: options.maxSessionsPerClient ?? 1_000,
      clientOf: options.clientOf ?? Sessions.remoteAddressOf,
      idleMs,
      sessionIdOf: options.sessionIdOf
    },
    serverScope,
    services: context as Context.Context<unknown>,
    factory: options.session as Effect.Effect<unknown, unknown, unknown>
  })
  const registry = sessions.registry
  if (stateful) yield* registry.runTimers
  yield* Effect.addFinalizer(() => registry.closeAll)

  const postContext: Post.Context = {
    supportedVersions: options.supportedVersions ?? ProtocolVersion.all,
    stateful,
    json: options.responseMode === "json",
    maxBodyBytes: options.maxBodyBytes ?? 4 * 1024 * 1024,
    meter,
    sessions,
    paramHeaders: options.paramHeaders,
    authentication: options.authentication,
    requiredScopes: options.requiredScopes,
    traced: Tracing.enabled(context as Context.Context<never>)
  }
  const getContext: Get.Context = {
    supportedVersions: postContext.supportedVersions,
    standalone: stateful && options.standaloneStream !== false,
    resumable: store !== undefined,
    store,
    sessions
  }

  const route = (request: HttpServerRequest.HttpServerRequest, authenticated?: HttpAuthentication.Authenticated) => {
    switch (request.method) {
      case "POST":
        return Post.handle(request, postContext, authenticated)
      case "GET":
        return stateful ? Get.get(request, getContext, authenticated) : Effect.succeed(Wire.methodNotAllowed("POST"))
      case "DELETE":
        return stateful ? Get.del(request, getContext, authenticated) : Effect.succeed(Wire.methodNotAllowed("POST"))
      default:
        return Effect.succeed(Wire.methodNotAllowed(methods.join(", ")))
    }
  }
  const authentication = options.authentication
  // Without authentication a request goes straight to its route; with it, only once authenticated.
  const serve =
    authentication === undefined
      ? route
      : (request: HttpServerRequest.HttpServerRequest) =>
          Effect.matchEffect(authentication.authenticate(request), {
            onFailure: Effect.succeed,
            onSuccess: (authenticated) => route(request, authenticated)
          })

  const unmetered = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const refused = guard(request)
    if (refused !== undefined) return refused
    // Only a request from a web page carries Origin: the others pay nothing for CORS.
    const origin = request.headers["origin"] === undefined ? undefined : allowedOrigin(request)
    if (origin === undefined) return yield* serve(request)
    if (Cors.isPreflight(request)) return Cors.preflight(request, origin, methods)
    return Cors.withCors(yield* serve(request), origin)
  })

  const handler = Meter.handler(unmetered, meter)

  return {
    handler,
    sessionCount: () => registry.size,
    closeSession: (id, reason = "Deleted") => registry.close(id, reason),
    hasSession: (id) => registry.has(id),
    snapshot: (id) => registry.snapshot(id),
    changes: registry.changeStream,
    takeChange: (id) => registry.takeChange(id),
    restoreSession: (id, snapshot, authenticated) =>
      Effect.suspend(() => {
        const session = sessions.restore(id, snapshot, authenticated)
        // What its requests in flight where it was before still owe is answered before it serves any here.
        return session === undefined ? Effect.succeed(false) : Effect.as(session.settleLost, true)
      }),
    stats: () => ({ evictedConnections: counters.evicted, coalescedNotifications: counters.coalesced })
  } satisfies StreamableHttpServer
})

/**
 * Adds the endpoint to the `HttpRouter` at `options.path` (default `/mcp`).
 * The server lives as long as the router's layer.
 */
export const layer = <E, R>(
  options: Options<E, R>
): Layer.Layer<never, never, HttpRouter.HttpRouter | Exclude<R, SessionServices>> =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const router = yield* HttpRouter.HttpRouter
      const server = yield* make(options)
      yield* router.add("*", options.path ?? "/mcp", server.handler)
    })
  )
