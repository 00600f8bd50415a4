/**
 * One answer per request on each stream of a shared event store, whichever
 * process writes it.
 *
 * Two processes may answer the same request of a session that moved while
 * the request ran: its next owner, reopening the session, stores -32603 for
 * each request its streams still owed (the store's `owed`), and its former
 * owner, until its sweep lets the session go, may still finish one of those
 * requests and store the real answer. The shard moved whether or not the
 * former owner is gone, and the next owner cannot tell which. So every
 * answer stored on a stream that tracks what it owes is recorded first
 * (`SessionState.claimAnswers`, atomic across processes): the first one
 * recorded is stored; a later one is stored as an empty event instead (the
 * stream's `pending` goes on as it says, and the id it gets is the one its
 * live event carries, past the answer stored first: a client resuming from
 * it is not given that one too). A client resuming the stream thus reads one
 * answer per request.
 */
import type * as EventStore from "@effect-mcp/http/EventStore"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { SessionStateShape } from "../SessionState.ts"

/** The ids of the responses an event's data carries (none for a priming event, a notification or a request). */
const answeredBy = (data: string): ReadonlyArray<JsonRpc.RequestId> => {
  const decoded = JsonRpcCodec.decode(data)
  if (Result.isFailure(decoded)) return []
  const ids: Array<JsonRpc.RequestId> = []
  const frame = decoded.success
  for (const message of JsonRpcCodec.isBatch(frame) ? frame : [frame]) {
    if (!JsonRpcCodec.isDecodeFailure(message) && JsonRpc.isResponse(message) && message.id !== null) {
      ids.push(message.id)
    }
  }
  return ids
}

/**
 * `events` storing at most one answer per request on each stream, as
 * `store` records them; `events` itself when it keeps no debts (not shared,
 * or without `owed`): no other process then answers its streams' requests.
 */
export const oneAnswer = (events: EventStore.EventStoreShape, store: SessionStateShape): EventStore.EventStoreShape => {
  if (events.shared !== true || events.owed === undefined) return events
  const append = (streamId: string, data: string, options?: EventStore.AppendOptions) => {
    // Only the events of a stream that owes answers say what it still owes: the others answer nothing.
    if (options?.pending === undefined || data === "") return events.append(streamId, data, options)
    const ids = answeredBy(data)
    if (ids.length === 0) return events.append(streamId, data, options)
    return store.claimAnswers(streamId, ids).pipe(
      Effect.catch((error) =>
        // Unrecorded, it is stored all the same: an answer twice is rarer than none.
        Effect.as(Effect.logWarning(`an answer stored unrecorded: ${error.message}`), true)
      ),
      Effect.flatMap((first) => {
        if (first) return events.append(streamId, data, options)
        return Effect.andThen(
          Effect.logDebug(`requests ${ids.join(", ")} of stream ${streamId} were answered elsewhere first`),
          events.append(streamId, "", options)
        )
      })
    )
  }
  // Called on the store: a store may be a class whose methods read `this`.
  const owed = events.owed
  const forgetSession = events.forgetSession
  return {
    append,
    replayAfter: (eventId) => events.replayAfter(eventId),
    forget: (streamId) => events.forget(streamId),
    forgetSession: forgetSession === undefined ? undefined : (sessionId) => forgetSession.call(events, sessionId),
    owed: (sessionId) => owed.call(events, sessionId),
    shared: true
  }
}
