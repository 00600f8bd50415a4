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
 */
import type * as HttpAuthentication from "@effect-mcp/http/HttpAuthentication"
import * as McpHeaders from "@effect-mcp/http/McpHeaders"
import type * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { SessionStateError, SessionStateShape } from "../SessionState.ts"

/**
 * An exchange sent this long (ms) before its session was reopened here, after
 * its former owner was lost, may have been in flight on that owner (shards of
 * a lost runner move seconds later); the margin covers clocks a little apart.
 *
 * The rule is careful only when it must be. effect/cluster sends an exchange
 * again to the shard's next owner when the connection to the runner it went
 * to breaks, and only a runner that died can have run it before that break.
 * A runner that gave the shard up alive (a rebalance as a runner joins, or
 * its locks lapsed while it was starved of CPU) ran none of what reaches the
 * next owner: it refuses what comes for a shard it no longer holds, and what
 * it ran was answered. So a session is reopened under the rule only when its
 * former owner (the process named in its row) is gone or cannot say it runs;
 * one handed over by a live owner serves every exchange, however long it
 * waited for the shard to move.
 */
const STALE_MS = 1_000

/** What the owner needs besides the server and the store. */
export interface OwnerOptions {
  /** Authenticates a request reopening a session bound to a principal. */
  readonly authentication?: HttpAuthentication.Authentication | undefined
  /** This process's name in the rows it writes (unique per process), when others can ask whether it runs. */
  readonly self?: string | undefined
  /** Whether the process a row names still runs (false when it cannot tell). */
  readonly alive: (owner: string) => Effect.Effect<boolean>
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
  /** The sessions held here whose snapshot is written down (their owner is its only writer). */
  private readonly held = new Set<string>()
  private readonly restoring = new Map<string, Deferred.Deferred<void>>()
  /** When each session reopened here was reopened (epoch ms). */
  private readonly reopenedAt = new Map<string, number>()
  readonly stats: OwnerStats = { restored: 0, released: 0 }

  readonly server: StreamableHttpServer.StreamableHttpServer
  private readonly store: SessionStateShape
  private readonly authentication: HttpAuthentication.Authentication | undefined
  private readonly self: string | undefined
  private readonly alive: (owner: string) => Effect.Effect<boolean>

  constructor(server: StreamableHttpServer.StreamableHttpServer, store: SessionStateShape, options: OwnerOptions) {
    this.server = server
    this.store = store
    this.authentication = options.authentication
    this.self = options.self
    this.alive = options.alive
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
      this.held.add(id)
      return this.write(this.store.put(id, change.snapshot, this.self))
    }
    this.held.delete(id)
    this.reopenedAt.delete(id)
    // Released (moved to another runner) or Shutdown (this runner stops): the session goes on elsewhere.
    return change.reason === "Deleted" || change.reason === "Expired" ? this.write(this.store.remove(id)) : Effect.void
  }

  /** Writes down now what serving a request changed about its session (before its reply goes out). */
  private flush(sessionId: string | undefined): Effect.Effect<void> {
    return Effect.suspend(() => {
      const change = sessionId === undefined ? undefined : this.server.takeChange(sessionId)
      return change === undefined ? Effect.void : this.apply(change)
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
      () => Effect.provideService(this.server.handler, HttpServerRequest.HttpServerRequest, request)
    )
    // A session an `initialize` opened is named by its reply.
    return Effect.tap(served, (response) => this.flush(sessionId ?? response.headers[McpHeaders.SESSION_ID]))
  }

  /**
   * Serves a forwarded exchange sent at `sentAt` (the sender's clock), or
   * refuses it (undefined) when it was sent well before this runner reopened
   * its session: the cluster re-sent it after the session's former owner was
   * lost, which may have run it already.
   */
  serveForwarded(
    request: HttpServerRequest.HttpServerRequest,
    sessionId: string | undefined,
    sentAt: number | undefined
  ): Effect.Effect<HttpServerResponse.HttpServerResponse | undefined> {
    if (sessionId === undefined || sentAt === undefined) return this.serve(request, sessionId)
    return Effect.flatMap(this.server.hasSession(sessionId) ? Effect.void : this.restore(sessionId, request), () => {
      const reopened = this.reopenedAt.get(sessionId)
      return reopened !== undefined && sentAt < reopened - STALE_MS
        ? Effect.succeed(undefined)
        : this.serve(request, sessionId)
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
      // When the session began to reopen here: an exchange sent well before that may have reached the lost owner;
      // the question below may take seconds, and what waited for it was not in flight anywhere else.
      const startedAt = yield* Clock.currentTimeMillis
      const stored = yield* Effect.catch(self.store.get(sessionId), (error) =>
        Effect.as(Effect.logWarning(`clustered session state not read: ${error.message}`), undefined)
      )
      if (stored === undefined) return
      // A session bound to a principal reopens for that principal only (the server checks):
      // for anyone else it stays unknown here, and the server answers 404 (or 401 to bad credentials).
      const authenticated = yield* self.principalOf(request)
      // Asked before the session opens here: the former owner still runs, or it was lost (see STALE_MS).
      const handedOver = stored.owner !== undefined && (stored.owner === self.self || (yield* self.alive(stored.owner)))
      const reopened = yield* self.server.restoreSession(sessionId, stored.state, authenticated)
      if (!reopened) return
      self.stats.restored++
      self.held.add(sessionId)
      if (!handedOver) self.reopenedAt.set(sessionId, startedAt)
      // The row names its new owner at once: if the session moves on, its next owner asks this process.
      if (self.self !== undefined) yield* self.write(self.store.touch([sessionId], self.self))
    })
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
      for (const id of this.held) {
        if (!owns(id)) moved.push(id)
        else if (!this.server.hasSession(id)) ended.push(id)
      }
      for (const id of [...moved, ...ended]) {
        this.held.delete(id)
        this.reopenedAt.delete(id)
      }
      this.stats.released += moved.length
      const held = [...this.held]
      return Effect.forEach(moved, (id) => this.server.closeSession(id, "Released"), { discard: true }).pipe(
        Effect.andThen(Effect.forEach(ended, (id) => this.write(this.store.remove(id)), { discard: true })),
        // Not naming this process: it may not have noticed yet that a shard moved, and a row must never name a
        // former owner that still runs after the session's new owner took it (see reopen).
        Effect.andThen(held.length === 0 ? Effect.void : this.write(this.store.touch(held))),
        Effect.andThen(Clock.currentTimeMillis),
        Effect.flatMap((now) => this.write(Effect.asVoid(this.store.expire(now - expireMs))))
      )
    })
  }
}
