/**
 * The sessions of a Streamable HTTP server: which `Mcp-Session-Id` names
 * which session, making one (within the server's limit and the client's
 * quota), the one-shot session of a stateless request, closing them, and the
 * timers that close idle sessions and stalled connections. POST, GET and
 * DELETE find their session here.
 */
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { CurrentHttpSession, type CurrentHttpSessionShape } from "../CurrentHttpSession.ts"
import type { Authenticated } from "../HttpAuthentication.ts"
import * as Session from "@effect-mcp/engine/Session"
import * as SessionSnapshot from "@effect-mcp/engine/SessionSnapshot"
import * as Run from "./httpServerRun.ts"
import { HttpSession } from "./httpServerSession.ts"
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
  readonly keepaliveMs: number
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

/**
 * Why a session closed: its client deleted it, it sat idle past the timeout,
 * its keeper let it go to continue elsewhere (`closeSession(id, "Released")`),
 * or the server ended.
 */
export type CloseReason = "Deleted" | "Expired" | "Released" | "Shutdown"

/** What changed about a session: its snapshot now, or that it closed (and why). */
export type SessionChange =
  | { readonly _tag: "Saved"; readonly sessionId: string; readonly snapshot: SessionSnapshot.SessionSnapshot }
  | { readonly _tag: "Closed"; readonly sessionId: string; readonly reason: CloseReason }

/**
 * The sessions whose snapshot changed and nobody read yet, each once (the
 * next read sees the latest state): bounded by the number of sessions.
 */
class Changes {
  readonly pending = new Map<string, CloseReason | "Changed">()
  readonly ids: Queue.Queue<string>

  constructor(ids: Queue.Queue<string>) {
    this.ids = ids
  }

  mark(id: string, what: CloseReason | "Changed"): void {
    const queued = this.pending.has(id)
    // A close stays a close; a change after it (none happens) would not undo it.
    if (!queued || what !== "Changed") this.pending.set(id, what)
    if (!queued) Queue.offerUnsafe(this.ids, id)
  }
}

/** The session table of one server. */
export class Sessions {
  private readonly table = new Map<string, HttpSession>()
  /** The MCP session over each stateful HttpSession, once its factory made it. */
  private readonly cores = new Map<string, Session.SessionShape>()
  /** Set once someone reads the changes: until then none are kept. */
  private changes: Changes | undefined = undefined
  // Sessions open per client; a client without any is not kept.
  private readonly perClient = new Map<string, number>()
  private stateless = 0
  private keepaliveAt: number
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
    this.settings = options.settings
    this.limits = options.limits
    this.serverScope = options.serverScope
    this.services = options.services
    this.factory = options.factory
    this.keepaliveAt = options.settings.clock.currentTimeMillisUnsafe()
  }

  /** Stateful sessions open now. */
  get size(): number {
    return this.table.size
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
    const session = this.table.get(id)
    if (session === undefined || session.isClosed()) return Wire.transportError(404, "Session not found")
    if (authenticated !== undefined) {
      if (session.client !== authenticated.owner) return Wire.transportError(404, "Session not found")
      session.authenticated = authenticated
    }
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
    return Effect.suspend((): Effect.Effect<HttpSession | HttpServerResponse.HttpServerResponse> => {
      const { maxSessions, maxSessionsPerClient, idleMs } = this.limits
      if (this.table.size >= maxSessions) {
        return Effect.succeed(Wire.transportError(503, "Service Unavailable: too many sessions"))
      }
      const client = authenticated === undefined ? this.limits.clientOf(request) : authenticated.owner
      if (client !== undefined && (this.perClient.get(client) ?? 0) >= maxSessionsPerClient) {
        return Effect.succeed(
          Wire.transportError(429, `Too Many Requests: at most ${maxSessionsPerClient} sessions per client`, {
            "retry-after": String(Math.ceil(idleMs / 1000))
          })
        )
      }
      const chosen = this.limits.sessionIdOf?.(request)
      const id = chosen === undefined || this.table.has(chosen) ? newSessionId() : chosen
      return Effect.succeed(this.register(id, client, undefined, authenticated))
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
    if (this.table.has(id) || this.table.size >= this.limits.maxSessions) return undefined
    if (snapshot.principal !== undefined && authenticated?.owner !== snapshot.principal) return undefined
    const initialized = SessionSnapshot.toInitialized(snapshot)
    const http = this.register(id, authenticated?.owner ?? snapshot.client, initialized, authenticated)
    http.protocolVersion = initialized.revision
    // Stream ids after any the session had where it was before (numbered from 0 there).
    http.continueStreamsFrom(this.settings.clock.currentTimeMillisUnsafe())
    return http
  }

  /** Whether a stateful session of this id is open. */
  has(id: string): boolean {
    return this.table.has(id)
  }

  /** The snapshot of an open session, or undefined (unknown here, or not initialized yet). */
  snapshot(id: string): SessionSnapshot.SessionSnapshot | undefined {
    const http = this.table.get(id)
    const core = this.cores.get(id)
    if (http === undefined || core === undefined) return undefined
    return SessionSnapshot.of(core.state, { client: http.client, principal: http.authenticated?.owner })
  }

  /**
   * The change of session `id` nobody read yet, taken now (so a keeper can
   * write a session's snapshot down before its reply goes out); undefined
   * when there is none.
   */
  takeChange(id: string): SessionChange | undefined {
    const changes = this.changes
    const what = changes?.pending.get(id)
    if (changes === undefined || what === undefined) return undefined
    changes.pending.delete(id)
    if (what !== "Changed") return { _tag: "Closed", sessionId: id, reason: what }
    const snapshot = this.snapshot(id)
    return snapshot === undefined ? undefined : { _tag: "Saved", sessionId: id, snapshot }
  }

  /**
   * Starts keeping the changes of every session's snapshot, and every close,
   * until the scope closes: the stream reads them, each session at most once
   * per read (its latest state). One reader at a time.
   */
  get changeStream(): Effect.Effect<Stream.Stream<SessionChange>, never, Scope.Scope> {
    return Effect.map(
      Effect.acquireRelease(
        Effect.map(Queue.unbounded<string>(), (ids) => (this.changes = new Changes(ids))),
        (changes) =>
          Effect.sync(() => {
            if (this.changes === changes) this.changes = undefined
          })
      ),
      (changes) =>
        Stream.fromQueue(changes.ids).pipe(
          Stream.map((id) => this.takeChange(id)),
          Stream.filter((change): change is SessionChange => change !== undefined)
        )
    )
  }

  private changed(id: string, what: CloseReason | "Changed"): void {
    this.changes?.mark(id, what)
  }

  private register(
    id: string,
    client: string | undefined,
    initialized: Session.Initialized | undefined,
    authenticated: Authenticated | undefined
  ): HttpSession {
    const http = this.open(id, client, initialized, authenticated)
    // A factory that failed at once has closed the session already.
    if (!http.isClosed()) {
      this.table.set(id, http)
      this.settings.meter?.sessions(1)
      if (client !== undefined) this.perClient.set(client, (this.perClient.get(client) ?? 0) + 1)
    }
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
      const http = this.open(undefined, undefined, initialized, authenticated)
      if (initialized !== undefined) http.protocolVersion = initialized.revision
      return Effect.as(Scope.addFinalizer(http.scope, http.shutdown), { http, close: this.close(http) })
    })
  }

  private open(
    id: string | undefined,
    client: string | undefined,
    initialized?: Session.Initialized,
    authenticated?: Authenticated
  ): HttpSession {
    // A stateful session is closed by `close` (a DELETE, idle expiry, or the
    // server's finalizer, which closes them all): its scope needs no parent.
    // A one-shot one lives in a child of the server's scope.
    const scope = id === undefined ? Scope.forkUnsafe(this.serverScope) : Scope.makeUnsafe()
    const http = new HttpSession(id, id ?? `stateless-${this.stateless++}`, this.settings, scope, client)
    // Before the session starts, so its first handler already sees it.
    if (authenticated !== undefined) http.authenticated = authenticated
    const current = new CurrentHttp(http)
    Run.start({
      factory: this.factory,
      server: this.services,
      transport: http,
      scope,
      extend: (services) => {
        const withHttp = Context.add(
          Context.add(services, CurrentHttpSession, current),
          Session.OnSessionStart,
          id === undefined ? undefined : (core) => this.started(id, http, core)
        )
        // Already negotiated: the session starts Ready, no handshake runs.
        return initialized === undefined ? withHttp : Context.add(withHttp, Session.StartInitialized, initialized)
      },
      onFailure: this.close(http)
    })
    return http
  }

  /** The MCP session over a stateful HttpSession started: its snapshot is kept from now on. */
  private started(id: string, http: HttpSession, core: Session.SessionShape): void {
    if (http.isClosed()) return
    this.cores.set(id, core)
    core.state.onChange = () => this.changed(id, "Changed")
  }

  /** Ends a session and its MCP session; `reason` goes with the change it makes. */
  close(http: HttpSession, reason: CloseReason = "Deleted"): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (http.id !== undefined && this.table.get(http.id) === http) {
        this.table.delete(http.id)
        const core = this.cores.get(http.id)
        if (core !== undefined) core.state.onChange = undefined
        this.cores.delete(http.id)
        this.changed(http.id, reason)
        this.settings.meter?.sessions(-1)
        const client = http.client
        if (client !== undefined) {
          const left = (this.perClient.get(client) ?? 1) - 1
          if (left > 0) this.perClient.set(client, left)
          else this.perClient.delete(client)
        }
      }
      return Effect.andThen(http.shutdown, Scope.close(http.scope, Exit.void))
    })
  }

  /** Ends a session as a DELETE would (or for `reason`); false when it does not exist. */
  closeSession(id: string, reason: CloseReason = "Deleted"): Effect.Effect<boolean> {
    return Effect.suspend(() => {
      const http = this.table.get(id)
      return http === undefined ? Effect.succeed(false) : Effect.as(this.close(http, reason), true)
    })
  }

  /** Closes every session (the server ends). */
  get closeAll(): Effect.Effect<void> {
    return Effect.suspend(() =>
      Effect.forEach([...this.table.values()], (http) => this.close(http, "Shutdown"), { discard: true })
    )
  }

  /** Closes the sessions idle for the idle timeout. */
  get sweep(): Effect.Effect<void> {
    return Effect.suspend(() => {
      const now = this.settings.clock.currentTimeMillisUnsafe()
      const idle: Array<HttpSession> = []
      for (const http of this.table.values()) {
        if (!http.isBusy() && http.idleFor(now) >= this.limits.idleMs) idle.push(http)
      }
      return Effect.forEach(idle, (http) => this.close(http, "Expired"), { discard: true })
    })
  }

  /** Closes stalled connections and sends keepalives when their interval has passed. */
  get watch(): Effect.Effect<void> {
    return Effect.suspend(() => {
      const now = this.settings.clock.currentTimeMillisUnsafe()
      const keepalive = now - this.keepaliveAt >= this.limits.keepaliveMs
      if (keepalive) this.keepaliveAt = now
      return Effect.flatMap(
        Effect.forEach(this.table.values(), (http) => http.watch(keepalive)),
        (closed) => {
          const total = closed.reduce((sum, n) => sum + n, 0)
          return total === 0 ? Effect.void : Metric.update(evictedConnections, total)
        }
      )
    })
  }

  /**
   * Runs the timers in the current scope: idle sessions swept at a tenth of
   * the timeout (at most once a minute), stalled connections looked for at
   * half the write timeout (keepalives go out at their own interval).
   */
  get runTimers(): Effect.Effect<void, never, Scope.Scope> {
    const sweepEvery = Math.max(1, Math.min(this.limits.idleMs / 10, 60_000))
    const watchEvery = Math.max(1, Math.min(this.limits.keepaliveMs, this.settings.writeTimeoutMs / 2))
    return Effect.asVoid(
      Effect.all([
        Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(Duration.millis(sweepEvery)), this.sweep))),
        Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(Duration.millis(watchEvery)), this.watch)))
      ])
    )
  }
}
