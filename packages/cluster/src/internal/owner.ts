/**
 * The owner's side of clustered sessions: the Streamable HTTP server holding
 * the sessions whose shards this runner owns, writing down each session's
 * snapshot (SessionState) as it changes, reopening a session another runner
 * started from its snapshot when its shard moved here, and letting go of
 * sessions whose shard moved away.
 *
 * The snapshots come from the server's own change stream: nothing here reads
 * a request body. A change a request made is written before its reply goes
 * out (`takeChange`), so a client that heard the answer finds it on the
 * session's next owner; the rest (a session idle-expired, request ids
 * reserved by a server-initiated request) are written as the stream brings them.
 *
 * Each snapshot says when its session was last active (as the server's idle
 * expiry counts it), and the owner keeps that written down within
 * `activityMs`: a request writes it when the row's is half that old, the
 * sweep (run that often) writes what the rest moved on (a reply ended, a
 * long request still running). A session idle past the idle timeout is thus
 * expired wherever it moves, however often: its next owner does not reopen it.
 */
import type * as SessionSnapshot from "@effect-mcp/engine/SessionSnapshot"
import type * as HttpAuthentication from "@effect-mcp/http/HttpAuthentication"
import * as McpHeaders from "@effect-mcp/http/McpHeaders"
import type * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Headers from "effect/http/Headers"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { SessionStateError, SessionStateShape } from "../SessionState.ts"

/** What the owner needs besides the server and the store. */
export interface OwnerOptions {
  /** Authenticates a request reopening a session bound to a principal. */
  readonly authentication?: HttpAuthentication.Authentication | undefined
  /** This process's name in the rows it writes (its hop target): receiving processes hop to it by that name. */
  readonly self: string
  /**
   * How long a session's activity may go unwritten (the sweep's period): a
   * row's `activeAt` is at most about twice this older than the session's
   * last activity, so a session reopened from it counts that much in its favour.
   */
  readonly activityMs: number
  readonly clock: Clock.Clock
}

/**
 * Sweep periods an answer stays recorded (`SessionState.claimAnswers`): the
 * former owner of a moved session answers no more once its sweep lets the
 * session go, within one period of the move; the rest is margin.
 */
const ANSWER_SWEEPS = 10

/** What the owner counts. */
export interface OwnerStats {
  /** Sessions reopened here from their durable state. */
  restored: number
  /** Sessions let go because their shard moved to another runner. */
  released: number
}

/** The sessions this runner owns. */
export class Owner {
  /**
   * The sessions held here whose snapshot is written down (their owner is its
   * only writer), with the activity the row records.
   */
  private readonly held = new Map<string, number>()
  private readonly restoring = new Map<string, Deferred.Deferred<void>>()
  readonly stats: OwnerStats = { restored: 0, released: 0 }

  readonly server: StreamableHttpServer.StreamableHttpServer
  private readonly store: SessionStateShape
  private readonly authentication: HttpAuthentication.Authentication | undefined
  private readonly self: string
  private readonly activityMs: number
  private readonly clock: Clock.Clock

  constructor(server: StreamableHttpServer.StreamableHttpServer, store: SessionStateShape, options: OwnerOptions) {
    this.server = server
    this.store = store
    this.authentication = options.authentication
    this.self = options.self
    this.activityMs = options.activityMs
    this.clock = options.clock
  }

  /** Writes down the server's session changes as they come, until the scope closes. */
  get run(): Effect.Effect<void, never, Scope.Scope> {
    return Effect.flatMap(this.server.changes, (changes) =>
      Effect.asVoid(Effect.forkScoped(Stream.runForEach(changes, (change) => this.apply(change))))
    )
  }

  /** Writes one change down: a snapshot saved, a session ended by its client or its idle timeout forgotten. */
  private apply(change: StreamableHttpServer.SessionChange): Effect.Effect<void> {
    const id = change.sessionId
    if (change._tag === "Saved") {
      this.held.set(id, change.snapshot.activeAt ?? Number.NEGATIVE_INFINITY)
      return this.write(this.store.put(id, change.snapshot, this.self))
    }
    this.held.delete(id)
    // Released (moved to another runner) or Shutdown (this runner stops): the session goes on elsewhere.
    return change.reason === "Deleted" || change.reason === "Expired" ? this.write(this.store.remove(id)) : Effect.void
  }

  /**
   * Writes down now what serving a request changed about its session (before
   * its reply goes out), or that it was active when the row's activity is
   * half `activityMs` old.
   */
  private flush(sessionId: string | undefined): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (sessionId === undefined) return Effect.void
      const change = this.server.takeChange(sessionId)
      if (change !== undefined) return this.apply(change)
      const recorded = this.held.get(sessionId)
      if (recorded === undefined || this.clock.currentTimeMillisUnsafe() - recorded < this.activityMs / 2) {
        return Effect.void
      }
      const snapshot = this.server.snapshot(sessionId)
      return snapshot === undefined ? Effect.void : this.apply({ _tag: "Saved", sessionId, snapshot })
    })
  }

  /** The principal of a request, when the server authenticates and its credentials hold. */
  private principalOf(request: HttpServerRequest.HttpServerRequest) {
    return this.authentication === undefined
      ? Effect.succeed(undefined)
      : Effect.orElseSucceed(this.authentication.authenticate(request), () => undefined)
  }

  /** Serves a request of a session this runner owns (or one opening a session, or a stateless one). */
  serve(
    request: HttpServerRequest.HttpServerRequest,
    sessionId: string | undefined
  ): Effect.Effect<HttpServerResponse.HttpServerResponse> {
    const served = Effect.flatMap(
      sessionId === undefined || this.server.hasSession(sessionId) ? Effect.void : this.restore(sessionId, request),
      () =>
        Effect.provideService(this.server.handler, HttpServerRequest.HttpServerRequest, this.unheld(request, sessionId))
    )
    // A session an `initialize` opened is named by its reply.
    return Effect.tap(served, (response) => this.flush(sessionId ?? response.headers[McpHeaders.SESSION_ID]))
  }

  /**
   * The request as the server gets it: a resumption (`Last-Event-ID`) of a
   * session this runner owns but neither holds nor could reopen loses that
   * header, and is answered as any request naming an unknown session (404).
   * Such a session ended (deleted, expired, or its runner lost and its row
   * gone): the events a shared store may still keep of it are nobody's to
   * replay. A server sharing the store replays them for a session it does not
   * hold because it cannot tell where that session lives; the owner can:
   * here, or nowhere.
   */
  private unheld(
    request: HttpServerRequest.HttpServerRequest,
    sessionId: string | undefined
  ): HttpServerRequest.HttpServerRequest {
    if (sessionId === undefined || request.headers[McpHeaders.LAST_EVENT_ID] === undefined) return request
    if (this.server.hasSession(sessionId)) return request
    return request.modify({ headers: Headers.remove(request.headers, McpHeaders.LAST_EVENT_ID) })
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
      const stored = yield* Effect.catch(self.store.get(sessionId), (error) =>
        Effect.as(Effect.logWarning(`clustered session state not read: ${error.message}`), undefined)
      )
      if (stored === undefined) return
      // A session bound to a principal reopens for that principal only (the server checks):
      // for anyone else it stays unknown here, and the server answers 404 (or 401 to bad credentials).
      const authenticated = yield* self.principalOf(request)
      // The row's activity may lag the session's by up to twice `activityMs` (the owner died before writing
      // it): counted in the session's favour, so that it is never expired early; past the idle timeout
      // since, the server does not reopen it (it expired where it was) and the client gets 404.
      const activeAt = stored.state.activeAt
      const state =
        activeAt === undefined ? stored.state : { ...stored.state, activeAt: activeAt + 2 * self.activityMs }
      const reopened = yield* self.server.restoreSession(sessionId, state, authenticated)
      if (!reopened) return
      self.stats.restored++
      self.held.set(sessionId, activeAt ?? Number.NEGATIVE_INFINITY)
      // The row names its new holder at once: receiving processes that read it hop here.
      yield* self.write(self.store.touch([sessionId], self.self))
    })
  }

  /**
   * Lets go of the sessions whose shard moved to another runner (their
   * new owner reopens them), forgets the state of those that ended here,
   * writes down the activity of the rest where it moved on (an idle session's
   * row is left as it is: its idle clock runs on wherever it moves), and
   * forgets every row not written for `expireMs` (sessions whose runner was
   * lost and that no request reopened) and the answers recorded more than
   * `ANSWER_SWEEPS` periods ago.
   */
  sweep(owns: (sessionId: string) => boolean, expireMs: number): Effect.Effect<void> {
    return Effect.suspend(() => {
      const moved: Array<string> = []
      const ended: Array<string> = []
      const active: Array<{ readonly sessionId: string; readonly state: SessionSnapshot.SessionSnapshot }> = []
      for (const [id, recorded] of this.held) {
        if (!owns(id)) moved.push(id)
        else if (!this.server.hasSession(id)) ended.push(id)
        else {
          const state = this.server.snapshot(id)
          if (state?.activeAt !== undefined && state.activeAt > recorded) active.push({ sessionId: id, state })
        }
      }
      for (const id of [...moved, ...ended]) this.held.delete(id)
      for (const { sessionId, state } of active) this.held.set(sessionId, state.activeAt!)
      this.stats.released += moved.length
      return Effect.forEach(moved, (id) => this.server.closeSession(id, "Released"), { discard: true }).pipe(
        Effect.andThen(Effect.forEach(ended, (id) => this.write(this.store.remove(id)), { discard: true })),
        // Only rows naming this process: it may not have noticed yet that a shard moved, and the session's
        // new owner may have written its row since.
        Effect.andThen(active.length === 0 ? Effect.void : this.write(this.store.refresh(active, this.self))),
        Effect.andThen(Clock.currentTimeMillis),
        Effect.flatMap((now) =>
          Effect.andThen(
            this.write(Effect.asVoid(this.store.expire(now - expireMs))),
            this.write(this.store.forgetAnswers(now - ANSWER_SWEEPS * this.activityMs))
          )
        )
      )
    })
  }
}
