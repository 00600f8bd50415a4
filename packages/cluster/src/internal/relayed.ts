/**
 * The receiving process's side of a reply its owner streams back through the
 * direct hop (a GET's stream, or a POST's SSE body): relayed chunk by chunk,
 * and when the owner is lost before the end, what it still owed the client's
 * requests is answered here (`@effect-mcp/http/LostAnswers`). Counted through
 * `countLost`.
 */
import * as LostAnswers from "@effect-mcp/http/LostAnswers"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Stream from "effect/Stream"

/**
 * Streams a reply's body from its owner; when the owner is lost first,
 * what it still owed to the requests of `request` (the POST body) is answered here.
 */
export const streamed = (
  head: { readonly status: number; readonly headers: Record<string, string>; readonly contentType: string },
  chunks: Stream.Stream<string, unknown>,
  request: string,
  countLost: () => void,
  lost: Effect.Effect<void> = Effect.void
): HttpServerResponse.HttpServerResponse => {
  const requests = LostAnswers.requestsOf(request)
  const sse = head.contentType.startsWith("text/event-stream")
  const answered = sse && requests.ids.length > 0 ? new LostAnswers.AnsweredIds(requests.ids) : undefined
  let sent = ""
  const body = chunks.pipe(
    Stream.map((chunk) => {
      if (answered !== undefined) answered.see(chunk)
      else if (sent.length < 2) sent += chunk
      return chunk
    }),
    Stream.catchCause((cause) => {
      if (Cause.hasInterruptsOnly(cause)) return Stream.empty
      countLost()
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
  // The headers are set on the reply, not handed to its constructor (which copies them with Object.setPrototypeOf).
  return HttpServerResponse.setHeaders(
    HttpServerResponse.stream(body, { status: head.status, contentType: head.contentType }),
    head.headers
  )
}
