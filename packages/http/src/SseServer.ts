/**
 * The 2024-11-05 HTTP+SSE transport, server side, for clients that predate
 * Streamable HTTP. A GET on the SSE path opens a session: its event stream
 * first announces (`endpoint` event) the URL to POST messages to, carrying
 * the session id as a query parameter, then carries every server message as
 * a `message` event. The session ends with the event stream.
 *
 * One client cannot take the server: it holds at most `maxSessionsPerClient`
 * event streams; a `list_changed` or `resources/updated` notification its
 * stream has not delivered yet is not queued again; and a stream whose client
 * reads nothing for `writeTimeout` while messages wait is closed (the client
 * reconnects and starts a new session, as this revision has no resumption).
 */
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { CurrentHttpSession, type CurrentHttpSessionShape } from "./CurrentHttpSession.ts"
import type * as HttpAuthentication from "./HttpAuthentication.ts"
import * as Meter from "./internal/httpMeter.ts"
import * as Run from "./internal/httpServerRun.ts"
import { remoteAddressOf } from "./internal/httpServerSessions.ts"
import * as Wire from "./internal/httpWire.ts"
import { idempotencyKeyOf, messagesOf, missingScopesOf } from "./internal/jsonRpcSniff.ts"
import { textOf } from "./internal/httpServerStream.ts"
import { PushQueue } from "@effect-mcp/engine/PushQueue"
import type * as Session from "@effect-mcp/engine/Session"
import * as SessionRegistry from "@effect-mcp/engine/SessionRegistry"
import { newSessionId } from "./internal/sessionId.ts"
import * as Transport from "@effect-mcp/engine/Transport"
import * as McpMetrics from "@effect-mcp/engine/McpMetrics"
import type * as HttpServeOptions from "./HttpServeOptions.ts"

/** Settings of the legacy HTTP+SSE server transport: the shared ones that apply to it (`HttpServeOptions`) and its own. */
export interface Options<E = never, R = never>
  extends Pick<
    HttpServeOptions.HttpServeOptions,
    | "allowedHosts"
    | "allowedOrigins"
    | "dnsRebindingProtection"
    | "maxBodyBytes"
    | "maxSessions"
    | "maxSessionsPerClient"
    | "clientOf"
    | "writeTimeout"
    | "maxBufferedMessages"
    | "requiredScopes"
  > {
  /** Starts one MCP session over the given `Transport`, in the given `Scope` (as for StreamableHttpServer). */
  readonly session: Effect.Effect<unknown, E, R>
  /** Where the event stream is opened. Default `/sse`. */
  readonly ssePath?: HttpRouter.PathInput | undefined
  /** Where messages are posted. Default `/messages`. */
  readonly messagesPath?: HttpRouter.PathInput | undefined
  /** The URL announced in the `endpoint` event. Default `<messagesPath>?sessionId=<id>`. */
  readonly endpoint?: ((sessionId: string) => string) | undefined
  /**
   * Requires credentials on the event stream and on every posted message, as
   * `StreamableHttpServer`'s option does: a session belongs to the principal
   * that opened its event stream (another principal posting to it gets 404),
   * `maxSessionsPerClient` counts principals, and handlers read the principal
   * as `CurrentRequest.principal`. Default: none.
   */
  readonly authentication?: HttpAuthentication.Authentication | undefined
}

/** The legacy HTTP+SSE server: handlers for the SSE stream and the message endpoint. */
export interface SseServer {
  /** Answers a GET on the SSE path. */
  readonly sse: Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>
  /** Answers a POST on the messages path. */
  readonly messages: Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>
  /** The number of open sessions. */
  readonly sessionCount: () => number
  /** Event streams closed because their client stopped reading (see `writeTimeout`). */
  readonly evictedConnections: () => number
}

/**
 * The services the endpoint gives the session factory of each session it
 * starts (its transport, its scope and its HTTP view); the factory's other
 * requirements come from where `make` runs.
 */
export type SessionServices = Transport.Transport | Scope.Scope | CurrentHttpSession

/**
 * One legacy session as the registry holds it: its input queue, the SSE text
 * waiting for its event stream, and when the client last read.
 */
class Entry implements SessionRegistry.Held {
  readonly incoming: Queue.Queue<Transport.Incoming, Transport.TransportError | Cause.Done>
  /** The SSE text for the client, in the engine's push queue (its body is woken on a microtask). */
  readonly outgoing: PushQueue<string>
  readonly scope: Scope.Closeable
  readonly client: string | undefined
  /** When the client last took events (or the stream opened). */
  takenAt: number
  /** Idempotent notifications queued and not yet taken: key -> event text. */
  unread: Map<string, string> | undefined = undefined
  /** The principal of the latest authenticated request of the session (with `authentication` only). */
  authenticated: HttpAuthentication.Authenticated | undefined
  private readonly clock: Clock.Clock
  private readonly writeTimeoutMs: number
  /** Found stalled: its stream is halted when it ends. */
  private halted = false
  /** The MCP session over it once it started (`SessionRegistry.Held.core`, the registry's to set). */
  core: Session.SessionShape | undefined = undefined

  constructor(options: {
    readonly incoming: Queue.Queue<Transport.Incoming, Transport.TransportError | Cause.Done>
    readonly outgoing: PushQueue<string>
    readonly scope: Scope.Closeable
    readonly client: string | undefined
    readonly authenticated: HttpAuthentication.Authenticated | undefined
    readonly clock: Clock.Clock
    readonly writeTimeoutMs: number
  }) {
    this.incoming = options.incoming
    this.outgoing = options.outgoing
    this.scope = options.scope
    this.client = options.client
    this.authenticated = options.authenticated
    this.clock = options.clock
    this.writeTimeoutMs = options.writeTimeoutMs
    this.takenAt = options.clock.currentTimeMillisUnsafe()
  }

  get owner(): string | undefined {
    return this.authenticated?.owner
  }

  // The session lives as long as its event stream: never idle-expired.
  isBusy(): boolean {
    return true
  }

  idleFor(): number {
    return 0
  }

  // Its one connection is the session: `stalled` says when to close it.
  watch(): Effect.Effect<number> {
    return Effect.succeed(0)
  }

  /** Whether the client took nothing for the write timeout while messages waited: the session then ends. */
  stalled(): boolean {
    const now = this.clock.currentTimeMillisUnsafe()
    this.halted = this.outgoing.size > 0 && now - this.takenAt >= this.writeTimeoutMs
    return this.halted
  }

  end(): Effect.Effect<void> {
    // Outgoing ends first: from the moment the session sees its input end, sends fail with Closed. A stalled
    // stream is halted, not closed: its body stops now instead of waiting for a reader that never comes.
    if (this.halted) this.outgoing.halt()
    else this.outgoing.close()
    return Effect.andThen(Queue.end(this.incoming), Scope.close(this.scope, Exit.void))
  }
}

/** CurrentHttpSession of a legacy session: no resumable streams to close, no negotiated revision kept. */
class CurrentSse implements CurrentHttpSessionShape {
  readonly sessionId: string
  private readonly entry: Entry
  constructor(sessionId: string, entry: Entry) {
    this.sessionId = sessionId
    this.entry = entry
  }
  // The one SSE stream of the session carries everything the server sends.
  get carriesUnsolicited(): boolean {
    return true
  }
  protocolVersion(): string | undefined {
    return undefined
  }
  closeRequestStream(): Effect.Effect<void> {
    return Effect.void
  }
  get closeStandaloneStream(): Effect.Effect<void> {
    return Effect.void
  }
  authenticated(): HttpAuthentication.Authenticated | undefined {
    return this.entry.authenticated
  }
}

const sessionIdOf = (url: string): string | undefined => {
  const query = url.indexOf("?")
  if (query < 0) return undefined
  for (const pair of url.slice(query + 1).split("&")) {
    const eq = pair.indexOf("=")
    if (eq < 0 || pair.slice(0, eq) !== "sessionId") continue
    try {
      return decodeURIComponent(pair.slice(eq + 1).replace(/\+/g, " "))
    } catch {
      return undefined
    }
  }
  return undefined
}

const closedError = new Transport.TransportError({ reason: "Closed", message: "SSE connection closed" })

/** Makes the legacy HTTP+SSE server; each GET on the SSE path starts a session. */
export const make = Effect.fnUntraced(function* <E, R>(
  options: Options<E, R>
): Effect.fn.Return<SseServer, never, Scope.Scope | Exclude<R, SessionServices>> {
  const serverScope = yield* Scope.Scope
  const context = yield* Effect.context<Exclude<R, SessionServices>>()
  const guard = Wire.makeRebindingGuard(options)
  const messagesPath = options.messagesPath ?? "/messages"
  const endpoint = options.endpoint ?? ((id: string) => `${messagesPath}?sessionId=${encodeURIComponent(id)}`)
  const maxSessions = options.maxSessions ?? 10_000
  const maxBodyBytes = options.maxBodyBytes ?? 4 * 1024 * 1024
  const maxBuffered = Math.max(1, options.maxBufferedMessages ?? 1024)
  const maxPerClient = options.maxSessionsPerClient ?? 1_000
  const clientOf = options.clientOf ?? remoteAddressOf
  const writeTimeoutMs = Duration.toMillis(Duration.fromInputUnsafe(options.writeTimeout ?? Duration.seconds(30)))
  const clock = yield* Clock.Clock
  const authentication = options.authentication
  const requiredScopes = options.requiredScopes
  // Undefined when metrics are off: nothing is counted.
  const meter = McpMetrics.transportMeter("sse", context as Context.Context<never>)
  let evicted = 0
  const sessions = new SessionRegistry.SessionRegistry<Entry>(
    {
      maxSessions,
      maxSessionsPerClient: maxPerClient,
      idleTimeout: Duration.infinity,
      watchEvery: Math.max(1, writeTimeoutMs / 2),
      onStalled: (halted) =>
        Effect.sync(() => {
          evicted += halted
        }),
      onCount: meter === undefined ? undefined : (delta) => meter.sessions(delta)
    },
    clock
  )
  const close = (id: string, entry: Entry) => sessions.closeHeld(id, entry, "Deleted")
  yield* Effect.addFinalizer(() => sessions.closeAll)
  yield* sessions.runTimers

  const sse = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const refused = guard(request)
    if (refused !== undefined) return refused
    if (request.method !== "GET") return Wire.methodNotAllowed("GET")
    let authenticated: HttpAuthentication.Authenticated | undefined
    if (authentication !== undefined) {
      const result = yield* Effect.result(authentication.authenticate(request))
      if (Result.isFailure(result)) return result.failure
      authenticated = result.success
    }
    // With authentication the session belongs to its principal, whose sessions the quota counts.
    const client = authenticated === undefined ? clientOf(request) : authenticated.owner
    const refusal = sessions.admit(client)
    if (refusal !== undefined) {
      return refusal._tag === "Full"
        ? Wire.transportError(503, "Service Unavailable: too many sessions")
        : Wire.transportError(429, `Too Many Requests: at most ${refusal.limit} sessions per client`)
    }
    const id = newSessionId()
    const scope = yield* Scope.fork(serverScope)
    const incoming = yield* Queue.bounded<Transport.Incoming, Transport.TransportError | Cause.Done>(256)
    // Bounded, so a slow reader makes `send` wait instead of growing memory.
    const outgoing = new PushQueue<string>(maxBuffered + 1)
    const entry = new Entry({ incoming, outgoing, scope, client, authenticated, clock, writeTimeoutMs })
    sessions.add(id, entry)
    outgoing.offerNow(Wire.formatEvent({ event: "endpoint", data: endpoint(id) }))
    yield* Scope.addFinalizer(
      scope,
      Effect.sync(() => outgoing.close())
    )
    const transport: Transport.TransportShape = {
      incoming: Stream.fromQueue(incoming),
      sessionId: () => id,
      principal: () => entry.authenticated,
      send: (frame) =>
        Effect.suspend(() => {
          const key = idempotencyKeyOf(frame)
          // The same notification is still waiting for the client: it will act on that one.
          if (key !== undefined && entry.unread?.has(key) === true) return Effect.void
          const text = Wire.formatEvent({ event: "message", data: JsonRpcCodec.encode(frame) })
          if (key !== undefined) {
            if (entry.unread === undefined) entry.unread = new Map()
            entry.unread.set(key, text)
          }
          return outgoing.offer(text).pipe(
            Effect.onInterrupt(() => Effect.sync(() => key !== undefined && entry.unread?.delete(key))),
            Effect.flatMap((accepted) => (accepted ? Effect.void : Effect.fail(closedError)))
          )
        })
    }
    Run.start({
      factory: options.session,
      server: context as Context.Context<unknown>,
      transport,
      scope,
      extend: (services) => Context.add(services, CurrentHttpSession, new CurrentSse(id, entry)),
      onFailure: close(id, entry)
    })
    const body = textOf(outgoing).pipe(
      Stream.mapArray((texts) => {
        entry.takenAt = clock.currentTimeMillisUnsafe()
        const unread = entry.unread
        if (unread !== undefined) {
          for (const [key, text] of unread) if (texts.includes(text)) unread.delete(key)
        }
        return texts
      }),
      Stream.encodeText,
      // The session lives as long as its event stream.
      Stream.ensuring(close(id, entry))
    )
    return Wire.withHeaders(HttpServerResponse.stream(body, { contentType: Wire.CONTENT_SSE }), Wire.sseHeaders)
  })

  const messages = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const refused = guard(request)
    if (refused !== undefined) return refused
    if (request.method !== "POST") return Wire.methodNotAllowed("POST")
    let authenticated: HttpAuthentication.Authenticated | undefined
    if (authentication !== undefined) {
      const result = yield* Effect.result(authentication.authenticate(request))
      if (Result.isFailure(result)) return result.failure
      authenticated = result.success
    }
    const id = sessionIdOf(request.url)
    if (id === undefined) return Wire.badRequest("the sessionId query parameter is required")
    // Another principal's session is unknown to this one: nothing says it exists.
    const entry = sessions.find(id, authenticated?.owner)
    if (entry === undefined) return Wire.transportError(404, "Session not found")
    if (!Wire.isJsonContent(request.headers["content-type"])) {
      return Wire.transportError(415, "Unsupported Media Type: the body must be application/json")
    }
    const read = yield* Wire.readFrame(request, maxBodyBytes, meter)
    if (Result.isFailure(read)) return read.failure
    if (authenticated !== undefined) {
      if (requiredScopes !== undefined) {
        const required = missingScopesOf(messagesOf(read.success), requiredScopes, authenticated.scopes)
        if (required !== undefined) return authentication!.insufficientScope(authenticated, required)
      }
      entry.authenticated = authenticated
    }
    if (!(yield* Queue.offer(entry.incoming, Result.succeed(read.success)))) {
      return Wire.transportError(404, "Session not found")
    }
    return HttpServerResponse.text("Accepted", { status: 202 })
  })

  return {
    sse: Meter.handler(sse, meter),
    messages: Meter.handler(messages, meter),
    sessionCount: () => sessions.size,
    evictedConnections: () => evicted
  } satisfies SseServer
})

/** Adds the SSE and messages routes to the `HttpRouter`. */
export const layer = <E, R>(
  options: Options<E, R>
): Layer.Layer<never, never, HttpRouter.HttpRouter | Exclude<R, SessionServices>> =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const router = yield* HttpRouter.HttpRouter
      const server = yield* make(options)
      yield* router.add("GET", options.ssePath ?? "/sse", server.sse)
      yield* router.add("POST", options.messagesPath ?? "/messages", server.messages)
    })
  )
