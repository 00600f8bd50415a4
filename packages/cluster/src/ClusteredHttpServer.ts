/**
 * The Streamable HTTP server spread over the runners of an effect/cluster:
 * any process answers any request, so a load balancer needs no sticky
 * sessions.
 *
 * Each stateful session is an entity (`McpSession`) keyed by its
 * `Mcp-Session-Id`; the shard of the id decides which runner owns it. A
 * process receiving a POST, GET or DELETE for a session it owns serves it
 * itself; otherwise it forwards the exchange to the owner as an entity RPC
 * (internal/forward.ts: a reply complete at once comes back in one message),
 * and the JSON or SSE reply flows back through it. With a `hop` (DirectHop),
 * once the owner named its endpoint in an RPC reply, the shard's next
 * exchanges go straight to that endpoint as one HTTP request instead: the
 * RPC stays the way where no endpoint is known, where it cannot be connected
 * to, and where the owner no longer holds the shard. An `initialize` is
 * served where it arrives: the process picks the new session an id whose
 * shard it owns. Stateless requests (2026-07-28) are served where they arrive.
 *
 * What a session negotiated (revision, client capabilities and info, log
 * level, subscriptions, the principal it is bound to) is written to
 * `SessionState` (SQL): when a runner is lost its shards move, and the new
 * owner reopens the session from it on its next request (of that principal,
 * when the server authenticates), without a new `initialize`. A request in flight on the lost
 * runner is answered with an error (-32603) by the process that received it;
 * it is not run again, so nothing is delivered twice. The row also names the
 * process holding the session: the next owner asks it whether it still runs
 * (a session handed over alive serves every exchange that waited for the
 * move, internal/owner.ts), and a process with no hop known for the shard
 * takes the hop to it, so that a runner found gone is known to have received
 * nothing.
 */
import * as McpHeaders from "@effect-mcp/http/McpHeaders"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Clock from "effect/Clock"
import * as EntityId from "effect/cluster/EntityId"
import * as Sharding from "effect/cluster/Sharding"
import * as ShardId from "effect/cluster/ShardId"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Headers from "effect/http/Headers"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as DirectHop from "./DirectHop.ts"
import * as Forward from "./internal/forward.ts"
import * as ClusterHeaders from "./internal/headers.ts"
import { Hops } from "./internal/hops.ts"
import { Owner } from "./internal/owner.ts"
import * as Relayed from "./internal/relayed.ts"
import { hasPrivate, hopRefusal, logLost, lostReply, readBody, withoutPrivate } from "./internal/replies.ts"
import { SessionState } from "./SessionState.ts"

/**
 * Settings of the clustered server: those of the Streamable HTTP server
 * (applied by each owner to its sessions), and how often sessions are swept.
 */
export interface Options<E = never, R = never>
  extends Omit<StreamableHttpServer.Options<E, R>, "stateless" | "sessionIdOf"> {
  /**
   * How often a runner lets go of the sessions whose shard moved away and
   * forgets the state of sessions that ended. Default 10 seconds.
   */
  readonly sweepInterval?: Duration.Input | undefined
  /**
   * Carries forwarded exchanges straight to the owner's endpoint over HTTP
   * once the owner is known (see `DirectHop`; `NodeClusteredServer` makes
   * one). Without it every forwarded exchange is an entity RPC.
   */
  readonly hop?: DirectHop.DirectHop | undefined
  /**
   * The hop a fast path in front of `handler` already sent for this request
   * (see `DirectHop.Attempt`), if any.
   */
  readonly attemptOf?: ((request: HttpServerRequest.HttpServerRequest) => DirectHop.Attempt | undefined) | undefined
}

/** What a clustered server counts. */
export interface Stats {
  /** Requests forwarded to the runner owning their session. */
  readonly forwarded: number
  /** Forwarded requests carried by the direct hop (the others went as entity RPCs). */
  readonly direct: number
  /** Forwarded requests whose owner was lost before it answered them all (each was answered with an error). */
  readonly lost: number
  /** Sessions reopened here from their durable state after their shard moved. */
  readonly restored: number
  /** Sessions let go because their shard moved to another runner. */
  readonly released: number
}

/** The clustered Streamable HTTP server of one process. */
export interface ClusteredHttpServer {
  /** Answers one request to the endpoint (any method), here or through the session's owner. */
  readonly handler: Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>
  /** The Streamable HTTP server of the sessions this runner owns. */
  readonly local: StreamableHttpServer.StreamableHttpServer
  /** Whether this runner owns the session (its shard is assigned here). */
  readonly owns: (sessionId: string) => boolean
  /** What the server counted since it started. */
  readonly stats: () => Stats
  /**
   * For a fast path in front of `handler`: the owner's direct hop for a
   * request on `sessionId`, when another runner owns it and its hop is known.
   */
  readonly directRoute: (sessionId: string) => DirectHop.Target | undefined
  /** The fast path carried one exchange through the direct hop and answered it. */
  readonly countDirect: () => void
}

/** The answer to a runner asking whether this process (the one its secret names) still runs. */
const aliveReply = HttpServerResponse.empty({ status: 204, headers: { [ClusterHeaders.ALIVE]: "1" } })

const remoteAddressOf = (request: HttpServerRequest.HttpServerRequest): string | undefined =>
  Option.getOrUndefined(request.remoteAddress)

/**
 * Builds the clustered endpoint on this runner: registers the session entity
 * with `Sharding` and serves the sessions whose shards are assigned here.
 */
export const make = Effect.fnUntraced(function* <E, R>(
  options: Options<E, R>
): Effect.fn.Return<
  ClusteredHttpServer,
  never,
  Scope.Scope | Sharding.Sharding | SessionState | Exclude<R, StreamableHttpServer.SessionServices>
> {
  const sharding = yield* Sharding.Sharding
  const store = yield* SessionState
  const clientOf = options.clientOf ?? remoteAddressOf
  const maxBodyBytes = options.maxBodyBytes ?? 4 * 1024 * 1024
  const local = yield* StreamableHttpServer.make<E, R>({
    ...options,
    stateless: false,
    // The id a process picked for a session it opens (one whose shard it owns).
    sessionIdOf: (request) => request.headers[ClusterHeaders.NEW_SESSION],
    clientOf: (request) => request.headers[ClusterHeaders.CLIENT] ?? clientOf(request)
  })
  const hop = options.hop
  const path = options.path ?? "/mcp"
  // Without a hop the process has no name others can ask about: every reopened session takes the careful rule.
  const self = hop === undefined ? undefined : DirectHop.encodeTarget(hop.self)
  const owner = new Owner(local, store, {
    authentication: options.authentication,
    self,
    alive: (name) => {
      const target = DirectHop.decodeTarget(name)
      return hop === undefined || target === undefined ? Effect.succeed(false) : hop.alive(target, path)
    }
  })
  yield* owner.run
  const counts = { forwarded: 0, direct: 0, lost: 0 }
  const countLost = () => {
    counts.lost++
  }
  const hops = new Hops()

  const shardOf = (sessionId: string) => {
    const entityId = EntityId.make(sessionId)
    return sharding.getShardId(entityId, Forward.McpSession.getShardGroup(entityId))
  }
  const owns = (sessionId: string) => sharding.hasShardId(shardOf(sessionId))

  // The owner's side of a forwarded exchange.
  yield* sharding.registerEntity(
    Forward.McpSession,
    Effect.succeed(
      Forward.serveExchange(
        (exchange) => {
          const sentAt = Number(exchange.headers[ClusterHeaders.SENT_AT])
          return owner.serveForwarded(
            Forward.toRequest(exchange),
            exchange.headers[McpHeaders.SESSION_ID],
            Number.isFinite(sentAt) ? sentAt : undefined
          )
        },
        hop === undefined ? undefined : DirectHop.encodeTarget(hop.self)
      )
    ),
    { concurrency: "unbounded", maxIdleTime: Duration.minutes(1) }
  )
  const clientFor = yield* Forward.McpSession.client

  const sweepEvery = Duration.fromInputUnsafe(options.sweepInterval ?? Duration.seconds(10))
  // A row untouched for twice the idle timeout belongs to no open session any more.
  const expireMs = 2 * Duration.toMillis(Duration.fromInputUnsafe(options.sessionIdleTimeout ?? Duration.minutes(30)))
  yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(sweepEvery), owner.sweep(owns, expireMs))))

  /** A new session's id whose shard this runner owns (any id when it owns none yet). */
  const newSessionId = () => {
    let id = crypto.randomUUID()
    for (let i = 0; i < 256 && !owns(id); i++) id = crypto.randomUUID()
    return id
  }

  const forward = (
    request: HttpServerRequest.HttpServerRequest,
    sessionId: string,
    extra?: Record<string, string>,
    attempt?: DirectHop.Attempt
  ): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
    Effect.gen(function* () {
      const read =
        request.method === "POST" && attempt === undefined
          ? yield* Effect.result(readBody(request, maxBodyBytes))
          : undefined
      if (read !== undefined && read._tag === "Failure") return read.failure
      const body = attempt?.body ?? (read === undefined ? "" : read.success)
      const sentAt = String(yield* Clock.currentTimeMillis)
      let exchange = Forward.toExchange(request, body, { ...extra, [ClusterHeaders.SENT_AT]: sentAt })
      counts.forwarded++
      const shard = hop === undefined ? undefined : ShardId.toString(shardOf(sessionId))
      const target =
        attempt?.target ??
        (shard === undefined || extra !== undefined
          ? undefined
          : (hops.get(shard) ?? (hops.mayName(shard) ? yield* holderOf(sessionId, shard) : undefined)))
      // The shard's last known owner could not be connected to: nothing sent now reaches it, so the
      // exchange goes without its send time (see the Unsent case below).
      if (target === undefined && shard !== undefined && hops.isGone(shard)) exchange = Forward.withoutSentAt(exchange)
      if (target !== undefined) {
        const result = attempt?.result ?? (yield* hop!.send(target, exchange))
        switch (result._tag) {
          case "Reply":
            counts.direct++
            return fromHop(result, body, result.stream === undefined ? Effect.void : probe(sessionId, exchange))
          case "Lost":
            counts.lost++
            yield* probe(sessionId, exchange)
            return lostReply(body)
          case "Refused":
            // The shard moved: the entity RPC below reaches its new owner.
            hops.refused(shard!)
            break
          case "Unsent":
            // The owner is gone: effect/cluster waits for its shards to move. Nothing reached it, so the
            // exchange goes without its send time: the next owner serves it however long the shard took
            // to move, instead of refusing it as one that was in flight on the lost owner.
            hops.unreachable(target.origin)
            exchange = Forward.withoutSentAt(exchange)
        }
      }
      if (request.method === "GET") return yield* Relayed.relay(clientFor(sessionId).Http(exchange), countLost)
      const sent = yield* Effect.exit(clientFor(sessionId).Send(exchange))
      // No reply, or the owner refused to run an exchange in flight on its lost predecessor.
      if (sent._tag === "Failure" || sent.value.lost) {
        if (sent._tag === "Failure") yield* logLost(sent.cause)
        counts.lost++
        return lostReply(body)
      }
      const reply = sent.value
      if (shard !== undefined) hops.learn(shard, reply.via)
      const head = { status: reply.status, headers: reply.headers }
      if (reply.contentType === undefined) return HttpServerResponse.empty(head)
      if (reply.rest === undefined) {
        return HttpServerResponse.text(reply.body, { ...head, contentType: reply.contentType })
      }
      const rest = clientFor(sessionId).Rest({ name: reply.rest }) as Stream.Stream<Forward.BodyPart, unknown>
      return Relayed.streamed({ ...head, contentType: reply.contentType }, rest, body, countLost)
    })

  /**
   * The hop target of the process the session's row names as its holder, when
   * no owner of the shard named itself here yet (learned for the shard: the
   * next exchanges need no read). The first exchange of a session another
   * runner holds then goes by the hop too, and when that runner is gone the
   * hop's failed connect tells that nothing reached it: the exchange waits for
   * the shard to move and is served, where an entity RPC sent to the lost
   * runner could not be told from one that was in flight there.
   */
  const holderOf = (sessionId: string, shard: string): Effect.Effect<DirectHop.Target | undefined> =>
    Effect.map(
      Effect.orElseSucceed(store.get(sessionId), () => undefined),
      (stored) => {
        // A row naming this process: the session moved away and its next owner has not reopened it yet.
        if (stored?.owner === self) return undefined
        // No name (an owner without a hop, or a row from before names): the shard is not read again.
        if (stored?.owner === undefined) {
          if (stored !== undefined) hops.noName(shard)
          return undefined
        }
        hops.learn(shard, stored.owner)
        return hops.get(shard)
      }
    )

  /**
   * Waits, after a hop broke, until the session's owner (alive) or its next
   * owner (once effect/cluster moved the shard) answers that the exchange is
   * lost without running anything: the client hears of the loss when the
   * session can serve its next request, as on the entity RPC path.
   */
  const probe = (sessionId: string, exchange: Forward.Exchange): Effect.Effect<void> =>
    Effect.suspend(() =>
      Effect.ignore(
        clientFor(sessionId).Send({
          method: exchange.method,
          url: exchange.url,
          headers: { [McpHeaders.SESSION_ID]: sessionId, [ClusterHeaders.LOST_PROBE]: "1" },
          body: ""
        })
      )
    )

  /** The owner's reply through the hop; `lost` runs before a cut reply's missing answers are given. */
  const fromHop = (
    reply: DirectHop.Reply,
    body: string,
    lost: Effect.Effect<void>
  ): HttpServerResponse.HttpServerResponse => {
    const head = { status: reply.status, headers: reply.headers }
    if (reply.contentType === undefined) return HttpServerResponse.empty(head)
    if (reply.stream === undefined) {
      return HttpServerResponse.uint8Array(reply.body, { ...head, contentType: reply.contentType })
    }
    return Relayed.streamed({ ...head, contentType: reply.contentType }, reply.stream, body, countLost, lost)
  }

  /**
   * A hop from another runner (its secret checked): served here if this runner
   * still owns the session, refused otherwise; never forwarded again.
   */
  const servedHop = (request: HttpServerRequest.HttpServerRequest, sessionId: string | undefined) => {
    if (request.headers[ClusterHeaders.ALIVE] !== undefined) return Effect.succeed(aliveReply)
    if (sessionId === undefined || !owns(sessionId)) return Effect.succeed(hopRefusal("not-owner"))
    // Served whenever it was sent: a hop is never delivered twice (its sender reports a hop that may have run
    // as lost and sends again only what reached no one), so the send time that guards an entity RPC, which
    // effect/cluster may deliver again to the shard's next owner, has nothing to guard here.
    return owner.serve(request.modify({ headers: withoutPrivate(request.headers) }), sessionId)
  }

  const handler = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const sessionId = request.headers[McpHeaders.SESSION_ID]
    const attempt = options.attemptOf?.(request)
    // Its body is read already: wherever the session is now, the hop's result is settled here.
    if (attempt !== undefined && sessionId !== undefined) return yield* forward(request, sessionId, undefined, attempt)
    if (hop !== undefined && DirectHop.isSecret(hop.self.secret, request.headers[ClusterHeaders.HOP])) {
      return yield* servedHop(request, sessionId)
    }
    if (sessionId === undefined) {
      // Opening a session (or a stateless request): served here, under an id this runner owns.
      const id = newSessionId()
      const headers = Headers.set(withoutPrivate(request.headers), ClusterHeaders.NEW_SESSION, id)
      if (request.method === "POST" && !owns(id)) {
        return yield* forward(request, id, {
          [ClusterHeaders.NEW_SESSION]: id,
          [ClusterHeaders.CLIENT]: clientOf(request) ?? ""
        })
      }
      return yield* owner.serve(request.modify({ headers }), undefined)
    }
    if (owns(sessionId)) {
      const clean = hasPrivate(request.headers) ? request.modify({ headers: withoutPrivate(request.headers) }) : request
      return yield* owner.serve(clean, sessionId)
    }
    return yield* forward(request, sessionId)
  })

  return {
    handler,
    local,
    owns,
    stats: () => ({ ...counts, restored: owner.stats.restored, released: owner.stats.released }),
    directRoute: (sessionId) => {
      if (hop === undefined) return undefined
      const shard = shardOf(sessionId)
      return sharding.hasShardId(shard) ? undefined : hops.get(ShardId.toString(shard))
    },
    countDirect: () => {
      counts.forwarded++
      counts.direct++
    }
  } satisfies ClusteredHttpServer
})

/**
 * Adds the clustered endpoint to the `HttpRouter` at `options.path` (default
 * `/mcp`). It needs `Sharding` (a runner: `NodeClusterSocket.layer`, ...) and
 * `SessionState` (`SessionState.layerSql`).
 */
export const layer = <E, R>(
  options: Options<E, R>
): Layer.Layer<
  never,
  never,
  HttpRouter.HttpRouter | Sharding.Sharding | SessionState | Exclude<R, StreamableHttpServer.SessionServices>
> =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const router = yield* HttpRouter.HttpRouter
      const server = yield* make(options)
      yield* router.add("*", options.path ?? "/mcp", server.handler)
    })
  )
