/**
 * What the streams of a session owe its client, kept in a shared event store
 * so that the session's next process can answer it: each event a POST stream
 * stores says which of its requests are still unanswered once it is sent
 * (`owing`; an empty event says so when a request of it is cancelled,
 * `forgiving`), and a session reopened from its snapshot appends an
 * InternalError (-32603) per request its streams still owed where it was
 * served before (`settle`), where a client resuming the stream finds it.
 * Nothing of it runs with a store that is not shared or keeps no debts.
 */
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as Effect from "effect/Effect"
import type * as EventStore from "../EventStore.ts"
import * as LostAnswers from "../LostAnswers.ts"
import type { LogicalStream } from "./httpServerStream.ts"

const keepsDebts = (store: EventStore.EventStoreShape | undefined): store is EventStore.EventStoreShape =>
  store?.shared === true && store.owed !== undefined

/**
 * What an event of `stream` that answers `answers` tells the store: the
 * requests the stream still owes once it is sent (undefined: nothing to say).
 */
export const owing = (
  store: EventStore.EventStoreShape,
  stream: LogicalStream,
  answers: ReadonlyArray<JsonRpc.RequestId> | undefined
): EventStore.AppendOptions | undefined => {
  if (!keepsDebts(store) || stream.standalone || stream.pending.size === 0) return undefined
  const pending: Array<JsonRpc.RequestId> = []
  for (const id of stream.pending) if (answers === undefined || !answers.includes(id)) pending.push(id)
  return { pending }
}

/**
 * What `stream` tells the store once requests it carried were cancelled: the
 * requests it still owes (undefined: nothing to say). A cancelled request is
 * never answered, so it must not stay owed, or the session's next process
 * would answer it (-32603) when its client asked for no answer.
 */
export const forgiving = (
  store: EventStore.EventStoreShape,
  stream: LogicalStream
): EventStore.AppendOptions | undefined =>
  // A JSON reply stores nothing, so it owes nothing in the store.
  !keepsDebts(store) || stream.standalone || stream.collected !== undefined
    ? undefined
    : { pending: [...stream.pending] }

/**
 * Answers what the streams of session `key` still owed where it was served
 * before (its process was lost, or let it go, with requests in flight). Each
 * answer appended leaves the rest owed, so a second run appends none.
 */
export const settle = (store: EventStore.EventStoreShape | undefined, key: string): Effect.Effect<void> => {
  // Called on the store: a store may be a class whose `owed` reads `this`.
  const owed = keepsDebts(store) ? store.owed?.(key) : undefined
  if (store === undefined || owed === undefined) return Effect.void
  return owed.pipe(
    Effect.flatMap((owed) =>
      Effect.forEach(
        owed,
        ({ streamId, ids }) =>
          Effect.forEach(
            ids,
            (id, i) =>
              store.append(streamId, JsonRpcCodec.encode(LostAnswers.lostResponse(id)), { pending: ids.slice(i + 1) }),
            { discard: true }
          ),
        { discard: true }
      )
    ),
    Effect.catch((error) =>
      Effect.logWarning(`requests of a session lost elsewhere not answered in the event store: ${error.message}`)
    )
  )
}
