/**
 * The GET and DELETE sides of the Streamable HTTP server: GET opens the
 * session's stream for messages unrelated to a request, or resumes a dropped
 * stream from `Last-Event-ID`; DELETE ends the session.
 *
 * A resumption naming a session this process does not hold is answered from
 * the event store when several processes share it (`shared`) and it has that
 * session's events: the events after `Last-Event-ID`, then the end of the
 * stream, so the client resumes again from the last one it got. Not with
 * authentication: a session's owner is known only where it lives. Nor for a
 * session that ended (deleted, expired), though a process not holding it
 * cannot tell that it ended: the process that held it drops its events from
 * the store as it ends (`EventStore.forgetSession`), so the GET finds none
 * and gets 404, as any request naming the session does.
 *
 * Both are generators made once (`Effect.fnUntraced`), as every per-request
 * step of the engine is: a generator function made per call costs its own
 * generator prototype and map.
 */
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Stream from "effect/Stream"
import type * as EventStore from "../EventStore.ts"
import type { Authenticated } from "../HttpAuthentication.ts"
import * as Headers from "./httpHeaders.ts"
import { HttpSession } from "./httpServerSession.ts"
import type { Sessions } from "./httpServerSessions.ts"
import * as Streams from "./httpServerStream.ts"
import * as Wire from "./httpWire.ts"
import { formatEvent } from "./httpWire.ts"

export interface Context {
  /** The revisions the server speaks: a request's `MCP-Protocol-Version` must name one. */
  readonly supportedVersions: ReadonlyArray<string>
  /** Whether sessions are stateful and offer the GET stream. */
  readonly standalone: boolean
  /** Whether streams are resumable (an event store is kept). */
  readonly resumable: boolean
  /** The event store, for resumptions of sessions held by another process. */
  readonly store?: EventStore.EventStoreShape | undefined
  readonly sessions: Sessions
}

/** Answers a GET: the session's stream, or the resumption of one (only the principal's own session, when authenticated). */
export const get = Effect.fnUntraced(function* (
  request: HttpServerRequest.HttpServerRequest,
  context: Context,
  authenticated?: Authenticated | undefined
) {
  if (!Wire.accepts(request.headers["accept"], Wire.CONTENT_SSE)) {
    return Wire.transportError(406, "Not Acceptable: the client must accept text/event-stream")
  }
  const version = request.headers[Wire.HEADER_PROTOCOL_VERSION]
  const unsupported = Wire.unsupportedVersion(version, context.supportedVersions)
  if (unsupported !== undefined) return unsupported
  // Stateless revisions have no GET stream (subscriptions/listen replaces it).
  if (!context.standalone || Headers.isStatelessVersion(version)) return Wire.methodNotAllowed("POST, DELETE")
  const session = context.sessions.of(request, authenticated)
  const lastEventId = request.headers[Wire.HEADER_LAST_EVENT_ID]
  if (!(session instanceof HttpSession)) {
    const store = context.store
    if (store?.shared !== true || lastEventId === undefined || authenticated !== undefined) return session
    const id = request.headers[Wire.HEADER_SESSION_ID]
    return (id === undefined ? undefined : yield* replayElsewhere(store, id, lastEventId)) ?? session
  }
  const headers = { [Wire.HEADER_SESSION_ID]: session.id ?? "" }
  let stream: Streams.LogicalStream | undefined
  if (lastEventId !== undefined && context.resumable) {
    stream = yield* session.resume(lastEventId)
    if (stream === undefined) return Wire.badRequest("unknown or expired Last-Event-ID", headers)
  } else {
    stream = yield* session.openStandalone(Streams.primes(session.protocolVersion ?? version))
    if (stream === undefined) {
      return Wire.transportError(409, "Conflict: a GET stream is already open for this session", headers)
    }
  }
  session.touch()
  return Streams.sseResponse(session.body(stream), headers)
})

/** The events a session held elsewhere stored after `lastEventId`, as a stream that ends; undefined when none are. */
const replayElsewhere = (store: EventStore.EventStoreShape, sessionId: string, lastEventId: string) =>
  Effect.map(
    Effect.orElseSucceed(store.replayAfter(lastEventId), () => undefined),
    (replay): HttpServerResponse.HttpServerResponse | undefined => {
      // The event must belong to the session named: ids are not capabilities.
      if (replay === undefined || !replay.streamId.startsWith(`${sessionId}_`)) return undefined
      let text = ""
      for (const event of replay.events) {
        text += formatEvent({ id: event.id, event: event.data === "" ? undefined : "message", data: event.data })
      }
      return Streams.sseResponse(Stream.encodeText(Stream.make(text)), { [Wire.HEADER_SESSION_ID]: sessionId })
    }
  )

/** Answers a DELETE: ends the session it names (only the principal's own, when authenticated). */
export const del = Effect.fnUntraced(function* (
  request: HttpServerRequest.HttpServerRequest,
  context: Context,
  authenticated?: Authenticated | undefined
) {
  const unsupported = Wire.unsupportedVersion(request.headers[Wire.HEADER_PROTOCOL_VERSION], context.supportedVersions)
  if (unsupported !== undefined) return unsupported
  const session = context.sessions.of(request, authenticated)
  if (!(session instanceof HttpSession)) return session
  yield* context.sessions.close(session)
  return HttpServerResponse.empty({ status: 200 })
})
