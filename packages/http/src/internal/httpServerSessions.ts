/**
 * The sessions of a Streamable HTTP server, an adapter over the engine's
 * `SessionRegistry` (which holds them, admits new ones within the limits,
 * binds each to its principal, closes them for a reason, runs idle expiry and
 * the stall watch, and keeps their snapshots): what is HTTP here is which
 * `Mcp-Session-Id` a request names and the refusal it gets, making the
 * HttpSession transport and starting the MCP session over it, and the
 * one-shot session of a stateless request. POST, GET and DELETE find their
 * session here.
 */
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import { CurrentHttpSession, type CurrentHttpSessionShape } from "../CurrentHttpSession.ts"
import type { Authenticated } from "../HttpAuthentication.ts"
import * as Session from "@effect-mcp/engine/Session"
import * as SessionRegistry from "@effect-mcp/engine/SessionRegistry"
import * as SessionSnapshot from "@effect-mcp/engine/SessionSnapshot"
import * as Run from "./httpServerRun.ts"
import { HttpSession, OneShotSession } from "./httpServerSession.ts"
import type { Settings } from "./httpServerStream.ts"
import * as Wire from "./httpWire.ts"
import { newSessionId } from "./sessionId.ts"

/** What the session table needs from the server's options. */
export interface Limits {
  readonly maxSessions: number
  readonly maxSessionsPerClient: number
  /** Who a request comes from, for the per-client quota; undefined counts against `maxSessions` only. */
  readonly clientOf: (request: HttpServerRequest.HttpServerRequest) => string | undefined
  readonly idleMs: number
  /** The id a new session of `request` gets; undefined (or no hook) draws a random one. */
  readonly sessionIdOf?: ((request: HttpServerRequest.HttpServerRequest) => string | undefined) | undefined
}

/** CurrentHttpSession of one session: behaviour on the prototype, one field per session. */
class CurrentHttp implements CurrentHttpSessionShape {
  private readonly http: HttpSession
  constructor(http: HttpSession) {
    this.http = http
  }
  get sessionId(): string | undefined {
    return this.http.id
  }
  get carriesUnsolicited(): boolean {
    return this.http.carriesUnsolicited
  }
  protocolVersion(): string | undefined {
    return this.http.protocolVersion
  }
  closeRequestStream(requestId: JsonRpc.RequestId): Effect.Effect<void> {
    return this.http.closeRequestStream(requestId)
  }
  get closeStandaloneStream(): Effect.Effect<void> {
    return this.http.closeStandaloneStream
  }
  authenticated(): Authenticated | undefined {
    return this.http.authenticated
  }
}

/** The remote address of a request (the default `clientOf`). */
export const remoteAddressOf = (request: HttpServerRequest.HttpServerRequest): string | undefined =>
  Option.getOrUndefined(request.remoteAddress)

/** Counts the SSE connections closed because their client stopped reading, across every server of the process. */
export const evictedConnections: Metric.Metric<number, Metric.CounterState<number>> = Metric.counter(
  "mcp_http_evicted_connections",
  { description: "SSE connections closed because their client stopped reading past the write timeout" }
)

/** The sessions of one Streamable HTTP server. */
export class Sessions {
  /** Where the sessions are held: limits, principals, timers, snapshots and closing (the engine's registry). */
  readonly registry: SessionRegistry.SessionRegistry<HttpSession>
  private stateless = 0
  private readonly settings: Settings
  private readonly limits: Limits
  /** The scope of the server: one-shot sessions live in a child of it. */
  private readonly serverScope: Scope.Scope
  /** The server's own services, on which every session runs. */
  private readonly services: Context.Context<unknown>
  /** Starts one MCP session over the transport it is given. */
  private readonly factory: Effect.Effect<unknown, unknown, unknown>

  constructor(options: {
    readonly settings: Settings
    readonly limits: Limits
    readonly serverScope: Scope.Scope
    readonly services: Context.Context<unknown>
    readonly factory: Effect.Effect<unknown, unknown, unknown>
  }) {
    const { settings, limits } = options
    this.settings = settings
    this.limits = limits
    this.serverScope = options.serverScope
    this.factory = options.factory
    const meter = settings.meter
    this.registry = new SessionRegistry.SessionRegistry<HttpSession>(
      {
        maxSessions: limits.maxSessions,
        maxSessionsPerClient: limits.maxSessionsPerClient,
        idleTimeout: limits.idleMs,
        // Stalled connections looked for at half the write timeout (each SSE body sends its own keepalives).
        watchEvery: settings.writeTimeoutMs / 2,
        onStalled: (closed) => Metric.update(evictedConnections, closed),
        onCount: meter === undefined ? undefined : (delta) => meter.sessions(delta)
      },
      settings.clock
    )
    // Once for every session: the registry finds a session's MCP session by its transport's id.
    this.services = Context.add(options.services, Session.OnSessionStart, this.registry.onStart)
  }

  /**
   * The session a request names, or the refusal: 400 without
   * `Mcp-Session-Id`, 404 when unknown. With `authenticated`, a session
   * another principal owns is unknown too (404: nothing says it exists), and
   * the session's principal becomes this one (same owner, maybe more scopes).
   */
  of(
    request: HttpServerRequest.HttpServerRequest,
    authenticated?: Authenticated | undefined
  ): HttpSession | HttpServerResponse.HttpServerResponse {
    const id = request.headers[Wire.HEADER_SESSION_ID]
    if (id === undefined) return Wire.badRequest("the Mcp-Session-Id header is required")
    const session = this.registry.find(id, authenticated?.owner)
    if (session === undefined || session.isClosed()) return Wire.transportError(404, "Session not found")
    if (authenticated !== undefined) session.authenticated = authenticated
    return session
  }

  /**
   * A new stateful session for the client of `request`, or the refusal (503
   * at the limit, 429 over its quota). With `authenticated`, the session
   * belongs to its owner, who is also the client its quota counts.
   */
  create(
    request: HttpServerRequest.HttpServerRequest,
    authenticated?: Authenticated | undefined
  ): Effect.Effect<HttpSession | HttpServerResponse.HttpServerResponse> {
    return Effect.sync((): HttpSession | HttpServerResponse.HttpServerResponse => {
      const client = authenticated === undefined ? this.limits.clientOf(request) : authenticated.owner
      const refusal = this.registry.admit(client)
      if (refusal !== undefined) return refused(refusal, this.limits.idleMs)
      const chosen = this.limits.sessionIdOf?.(request)
      const id = chosen === undefined || this.registry.has(chosen) ? newSessionId() : chosen
      return this.register(id, client, undefined, authenticated)
    })
  }

  /**
   * Opens a session under a known id from its snapshot (no handshake): a
   * session another process started continues here. Undefined when that id is
   * open already, at the session limit, or when the session is bound to a
   * principal and `authenticated` is not that principal.
   */
  restore(
    id: string,
    snapshot: SessionSnapshot.SessionSnapshot,
    authenticated?: Authenticated | undefined
  ): HttpSession | undefined {
    if (this.registry.has(id) || !this.registry.mayRestore(snapshot, authenticated?.owner)) return undefined
    const client = authenticated?.owner ?? snapshot.client
    // The quota is the client's own business: a moved session counts, but is not refused for it.
    if (this.registry.admit(undefined) !== undefined) return undefined
    const initialized = SessionSnapshot.toInitialized(snapshot)
    const http = this.register(id, client, initialized, authenticated)
    http.protocolVersion = initialized.revision
    // Stream ids after any the session had where it was before (numbered from 0 there).
    http.continueStreamsFrom(this.settings.clock.currentTimeMillisUnsafe())
    return http
  }

  private register(
    id: string,
    client: string | undefined,
    initialized: Session.Initialized | undefined,
    authenticated: Authenticated | undefined
  ): HttpSession {
    const http = this.makeSession(id, client, authenticated)
    // Held before the MCP session starts, so the registry hears it start.
    this.registry.add(id, http)
    this.start(http, initialized)
    return http
  }

  /**
   * A one-shot session for one stateless request, in a child of the server's
   * scope; `close` ends it. It is in no table: nothing can name it.
   */
  oneShot(
    initialized: Session.Initialized | undefined,
    authenticated?: Authenticated | undefined
  ): Effect.Effect<{ readonly http: HttpSession; readonly close: Effect.Effect<void> }> {
    return Effect.suspend(() => {
      const http = this.makeSession(undefined, undefined, authenticated)
      if (initialized !== undefined) http.protocolVersion = initialized.revision
      this.start(http, initialized)
      return Effect.as(Scope.addFinalizer(http.scope, http.shutdown), { http, close: this.close(http) })
    })
  }

  private makeSession(id: string | undefined, client: string | undefined, authenticated: Authenticated | undefined) {
    // A stateful session is closed through the registry (a DELETE, idle expiry, or the server's finalizer,
    // which closes them all): its scope needs no parent, and is the session itself. A one-shot one lives in
    // a child of the server's scope.
    const http =
      id === undefined
        ? new OneShotSession(`stateless-${this.stateless++}`, this.settings, Scope.forkUnsafe(this.serverScope), client)
        : new HttpSession(id, this.settings, client)
    // Before the session starts, so its first handler already sees it.
    if (authenticated !== undefined) http.authenticated = authenticated
    return http
  }

  private start(http: HttpSession, initialized: Session.Initialized | undefined): void {
    const current = new CurrentHttp(http)
    Run.start({
      factory: this.factory,
      server: this.services,
      transport: http,
      scope: http.scope,
      extend: (services) => {
        const withHttp = Context.add(services, CurrentHttpSession, current)
        // Already negotiated: the session starts Ready, no handshake runs.
        return initialized === undefined ? withHttp : Context.add(withHttp, Session.StartInitialized, initialized)
      },
      onFailure: this.close(http)
    })
  }

  /** Ends a session and its MCP session (a stateful one for `reason`). */
  close(http: HttpSession, reason: SessionRegistry.CloseReason = "Deleted"): Effect.Effect<void> {
    return http.id === undefined ? http.end() : this.registry.closeHeld(http.id, http, reason)
  }
}

/** The HTTP answer to a refused new session: 503 at the limit, 429 over the client's quota. */
const refused = (refusal: SessionRegistry.Refusal, idleMs: number): HttpServerResponse.HttpServerResponse =>
  refusal._tag === "Full"
    ? Wire.transportError(503, "Service Unavailable: too many sessions")
    : Wire.transportError(429, `Too Many Requests: at most ${refusal.limit} sessions per client`, {
        "retry-after": String(Math.ceil(idleMs / 1000))
      })
