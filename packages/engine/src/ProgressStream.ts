/**
 * A request "with progress" as a Stream: its progress updates as they come,
 * then its result. The Peer's `requestWithProgress` and the client's
 * `callToolWithProgress` are both this one shape.
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import type * as CurrentRequest from "./CurrentRequest.ts"

/** An element of a request made "with progress": updates, then the result. */
export type ProgressEvent<A = unknown> =
  | { readonly _tag: "Progress"; readonly update: CurrentRequest.ProgressUpdate }
  | { readonly _tag: "Result"; readonly value: A }

/** The most events held for a reader that has not caught up: the newest, the oldest updates dropped first. */
export const maxBuffered = 1024

/**
 * Runs `request`, handing it the callback that receives its progress updates,
 * as a Stream of those updates that ends with the result (or fails with the
 * request's failure). The request runs while the Stream is read; stopping the
 * Stream interrupts it. A reader that falls behind by more than `maxBuffered`
 * events misses the oldest updates, never the result.
 *
 * @example
 * ```ts
 * import type * as Peer from "@effect-mcp/engine/Peer"
 * import * as ProgressStream from "@effect-mcp/engine/ProgressStream"
 *
 * declare const peer: Peer.Peer
 * export const events = ProgressStream.make((onProgress) =>
 *   peer.request("tools/call", { name: "slow", arguments: {} }, { onProgress })
 * )
 * ```
 */
export const make = <A, E>(
  request: (onProgress: (update: CurrentRequest.ProgressUpdate) => void) => Effect.Effect<A, E>
): Stream.Stream<ProgressEvent<A>, E> =>
  Stream.callback<ProgressEvent<A>, E>(
    (queue) =>
      request((update) => {
        Queue.offerUnsafe(queue, { _tag: "Progress", update })
      }).pipe(
        Effect.matchCauseEffect({
          onSuccess: (value) => Effect.andThen(Queue.offer(queue, { _tag: "Result", value }), Queue.end(queue)),
          onFailure: (cause) => Queue.failCause(queue, cause)
        }),
        Effect.forkScoped
      ),
    // Bounded: a server reporting progress faster than it is read costs at most this many updates, the
    // oldest dropped first (each update says where the request is now), never the result.
    { bufferSize: maxBuffered, strategy: "sliding" }
  )
