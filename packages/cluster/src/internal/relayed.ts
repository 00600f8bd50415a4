/**
 * The receiving process's side of a reply its owner streams back (a GET's
 * stream, or a POST's SSE body): relayed part by part, and when the owner is
 * lost before the end, what it still owed the client's requests is answered
 * here (internal/lostAnswers.ts). Counted through `countLost`.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as Forward from "./forward.ts"
import * as LostAnswers from "./lostAnswers.ts"
import { logLost, lostReply } from "./replies.ts"

/** The reply of an exchange began again: its owner was lost and the cluster re-sent it. */
const restarted = new Error("the exchange was re-sent to the session's new owner")

/**
 * Streams the owner's reply to a GET back; when the owner is lost first, the
 * answer is 503. `countLost` counts an exchange answered because its owner was lost.
 */
export const relay = (
  reply: Stream.Stream<Forward.Part, unknown>,
  countLost: () => void
): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
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
      countLost()
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
      countLost()
      return lostReply("")
    }
    return streamed(
      { status: head.status, headers: head.headers, contentType: head.contentType },
      Stream.fromQueue(queue).pipe(Stream.ensuring(Fiber.interrupt(fiber))),
      "",
      countLost
    )
  })

/**
 * Streams a reply's body from its owner; when the owner is lost first,
 * what it still owed to the requests of `request` (the POST body) is answered here.
 * A part other than text (a head, `Lost`) shows the exchange was started again.
 */
export const streamed = (
  head: { readonly status: number; readonly headers: Record<string, string>; readonly contentType: string },
  chunks: Stream.Stream<Forward.Part, unknown>,
  request: string,
  countLost: () => void,
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
  return HttpServerResponse.stream(body, head)
}
