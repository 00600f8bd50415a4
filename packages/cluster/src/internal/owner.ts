/**
 * The owner's side of clustered sessions: the Streamable HTTP server holding
 * the sessions whose shards this runner owns, what it writes down about
 * them (SessionState) as their requests pass, reopening a session another
 * runner started when its shard moved here, and letting go of sessions whose
 * shard moved away.
 */
import type * as HttpAuthentication from "@effect-mcp/engine/HttpAuthentication"
import type * as StreamableHttpServer from "@effect-mcp/engine/StreamableHttpServer"
import * as Session from "@effect-mcp/engine/Session"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Stream from "effect/Stream"
import type { SessionStateError, SessionStateShape, State } from "../SessionState.ts"

const HEADER_SESSION_ID = "mcp-session-id"

/**
 * An exchange sent this long (ms) before its session was reopened here was in
 * flight when the former owner was lost (shards move only after its locks
 * expire, seconds later); the margin covers clocks a little apart.
 */
const STALE_MS = 1_000

/** The methods whose effect on a session is part of its durable state. */
const statefulMethod = /"(?:logging\/setLevel|resources\/(?:un)?subscribe)"/

interface Message {
  readonly id?: unknown
  readonly method?: unknown
  readonly params?: { readonly [key: string]: unknown }
}

const parse = (body: string): ReadonlyArray<Message> => {
  try {
    const parsed = JSON.parse(body) as unknown
    return (Array.isArray(parsed) ? parsed : [parsed]) as ReadonlyArray<Message>
  } catch {
    return []
  }
}

/** What the owner counts. */
export interface OwnerStats {
  /** Sessions reopened here from their durable state. */
  restored: number
  /** Sessions let go because their shard moved to another runner. */
  released: number
}

/** The sessions this runner owns. */
export class Owner {
  /** What was written down about each session held here (its owner is its only writer). */
  private readonly states = new Map<string, State>()
  private readonly restoring = new Map<string, Deferred.Deferred<void>>()
  /** When each session reopened here was reopened (epoch ms). */
  private readonly reopenedAt = new Map<string, number>()
  private replayId = 0
  readonly stats: OwnerStats = { restored: 0, released: 0 }

  readonly server: StreamableHttpServer.StreamableHttpServer
  private readonly store: SessionStateShape
  private readonly supported: ReadonlyArray<ProtocolVersion.ProtocolVersion>
  private readonly clientOf: (request: HttpServerRequest.HttpServerRequest) => string | undefined
  private readonly authentication: HttpAuthentication.Authentication | undefined

  constructor(
    server: StreamableHttpServer.StreamableHttpServer,
    store: SessionStateShape,
    supported: ReadonlyArray<ProtocolVersion.ProtocolVersion>,
    clientOf: (request: HttpServerRequest.HttpServerRequest) => string | undefined,
    authentication?: HttpAuthentication.Authentication | undefined
  ) {
    this.server = server
    this.store = store
    this.supported = supported
    this.clientOf = clientOf
    this.authentication = authentication
  }

  /** The principal of a request, when the server authenticates and its credentials hold. */
  private principalOf(request: HttpServerRequest.HttpServerRequest) {
    return this.authentication === undefined
      ? Effect.succeed(undefined)
      : Effect.orElseSucceed(this.authentication.authenticate(request), () => undefined)
  }

  /**
   * Serves a request of a session this runner owns (or one opening a
   * session, or a stateless one); `body` is the POST body when it was read
   * already (a forwarded request).
   */
  serve(
    request: HttpServerRequest.HttpServerRequest,
    sessionId: string | undefined,
    body?: string
  ): Effect.Effect<HttpServerResponse.HttpServerResponse> {
    const served = Effect.flatMap(
      sessionId === undefined || this.server.hasSession(sessionId) ? Effect.void : this.restore(sessionId, request),
      () => Effect.provideService(this.server.handler, HttpServerRequest.HttpServerRequest, request)
    )
    return Effect.tap(served, (response) => this.record(request, sessionId, body, response))
  }

  /**
   * Serves a forwarded exchange sent at `sentAt` (the sender's clock; `body`
   * is undefined when the request still holds it: a direct hop), or
   * refuses it (undefined) when it was sent well before this runner reopened
   * its session: the cluster re-sent it after the session's former owner was
   * lost, which may have run it already.
   */
  serveForwarded(
    request: HttpServerRequest.HttpServerRequest,
    sessionId: string | undefined,
    body: string | undefined,
    sentAt: number | undefined
  ): Effect.Effect<HttpServerResponse.HttpServerResponse | undefined> {
    if (sessionId === undefined || sentAt === undefined) return this.serve(request, sessionId, body)
    return Effect.flatMap(this.server.hasSession(sessionId) ? Effect.void : this.restore(sessionId, request), () => {
      const reopened = this.reopenedAt.get(sessionId)
      return reopened !== undefined && sentAt < reopened - STALE_MS
        ? Effect.succeed(undefined)
        : this.serve(request, sessionId, body)
    })
  }

  /** Writes down what a request changed in its session's durable state. */
  private record(
    request: HttpServerRequest.HttpServerRequest,
    sessionId: string | undefined,
    body: string | undefined,
    response: HttpServerResponse.HttpServerResponse
  ): Effect.Effect<void> {
    if (response.status >= 300) return Effect.void
    if (request.method === "DELETE") {
      if (sessionId === undefined) return Effect.void
      this.states.delete(sessionId)
      return this.write(this.store.remove(sessionId))
    }
    if (request.method !== "POST") return Effect.void
    const opened = sessionId === undefined ? response.headers[HEADER_SESSION_ID] : undefined
    if (sessionId === undefined && opened === undefined) return Effect.void
    return Effect.flatMap(
      body === undefined ? Effect.orElseSucceed(request.text, () => "") : Effect.succeed(body),
      (text) => {
        if (opened !== undefined) return this.opened(opened, text, request)
        if (!statefulMethod.test(text)) return Effect.void
        const state = this.states.get(sessionId!)
        if (state === undefined) return Effect.void
        let logLevel = state.logLevel
        const subscriptions = new Set(state.subscriptions)
        for (const message of parse(text)) {
          const params = message.params ?? {}
          if (message.method === "logging/setLevel" && typeof params.level === "string") logLevel = params.level
          else if (message.method === "resources/subscribe" && typeof params.uri === "string") {
            subscriptions.add(params.uri)
          } else if (message.method === "resources/unsubscribe" && typeof params.uri === "string") {
            subscriptions.delete(params.uri)
          }
        }
        const next: State = { ...state, logLevel, subscriptions: [...subscriptions] }
        this.states.set(sessionId!, next)
        return this.write(this.store.put(sessionId!, next))
      }
    )
  }

  /** A session was opened by `initialize`: its negotiated state is written down. */
  private opened(sessionId: string, body: string, request: HttpServerRequest.HttpServerRequest): Effect.Effect<void> {
    const initialize = parse(body).find((message) => message.method === "initialize")
    const params = initialize?.params
    if (params === undefined) return Effect.void
    const requested = typeof params.protocolVersion === "string" ? params.protocolVersion : undefined
    const revision = requested === undefined ? undefined : Session.negotiate(requested, this.supported)
    if (revision === undefined) return Effect.void
    // Authenticated already by the server that opened it: this only reads whom it is bound to.
    return Effect.flatMap(this.principalOf(request), (authenticated) => {
      const state: State = {
        revision,
        capabilities: (params.capabilities as State["capabilities"] | undefined) ?? {},
        clientInfo: params.clientInfo as State["clientInfo"],
        client: authenticated?.owner ?? this.clientOf(request),
        logLevel: undefined,
        subscriptions: [],
        ...(authenticated === undefined ? {} : { principal: authenticated.owner })
      }
      this.states.set(sessionId, state)
      return this.write(this.store.put(sessionId, state))
    })
  }

  private write(effect: Effect.Effect<void, SessionStateError>): Effect.Effect<void> {
    return Effect.catch(effect, (error) => Effect.logWarning(`clustered session state not written: ${error.message}`))
  }

  /**
   * Reopens a session whose shard moved here, from its durable state: ready
   * at once (no handshake), its log level and subscriptions set again.
   * Concurrent requests of the session wait for the one reopening it.
   */
  private restore(sessionId: string, request: HttpServerRequest.HttpServerRequest): Effect.Effect<void> {
    return Effect.suspend(() => {
      const running = this.restoring.get(sessionId)
      if (running !== undefined) return Deferred.await(running)
      const done = Deferred.makeUnsafe<void>()
      this.restoring.set(sessionId, done)
      return this.reopen(sessionId, request).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            this.restoring.delete(sessionId)
            Deferred.doneUnsafe(done, Exit.void)
          })
        )
      )
    })
  }

  private reopen(sessionId: string, request: HttpServerRequest.HttpServerRequest): Effect.Effect<void> {
    const self = this
    return Effect.gen(function* () {
      const state = yield* Effect.catch(self.store.get(sessionId), (error) =>
        Effect.as(Effect.logWarning(`clustered session state not read: ${error.message}`), undefined)
      )
      if (state === undefined) return
      // A session bound to a principal is reopened for that principal only: for anyone else
      // it stays unknown here, and the server answers 404 (or 401 to bad credentials).
      let authenticated: HttpAuthentication.Authenticated | undefined
      if (self.authentication !== undefined) {
        authenticated = yield* self.principalOf(request)
        if (authenticated === undefined || authenticated.owner !== state.principal) return
      }
      const reopened = yield* self.server.restoreSession(sessionId, {
        initialized: {
          revision: state.revision as ProtocolVersion.ProtocolVersion,
          peerCapabilities: state.capabilities,
          peerInfo: state.clientInfo
        },
        client: state.client,
        authenticated
      })
      if (!reopened) return
      self.stats.restored++
      self.reopenedAt.set(sessionId, yield* Clock.currentTimeMillis)
      self.states.set(sessionId, state)
      if (state.logLevel !== undefined) {
        yield* self.replay(sessionId, state, request, "logging/setLevel", { level: state.logLevel })
      }
      for (const uri of state.subscriptions)
        yield* self.replay(sessionId, state, request, "resources/subscribe", { uri })
    })
  }

  /** Sends a reopened session a request its client had sent to its former owner; the reply is dropped. */
  private replay(
    sessionId: string,
    state: State,
    request: HttpServerRequest.HttpServerRequest,
    method: string,
    params: { readonly [key: string]: unknown }
  ): Effect.Effect<void> {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      [HEADER_SESSION_ID]: sessionId,
      "mcp-protocol-version": state.revision
    }
    // The same Host and credentials as the request that brought the session here pass the same checks.
    for (const name of ["host", "authorization"]) {
      const value = request.headers[name]
      if (value !== undefined) headers[name] = value
    }
    const body = JSON.stringify({ jsonrpc: "2.0", id: `effect-mcp-cluster-${this.replayId++}`, method, params })
    const replayed = HttpServerRequest.fromWeb(
      new Request(`http://cluster${request.url}`, { method: "POST", headers, body })
    )
    return Effect.provideService(this.server.handler, HttpServerRequest.HttpServerRequest, replayed).pipe(
      Effect.flatMap((response) =>
        response.body._tag === "Stream" ? Stream.runDrain(response.body.stream) : Effect.void
      ),
      Effect.catchCause((cause) => Effect.logWarning("a reopened session's state was not fully replayed", cause))
    )
  }

  /**
   * Lets go of the sessions whose shard moved to another runner (their
   * new owner reopens them), forgets the state of those that ended here,
   * marks the rest as still open, and forgets every row not touched for
   * `expireMs` (sessions whose runner was lost and that no request reopened).
   */
  sweep(owns: (sessionId: string) => boolean, expireMs: number): Effect.Effect<void> {
    return Effect.suspend(() => {
      const moved: Array<string> = []
      const ended: Array<string> = []
      for (const id of this.states.keys()) {
        if (!owns(id)) moved.push(id)
        else if (!this.server.hasSession(id)) ended.push(id)
      }
      for (const id of [...moved, ...ended]) {
        this.states.delete(id)
        this.reopenedAt.delete(id)
      }
      this.stats.released += moved.length
      const held = [...this.states.keys()]
      return Effect.forEach(moved, (id) => this.server.closeSession(id), { discard: true }).pipe(
        Effect.andThen(Effect.forEach(ended, (id) => this.write(this.store.remove(id)), { discard: true })),
        Effect.andThen(held.length === 0 ? Effect.void : this.write(this.store.touch(held))),
        Effect.andThen(Clock.currentTimeMillis),
        Effect.flatMap((now) => this.write(Effect.asVoid(this.store.expire(now - expireMs))))
      )
    })
  }
}
