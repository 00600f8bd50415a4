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
 * it is not run again, so nothing is delivered twice.
 */
import * as McpHeaders from "@effect-mcp/http/McpHeaders"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as EntityId from "effect/cluster/EntityId"
import * as Sharding from "effect/cluster/Sharding"
import * as ShardId from "effect/cluster/ShardId"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Headers from "effect/http/Headers"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as DirectHop from "./DirectHop.ts"
import * as Forward from "./internal/forward.ts"
import * as ClusterHeaders from "./internal/headers.ts"
import { Hops } from "./internal/hops.ts"
import * as LostAnswers from "./internal/lostAnswers.ts"
import { Owner } from "./internal/owner.ts"
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

/** The reply of an exchange began again: its owner was lost and the cluster re-sent it. */
const restarted = new Error("the exchange was re-sent to the session's new owner")

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
  const owner = new Owner(local, store, {
    authentication: options.authentication,
    // Without a hop the process has no name others can ask about: every reopened session takes the careful rule.
    self: hop === undefined ? undefined : DirectHop.encodeTarget(hop.self),
    alive: (name) => {
      const target = DirectHop.decodeTarget(name)
      return hop === undefined || target === undefined ? Effect.succeed(false) : hop.alive(target, path)
    }
  })
  yield* owner.run
  const counts = { forwarded: 0, direct: 0, lost: 0 }
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
      const target = attempt?.target ?? (shard === undefined || extra !== undefined ? undefined : hops.get(shard))
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
      if (request.method === "GET") return yield* relay(clientFor(sessionId).Http(exchange))
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
      return streamed({ ...head, contentType: reply.contentType }, rest, body)
    })

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
    return streamed({ ...head, contentType: reply.contentType }, reply.stream, body, lost)
  }

  /** Streams the owner's reply to a GET back; when the owner is lost first, the answer is 503. */
  const relay = (reply: Stream.Stream<Forward.Part, unknown>): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
    Effect.gen(function* () {
      const queue = yield* Queue.unbounded<Forward.Part, unknown>()
      // Ended (Done) or failed: the owner's reply stream is over.
      const fiber = yield* reply.pipe(
        Stream.runForEach((chunk) => Queue.offer(queue, chunk)),
        Effect.onExit((exit) =>
          exit._tag === "Success" ? Queue.end(queue) : Queue.failCause(queue, exit.cause as Cause.Cause<unknown>)
        ),
        Effect.forkDetach
      )
      const first = yield* Effect.result(Queue.take(queue))
      // No reply, or the owner refused to run an exchange in flight on its lost predecessor.
      if (first._tag === "Failure" || !Forward.isHead(first.success)) {
        if (first._tag === "Failure" && !Cause.isDone(first.failure)) yield* logLost(first.failure)
        yield* Fiber.interrupt(fiber)
        counts.lost++
        return lostReply("")
      }
      const head = first.success
      if (head.contentType === undefined) {
        // No body (202, 404...): the stream ends after the head.
        yield* Fiber.interrupt(fiber)
        return HttpServerResponse.empty({ status: head.status, headers: head.headers })
      }
      if (head.whole) {
        // Answered whole (most quick calls): the reply goes out now, without waiting for the
        // owner to close the RPC stream (one more round trip between the runners).
        const body = yield* Effect.result(Queue.take(queue))
        if (body._tag === "Success" && typeof body.success === "string") {
          return HttpServerResponse.text(body.success, {
            status: head.status,
            contentType: head.contentType,
            headers: head.headers
          })
        }
        yield* Fiber.interrupt(fiber)
        counts.lost++
        return lostReply("")
      }
      return streamed(
        { status: head.status, headers: head.headers, contentType: head.contentType },
        Stream.fromQueue(queue).pipe(Stream.ensuring(Fiber.interrupt(fiber))),
        ""
      )
    })

  /**
   * Streams a reply's body from its owner; when the owner is lost first,
   * what it still owed to the requests of `request` (the POST body) is answered here.
   * A part other than text (a head, `Lost`) shows the exchange was started again.
   */
  const streamed = (
    head: { readonly status: number; readonly headers: Record<string, string>; readonly contentType: string },
    chunks: Stream.Stream<Forward.Part, unknown>,
    request: string,
    lost: Effect.Effect<void> = Effect.void
  ): HttpServerResponse.HttpServerResponse => {
    const requests = LostAnswers.requestsOf(request)
    const sse = head.contentType.startsWith("text/event-stream")
    const answered = sse && requests.ids.length > 0 ? new LostAnswers.AnsweredIds(requests.ids) : undefined
    let sent = ""
    const body = chunks.pipe(
      Stream.mapEffect((chunk) => {
        // Started again on the session's new owner: the old owner was lost mid-reply.
        if (typeof chunk !== "string") return Effect.fail(restarted)
        if (answered !== undefined) answered.see(chunk)
        else if (sent.length < 2) sent += chunk
        return Effect.succeed(chunk)
      }),
      Stream.catchCause((cause) => {
        if (Cause.hasInterruptsOnly(cause)) return Stream.empty
        counts.lost++
        // The reply was cut short: what it still owed is answered here.
        if (answered !== undefined) {
          // Nothing owed: the events sent answered every request.
          if (answered.pending.size === 0) return Stream.fromEffect(Effect.as(lost, ""))
          // The event the reply stopped in is ended first, so the answers read as events of their own.
          const end = answered.end()
          return Stream.fromEffect(Effect.as(lost, end + LostAnswers.lostEvents(answered.pending)))
        }
        const answers = sse || sent.trim() !== "" ? undefined : LostAnswers.lostJson(requests)
        if (answers !== undefined) return Stream.fromEffect(Effect.as(lost, answers))
        return Stream.empty
      }),
      Stream.encodeText
    )
    return HttpServerResponse.stream(body, head)
  }

  /**
   * A hop from another runner (its secret checked): served here if this runner
   * still owns the session, refused otherwise; never forwarded again.
   */
  const servedHop = (request: HttpServerRequest.HttpServerRequest, sessionId: string | undefined) => {
    if (request.headers[ClusterHeaders.ALIVE] !== undefined) return Effect.succeed(aliveReply)
    if (sessionId === undefined || !owns(sessionId)) return Effect.succeed(hopRefusal("not-owner"))
    const sentAt = Number(request.headers[ClusterHeaders.SENT_AT])
    return Effect.map(
      owner.serveForwarded(
        request.modify({ headers: withoutPrivate(request.headers) }),
        sessionId,
        Number.isFinite(sentAt) ? sentAt : undefined
      ),
      (response) => response ?? hopRefusal("lost")
    )
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
