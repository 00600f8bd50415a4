/**
 * The POST side of the Streamable HTTP server: checks a request (Accept,
 * Content-Type, size, protocol-version and mirrored headers), finds or makes
 * its session, hands the frame over and answers with 202, a JSON body or an
 * SSE stream.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Registry from "@effect-mcp/protocol/Registry"
import * as EffectContext from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import type { Authenticated, Authentication, RequiredScopes } from "../HttpAuthentication.ts"
import * as Session from "@effect-mcp/engine/Session"
import * as Tracing from "@effect-mcp/engine/Tracing"
import * as Headers from "./httpHeaders.ts"
import * as HttpSession from "./httpServerSession.ts"
import type { Sessions } from "./httpServerSessions.ts"
import * as Streams from "./httpServerStream.ts"
import * as Wire from "./httpWire.ts"
import { missingScopesOf } from "./jsonRpcSniff.ts"
import type * as McpMetrics from "@effect-mcp/engine/McpMetrics"

export interface Context {
  readonly supportedVersions: ReadonlyArray<ProtocolVersion.ProtocolVersion>
  readonly stateful: boolean
  readonly json: boolean
  readonly maxBodyBytes: number
  /** Counts the bodies read, when metrics are on. */
  readonly meter?: McpMetrics.TransportMeter | undefined
  /** Where a request finds (or makes) its session. */
  readonly sessions: Sessions
  /** The arguments a tool mirrors into `Mcp-Param-*` headers (checked on stateless `tools/call`). */
  readonly paramHeaders: ((toolName: string) => ReadonlyArray<Headers.ParamHeader> | undefined) | undefined
  /** How requests are authenticated (the 403 for missing scopes); undefined when they are not. */
  readonly authentication: Authentication | undefined
  /** The scopes each message needs (checked only with `authentication`). */
  readonly requiredScopes: RequiredScopes | undefined
  /** Tracing is on where the sessions are made (`Tracing.enabled`): requests link to their POST's span. */
  readonly traced: boolean
}

/**
 * Traced, each request's SERVER span will link to the span of the HTTP
 * request that carried it (effect's HTTP server span, continuing the POST's
 * `traceparent` header), as the MCP conventions ask.
 */
const linkTransport = (requests: ReadonlyArray<JsonRpc.Request>) =>
  Effect.withFiber((fiber) => {
    const span = EffectContext.getOrUndefined(fiber.context, Tracer.ParentSpan)
    if (span !== undefined) for (const request of requests) Tracing.linkTransport(request, span)
    return Effect.void
  })

const isInitialize = (message: JsonRpc.Message): message is JsonRpc.Request =>
  JsonRpc.isRequest(message) && message.method === "initialize"

const isListen = (request: JsonRpc.Request): boolean => request.method === "subscriptions/listen"

const requestedVersion = (message: JsonRpc.Request): string | undefined => {
  const params = message.params as { readonly protocolVersion?: unknown } | undefined
  return typeof params?.protocolVersion === "string" ? params.protocolVersion : undefined
}

const batchesAllowed = (version: string | undefined) =>
  version !== undefined && ProtocolVersion.isSupported(version) && Registry.get(version).batches

/**
 * A JSON reply whose status line and headers go out at once, before the
 * result exists: the client learns that its message was taken (in order)
 * and may send the next. The body, led by a space (JSON allows it; it is
 * what flushes the headers), is the response once every one was collected;
 * a request cancelled meanwhile leaves it blank.
 */
const jsonReply = (
  session: HttpSession.HttpSession,
  frame: JsonRpcCodec.Decoded,
  stream: HttpSession.LogicalStream,
  onBodyEnd: Effect.Effect<void>,
  headers: Record<string, string>,
  failed: ReadonlyArray<JsonRpc.ErrorResponse>
) => {
  const result = Effect.map(Deferred.await(stream.done), () => {
    const body = bodyOf(frame, stream, failed)
    return body === undefined || (Array.isArray(body) && body.length === 0) ? "" : JsonRpcCodec.encode(body)
  })
  // An open exchange keeps the session from idling out while the result is pending.
  const body = Stream.unwrap(
    Effect.sync(() => {
      session.beginExchange()
      return Stream.concat(Stream.succeed(" "), Stream.fromEffect(result)).pipe(
        Stream.ensuring(Effect.sync(() => session.endExchange()))
      )
    })
  )
  return Wire.withHeaders(
    HttpServerResponse.stream(Stream.encodeText(body).pipe(Stream.ensuring(onBodyEnd)), {
      status: 200,
      contentType: Wire.CONTENT_JSON
    }),
    headers
  )
}

/**
 * The reply's JSON body: a batch's responses, with those of its entries that
 * were no JSON-RPC message after them (each entry of a batch is answered);
 * a single message's response.
 */
const bodyOf = (
  frame: JsonRpcCodec.Decoded,
  stream: HttpSession.LogicalStream,
  failed: ReadonlyArray<JsonRpc.ErrorResponse>
): JsonRpc.Message | ReadonlyArray<JsonRpc.Message> | undefined => {
  const collected = stream.collected ?? []
  return JsonRpcCodec.isBatch(frame) ? (failed.length === 0 ? collected : [...collected, ...failed]) : collected[0]
}

/**
 * Hands a frame to a session and builds the reply. `failed` answers the
 * entries of a batch that were no JSON-RPC message (the frame holds the
 * others); a batch with any is answered in one JSON body, where their
 * answers join the rest. With `statusFromErrors`
 * (stateless revisions) the status line waits for the first message: an
 * error the status table maps is answered as JSON with that status, anything
 * else streams as usual.
 */
// One generator function for every POST (here and below): an inline `Effect.gen` would create one per call.
const serve = Effect.fnUntraced(function* (
  context: Context,
  session: HttpSession.HttpSession,
  frame: JsonRpcCodec.Decoded,
  messages: ReadonlyArray<JsonRpc.Message>,
  failed: ReadonlyArray<JsonRpc.ErrorResponse>,
  onBodyEnd: Effect.Effect<void>,
  statusFromErrors = false
) {
  const headers: Record<string, string> = session.id === undefined ? {} : { [Wire.HEADER_SESSION_ID]: session.id }
  const requests = messages.filter(JsonRpc.isRequest)
  for (const request of requests) {
    if (session.isPending(request.id)) {
      return Wire.errorResponse(
        400,
        new McpError.InvalidRequest({ message: `request id ${String(request.id)} is already in flight` }),
        { id: request.id, headers }
      )
    }
    if (isInitialize(request)) session.trackInitialize(request.id)
  }
  if (context.traced && requests.length > 0) yield* linkTransport(requests)
  if (requests.length === 0) {
    if (!(yield* session.offer(frame))) return Wire.transportError(404, "Session not found")
    yield* onBodyEnd
    return failed.length === 0
      ? HttpServerResponse.empty({ status: 202, headers })
      : Wire.jsonResponse(200, failed, headers)
  }
  const initialize = requests.find(isInitialize)
  const version = session.protocolVersion ?? (initialize === undefined ? undefined : requestedVersion(initialize))
  const stream = yield* session.openPost(
    requests.map((r) => r.id),
    // A listen's answer is a stream that stays open (2026-07-28): SSE whatever the response mode.
    (context.json && !requests.some(isListen)) || failed.length > 0 ? "json" : "sse",
    Streams.primes(version)
  )
  // The connection the reply opens with, before the frame is handled: a handler may end it at once
  // (closeRequestStream), and the reply still carries what was written on it.
  const connection = stream.connection
  if (!(yield* session.offer(frame, true))) return Wire.transportError(404, "Session not found")
  if (stream.collected === undefined) {
    if (statusFromErrors) {
      const first = yield* Deferred.await(stream.first)
      const status = Wire.errorStatusOf(first)
      if (status !== undefined) {
        // The SSE text already queued for it is never read: the connection ends with the session.
        yield* onBodyEnd
        return Wire.jsonResponse(status, first!, headers)
      }
    }
    // The rule of the reply's shape: `offer` returned once the session took
    // the frame, so a handler that answered without waiting on anything has
    // answered now. Its events then go out as one plain body with the
    // headers; any other answer streams.
    const whole = connection === undefined ? undefined : yield* session.completeText(stream, connection)
    if (whole !== undefined) {
      yield* onBodyEnd
      return Wire.withHeaders(HttpServerResponse.text(whole, { contentType: Wire.CONTENT_SSE }), {
        ...Wire.sseHeaders,
        ...headers
      })
    }
    return Streams.sseResponse(session.body(stream, connection).pipe(Stream.ensuring(onBodyEnd)), headers)
  }
  if (!statusFromErrors) {
    // Answered as the frame was taken (the rule above): one plain JSON
    // response says both "accepted" and the result; an answer still to come
    // takes the headers-first reply.
    if (!Deferred.isDoneUnsafe(stream.done)) return jsonReply(session, frame, stream, onBodyEnd, headers, failed)
  }
  yield* Deferred.await(stream.done)
  yield* onBodyEnd
  const body = bodyOf(frame, stream, failed)
  if (body === undefined) return HttpServerResponse.empty({ status: 202, headers })
  const status = statusFromErrors && !Array.isArray(body) ? Wire.errorStatusOf(body as JsonRpc.Message) : undefined
  return Wire.jsonResponse(status ?? 200, body, headers)
})

/**
 * A per-request session of a stateful revision starts as if initialized in
 * the revision the request names (no client capabilities known): it serves
 * the request with no handshake run on its behalf.
 */
const statelessClient: Session.Initialized["peerInfo"] = { name: "stateless-http-client", version: "0.0.0" }

const servePerRequest = Effect.fnUntraced(function* (
  context: Context,
  frame: JsonRpcCodec.Decoded,
  messages: ReadonlyArray<JsonRpc.Message>,
  failed: ReadonlyArray<JsonRpc.ErrorResponse>,
  legacyVersion: string | undefined,
  authenticated: Authenticated | undefined
) {
  const single = messages.length === 1 ? messages[0]! : undefined
  // An initialize is answered by the session itself; anything else is served as already initialized.
  const revision =
    legacyVersion === undefined || (single !== undefined && isInitialize(single))
      ? undefined
      : Session.negotiate(legacyVersion, context.supportedVersions)
  if (legacyVersion !== undefined && revision === undefined && (single === undefined || !isInitialize(single))) {
    return Wire.badRequest(`unsupported protocol version ${legacyVersion}`)
  }
  const { http, close } = yield* context.sessions.oneShot(
    revision === undefined ? undefined : { revision, peerCapabilities: {}, peerInfo: statelessClient },
    authenticated
  )
  // Notifications are processed before the session ends; replies end it when complete.
  const end = Effect.andThen(Effect.andThen(http.endInput, http.drained), close)
  return yield* serve(context, http, frame, messages, failed, end, legacyVersion === undefined).pipe(
    Effect.onInterrupt(() => close)
  )
})

const refuse = (problem: { readonly error: McpError.McpError; readonly id: JsonRpc.RequestId | null }) =>
  Wire.errorResponse(400, problem.error, { id: problem.id })

/**
 * Serves a frame in one of the session's exchanges: an open exchange keeps
 * the session from idling out while it is served. Begun at the call (inside
 * the POST's generator), as it was inline: no Effect more per POST.
 */
const exchange = (
  context: Context,
  session: HttpSession.HttpSession,
  frame: JsonRpcCodec.Decoded,
  messages: ReadonlyArray<JsonRpc.Message>,
  failed: ReadonlyArray<JsonRpc.ErrorResponse>,
  onBodyEnd: Effect.Effect<void>
) => {
  session.beginExchange()
  return serve(context, session, frame, messages, failed, onBodyEnd).pipe(
    Effect.ensuring(Effect.sync(() => session.endExchange()))
  )
}

/**
 * Serves the `initialize` that made `session`. An initialize answered with an
 * error established nothing: the session is closed once its answer is out, so
 * it holds no slot of the session limits (a client retrying a bad initialize
 * would otherwise lock itself out until the idle timeout), and an answer
 * complete at once carries no `Mcp-Session-Id`.
 */
const establish = Effect.fnUntraced(function* (
  context: Context,
  session: HttpSession.HttpSession,
  frame: JsonRpcCodec.Decoded,
  messages: ReadonlyArray<JsonRpc.Message>,
  failed: ReadonlyArray<JsonRpc.ErrorResponse>
) {
  let closed = false
  // The version is learnt from the answer as it is sent: none once answered means no handshake.
  const answered = Effect.suspend(() => {
    session.touch()
    if (session.protocolVersion !== undefined) return Effect.void
    closed = true
    return context.sessions.close(session)
  })
  const response = yield* exchange(context, session, frame, messages, failed, answered)
  return closed ? HttpServerResponse.removeHeader(response, Wire.HEADER_SESSION_ID) : response
})

/**
 * Answers a POST. `authenticated` is the request's principal when the server
 * authenticates (its session must be the principal's own, its messages may
 * need scopes); undefined otherwise.
 */
export const handle = Effect.fnUntraced(function* (
  request: HttpServerRequest.HttpServerRequest,
  context: Context,
  authenticated?: Authenticated | undefined
) {
  if (!Wire.acceptsJsonAndSse(request.headers["accept"])) {
    return Wire.transportError(406, "Not Acceptable: the client must accept application/json and text/event-stream")
  }
  if (!Wire.isJsonContent(request.headers["content-type"])) {
    return Wire.transportError(415, "Unsupported Media Type: the body must be application/json")
  }
  const headerVersion = request.headers[Wire.HEADER_PROTOCOL_VERSION]
  const read = yield* Wire.readFrame(request, context.maxBodyBytes, context.meter)
  if (Result.isFailure(read)) return read.failure
  const batch = JsonRpcCodec.isBatch(read.success)
  const entries = batch ? (read.success as ReadonlyArray<JsonRpcCodec.Decoded>) : [read.success]
  const messages: Array<JsonRpc.Message> = []
  const failed: Array<JsonRpc.ErrorResponse> = []
  for (const entry of entries) {
    if (JsonRpcCodec.isDecodeFailure(entry)) failed.push(entry.toResponse())
    else messages.push(entry as JsonRpc.Message)
  }
  // Nothing to serve: a 400 with the error (one per entry of a batch, JSON-RPC 2.0 section 6).
  if (messages.length === 0) return Wire.jsonResponse(400, batch ? failed : failed[0]!)
  // A batch is served without the entries that are no message, and their errors join its answers.
  const frame: JsonRpcCodec.Decoded = failed.length === 0 ? read.success : messages
  // Before anything reaches a session: the answer is an HTTP 403 the client can step up from.
  if (authenticated !== undefined && context.requiredScopes !== undefined) {
    const required = missingScopesOf(messages, context.requiredScopes, authenticated.scopes)
    if (required !== undefined) return context.authentication!.insufficientScope(authenticated, required)
  }
  // Refused after reading the body, so the error names the request it answers.
  const single = messages.length === 1 ? messages[0]! : undefined
  const unsupported = Wire.unsupportedVersion(
    headerVersion,
    context.supportedVersions,
    single !== undefined && JsonRpc.isRequest(single) ? single.id : null
  )
  if (unsupported !== undefined) return unsupported

  let bodyVersion: string | undefined
  for (const message of messages) {
    const version = Headers.metaVersionOf(message)
    if (Headers.isStatelessVersion(version)) {
      bodyVersion = version
      break
    }
  }
  const statelessVersion = bodyVersion ?? (Headers.isStatelessVersion(headerVersion) ? headerVersion : undefined)
  if (statelessVersion !== undefined) {
    if (batch) return Wire.badRequest(`batches are not supported by revision ${statelessVersion}`)
    const problem = Headers.checkStateless(request.headers, messages[0]!, context.paramHeaders)
    if (problem !== undefined) return refuse(problem)
    if (!(context.supportedVersions as ReadonlyArray<string>).includes(statelessVersion)) {
      return refuse({
        error: new McpError.UnsupportedProtocolVersion({
          message: `unsupported protocol version ${statelessVersion}`,
          data: { requested: statelessVersion, supported: [...context.supportedVersions] }
        }),
        id: JsonRpc.isRequest(messages[0]!) ? messages[0].id : null
      })
    }
    return yield* servePerRequest(context, frame, messages, failed, undefined, authenticated)
  }
  if (batch && messages.some(isInitialize)) return Wire.badRequest("initialize must not be part of a batch")
  if (!context.stateful) {
    const version = headerVersion ?? "2025-03-26"
    if (batch && !batchesAllowed(version)) return Wire.badRequest(`batches are not supported by revision ${version}`)
    return yield* servePerRequest(context, frame, messages, failed, version, authenticated)
  }

  if (request.headers[Wire.HEADER_SESSION_ID] === undefined && !batch && isInitialize(messages[0]!)) {
    const created = yield* context.sessions.create(request, authenticated)
    if (!(created instanceof HttpSession.HttpSession)) return created
    return yield* establish(context, created, frame, messages, failed)
  }
  const session = context.sessions.of(request, authenticated)
  if (!(session instanceof HttpSession.HttpSession)) return session
  if (batch && !batchesAllowed(session.protocolVersion)) {
    return Wire.badRequest(`batches are not supported by revision ${session.protocolVersion ?? "(none yet)"}`)
  }
  return yield* exchange(
    context,
    session,
    frame,
    messages,
    failed,
    Effect.sync(() => session.touch())
  )
})
