/**
 * The Streamable HTTP server spread over the runners of an effect/cluster:
 * any process answers any request, so a load balancer needs no sticky
 * sessions.
 *
 * Each stateful session is an entity (`McpSession`) keyed by its
 * `Mcp-Session-Id`; the shard of the id decides which runner owns it. A
 * process receiving a POST, GET or DELETE for a session it owns serves it
 * itself; otherwise it carries the exchange to the owner by the direct hop
 * (DirectHop: the exchange straight to the owner's hop listener), the one path a
 * forwarded exchange takes, and the JSON or SSE reply flows back through it.
 * The owner is found from the session's row in `SessionState` (it names the
 * process holding the session) or by the entity RPC `Locate`, which
 * effect/cluster delivers to the shard's owner and which runs nothing
 * (internal/forward.ts says why the entity only locates). An `initialize` is
 * served where it arrives: the process picks the new session an id whose
 * shard it owns. Stateless requests (2026-07-28) are served where they arrive.
 *
 * What a session negotiated (revision, client capabilities and info, log
 * level, subscriptions, the principal it is bound to) is written to
 * `SessionState` (SQL): when a runner is lost its shards move, and the new
 * owner reopens the session from it on its next request (of that principal,
 * when the server authenticates), without a new `initialize`. A request in
 * flight on the lost runner (its hop broke after it was sent) is answered
 * with an error (-32603) by the process that received it; it is not run
 * again, so nothing is delivered twice. A request sent after the loss never
 * reached the lost runner (its hop could not connect): it waits for the shard
 * to move and is then served.
 */
import * as EventStore from "@effect-mcp/http/EventStore"
import * as McpHeaders from "@effect-mcp/http/McpHeaders"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
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
import * as DirectHop from "./DirectHop.ts"
import * as Forward from "./internal/forward.ts"
import * as ClusterHeaders from "./internal/headers.ts"
import { Hops } from "./internal/hops.ts"
import { oneAnswer } from "./internal/oneAnswer.ts"
import { Owner } from "./internal/owner.ts"
import * as Relayed from "./internal/relayed.ts"
import { hasPrivate, hopRefusal, lostReply, readBody, unreachedReply, withoutPrivate } from "./internal/replies.ts"
import { SessionState } from "./SessionState.ts"

/**
 * Settings of the clustered server: those of the Streamable HTTP server
 * (applied by each owner to its sessions), and how often sessions are swept.
 */
export interface Options<E = never, R = never>
  extends Omit<StreamableHttpServer.Options<E, R>, "stateless" | "sessionIdOf"> {
  /**
   * How often a runner lets go of the sessions whose shard moved away,
   * forgets the state of sessions that ended and writes down when its
   * sessions were last active (at least ten times per `sessionIdleTimeout`:
   * a session moved after its runner was lost expires up to twice this late,
   * never early). Default 10 seconds.
   */
  readonly sweepInterval?: Duration.Input | undefined
  /**
   * Carries forwarded exchanges to the owner's hop listener (see `DirectHop`;
   * `NodeClusteredServer` makes one): every runner offers one.
   */
  readonly hop: DirectHop.DirectHop
  /**
   * The hop a fast path in front of `handler` already sent for this request
   * (see `DirectHop.Attempt`), if any.
   */
  readonly attemptOf?: ((request: HttpServerRequest.HttpServerRequest) => DirectHop.Attempt | undefined) | undefined
  /**
   * How long a forwarded request waits for its session's owner to be found:
   * a lost runner's sessions are found once effect/cluster moved their
   * shards (its lock expiration, `shardLockExpiration`, and a little more).
   * A `Locate` the cluster refuses while shards move is asked again within
   * it. Past it the request is answered with an error saying it did not run.
   * Default 60 seconds.
   */
  readonly locateTimeout?: Duration.Input | undefined
}

/** What a clustered server counts. */
export interface Stats {
  /** Requests forwarded to the runner owning their session. */
  readonly forwarded: number
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
  /**
   * Answers one exchange another runner carried here by the direct hop (its
   * transport proved it comes from a runner): served if this runner owns the
   * session (or the one it opens), refused otherwise (421, `HEADER_REFUSED`),
   * never forwarded again.
   */
  readonly hopHandler: Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>
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
  readonly countForwarded: () => void
}

/**
 * Owners one exchange is sent to at most: each one before the last refused
 * it (its shard had moved on) or could not be connected to (it is gone), so
 * nothing ran; a few cover a rebalance racing a runner's loss.
 */
const MAX_HOPS = 6

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
  // The event store the local server would take, storing at most one answer per request (internal/oneAnswer.ts).
  const events =
    options.eventStore === false
      ? undefined
      : (options.eventStore ?? Option.getOrUndefined(yield* Effect.serviceOption(EventStore.EventStore)))
  const local = yield* StreamableHttpServer.make<E, R>({
    ...options,
    eventStore: events === undefined ? options.eventStore : oneAnswer(events, store),
    stateless: false,
    // The id a process picked for a session it opens (one whose shard it owns).
    sessionIdOf: (request) => request.headers[ClusterHeaders.NEW_SESSION],
    clientOf: (request) => request.headers[ClusterHeaders.CLIENT] ?? clientOf(request)
  })
  const hop = options.hop
  const locateTimeout = Duration.fromInputUnsafe(options.locateTimeout ?? Duration.seconds(60))
  const locateSeconds = Math.round(Duration.toMillis(locateTimeout) / 1000)
  // This process's name in the session rows it writes and in its `Locate` replies.
  const self = DirectHop.encodeTarget(hop.self)
  const idleMs = Duration.toMillis(Duration.fromInputUnsafe(options.sessionIdleTimeout ?? Duration.minutes(30)))
  // The sweep writes down the sessions' activity too: often enough that a moved session's idle clock stays close.
  const sweepMs = Math.max(
    1,
    Math.min(Duration.toMillis(Duration.fromInputUnsafe(options.sweepInterval ?? Duration.seconds(10))), idleMs / 10)
  )
  const clock = yield* Effect.clockWith(Effect.succeed)
  const owner = new Owner(local, store, { authentication: options.authentication, self, activityMs: sweepMs, clock })
  yield* owner.run
  const counts = { forwarded: 0, lost: 0 }
  const countLost = () => {
    counts.lost++
  }
  const hops = new Hops()

  const shardOf = (sessionId: string) => {
    const entityId = EntityId.make(sessionId)
    return sharding.getShardId(entityId, Forward.McpSession.getShardGroup(entityId))
  }
  const owns = (sessionId: string) => sharding.hasShardId(shardOf(sessionId))

  // The owner's side of `Locate`: a few idle seconds are enough, it keeps nothing.
  yield* sharding.registerEntity(Forward.McpSession, Effect.succeed(Forward.located(self)), {
    concurrency: "unbounded",
    maxIdleTime: Duration.seconds(10)
  })
  const clientFor = yield* Forward.McpSession.client

  // A row not written for twice the idle timeout belongs to no open session any more: an open one's row is
  // written within the sweep's period of its activity, and it expires past the idle timeout (and the server's
  // sweep, a tenth of it).
  const expireMs = 2 * idleMs
  yield* Effect.forkScoped(
    Effect.forever(Effect.andThen(Effect.sleep(Duration.millis(sweepMs)), owner.sweep(owns, expireMs)))
  )

  /** A new session's id whose shard this runner owns (any id when it owns none yet). */
  const newSessionId = () => {
    let id = crypto.randomUUID()
    for (let i = 0; i < 256 && !owns(id); i++) id = crypto.randomUUID()
    return id
  }

  /**
   * The owner of the session's shard, as effect/cluster delivers `Locate` to
   * it (waiting while a lost runner's shards move), learned for the shard;
   * undefined when none answered within `locateTimeout`.
   */
  const locate = (sessionId: string, shard: string): Effect.Effect<DirectHop.Target | undefined> =>
    Forward.locateWithin(clientFor(sessionId).Locate(), locateTimeout).pipe(
      Effect.map(({ via }) => {
        hops.learn(shard, via)
        return hops.get(shard)
      }),
      Effect.catchCause((cause) =>
        Effect.as(Effect.logWarning("no runner owning the session answered in time", cause), undefined)
      )
    )

  // Made once (a generator function made per call costs its own generator prototype and map).
  const forward = Effect.fnUntraced(function* (
    request: HttpServerRequest.HttpServerRequest,
    sessionId: string,
    said?: Record<string, string>,
    attempt?: DirectHop.Attempt
  ): Effect.fn.Return<HttpServerResponse.HttpServerResponse> {
    const read =
      request.method === "POST" && attempt === undefined
        ? yield* Effect.result(readBody(request, maxBodyBytes))
        : undefined
    if (read !== undefined && read._tag === "Failure") return read.failure
    const body = attempt?.body ?? (read === undefined ? "" : read.success)
    const exchange = Forward.toExchange(request, body, said)
    counts.forwarded++
    const shard = ShardId.toString(shardOf(sessionId))
    let target =
      attempt?.target ??
      hops.get(shard) ??
      (said === undefined && hops.mayName(shard) ? yield* holderOf(sessionId, shard) : undefined)
    let result = attempt?.result
    for (let sent = 0; sent < MAX_HOPS; sent++) {
      if (result === undefined) {
        target ??= yield* locate(sessionId, shard)
        if (target === undefined) return unreachedReply(body, `could be located within ${locateSeconds} s`)
        result = yield* hop.send(target, exchange)
      }
      switch (result._tag) {
        case "Reply":
          return fromHop(result, body, result.stream === undefined ? Effect.void : probe(sessionId, shard))
        case "Lost":
          // Sent, and cut before its reply: it may have run, so it is answered once, never sent again.
          counts.lost++
          yield* probe(sessionId, shard)
          return lostReply(body)
        case "Refused":
          // The shard moved on: nothing ran; its next owner is located.
          hops.refused(shard)
          break
        case "Unsent":
          // The owner is gone: nothing reached it. `Locate` waits for effect/cluster to move its shards.
          hops.unreachable(target!.origin)
      }
      target = undefined
      result = undefined
    }
    return unreachedReply(body, `took it: ${MAX_HOPS} owners in turn had moved on or could not be connected to`)
  })

  /**
   * The hop target of the process the session's row names as its holder, when
   * no owner of the shard is known here yet (learned for the shard: the next
   * exchanges need no read). It saves a `Locate`, and when that process is
   * gone the hop's failed connect tells that nothing reached it.
   */
  const holderOf = (sessionId: string, shard: string): Effect.Effect<DirectHop.Target | undefined> =>
    Effect.map(
      Effect.orElseSucceed(store.get(sessionId), () => undefined),
      (stored) => {
        // A row naming this process: the session moved away and its next owner has not reopened it yet.
        if (stored?.owner === self) return undefined
        // No name (a row from before names): the shard is not read again.
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
   * owner (once effect/cluster moved the shard) answers `Locate`: the client
   * hears of the loss when the session can serve its next request.
   */
  const probe = (sessionId: string, shard: string): Effect.Effect<void> =>
    Effect.asVoid(Effect.suspend(() => locate(sessionId, shard)))

  /** The owner's reply through the hop; `lost` runs before a cut reply's missing answers are given. */
  const fromHop = (
    reply: DirectHop.Reply,
    body: string,
    lost: Effect.Effect<void>
  ): HttpServerResponse.HttpServerResponse => {
    const head = { status: reply.status, headers: reply.headers }
    if (reply.contentType === undefined) return HttpServerResponse.empty(head)
    if (reply.stream === undefined) {
      // Set on the reply, not handed to its constructor (which copies them with Object.setPrototypeOf).
      const whole = HttpServerResponse.uint8Array(reply.body, { status: reply.status, contentType: reply.contentType })
      return HttpServerResponse.setHeaders(whole, reply.headers)
    }
    return Relayed.streamed({ ...head, contentType: reply.contentType }, reply.stream, body, countLost, lost)
  }

  /**
   * A hop from another runner: served here if this runner owns the session
   * (or the one it opens), refused otherwise; never forwarded again. Served
   * whenever it was sent: a hop is never delivered twice. What the receiving
   * process says for it (the client's address, the id of a session to open)
   * is believed: only runners reach this.
   */
  const hopHandler = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const sessionId = request.headers[McpHeaders.SESSION_ID]
    const id = sessionId ?? request.headers[ClusterHeaders.NEW_SESSION]
    if (id === undefined || !owns(id)) return Effect.succeed(hopRefusal)
    return owner.serve(request, sessionId)
  })

  const handler = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const sessionId = request.headers[McpHeaders.SESSION_ID]
    const attempt = options.attemptOf?.(request)
    // Its body is read already: wherever the session is now, the hop's result is settled here.
    if (attempt !== undefined && sessionId !== undefined) return yield* forward(request, sessionId, undefined, attempt)
    if (sessionId === undefined) {
      // Opening a session (or a stateless request): served here, under an id this runner owns.
      const id = newSessionId()
      if (request.method === "POST" && !owns(id)) {
        return yield* forward(request, id, {
          [ClusterHeaders.NEW_SESSION]: id,
          [ClusterHeaders.CLIENT]: clientOf(request) ?? ""
        })
      }
      const headers = Headers.set(withoutPrivate(request.headers), ClusterHeaders.NEW_SESSION, id)
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
    hopHandler,
    local,
    owns,
    stats: () => ({ ...counts, restored: owner.stats.restored, released: owner.stats.released }),
    directRoute: (sessionId) => {
      const shard = shardOf(sessionId)
      return sharding.hasShardId(shard) ? undefined : hops.get(ShardId.toString(shard))
    },
    countForwarded: () => {
      counts.forwarded++
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
