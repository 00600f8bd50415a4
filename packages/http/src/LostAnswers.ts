/**
 * What a process relaying a Streamable HTTP POST to another server answers
 * itself when that server is lost before it answered (the cluster's runners
 * forwarding to a session's owner): an InternalError (-32603) per request
 * still owed, as JSON (the reply had not begun) or as SSE events (it was cut
 * short), read and written with the JSON-RPC codec and `SseEvent`, as the
 * transports do.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Result from "effect/Result"
import * as SseEvent from "./SseEvent.ts"

/** The requests of a POST body: their ids, and whether the body is a batch (answered by a batch). */
export interface Requests {
  readonly ids: ReadonlyArray<JsonRpc.RequestId>
  readonly batch: boolean
}

const none: Requests = { ids: [], batch: false }

/** The requests a POST body carries (notifications, responses and invalid entries have no answer to owe). */
export const requestsOf = (body: string): Requests => {
  const decoded = JsonRpcCodec.decode(body)
  if (Result.isFailure(decoded)) return none
  const frame = decoded.success
  const batch = JsonRpcCodec.isBatch(frame)
  const ids: Array<JsonRpc.RequestId> = []
  for (const entry of batch ? frame : [frame]) {
    if (!JsonRpcCodec.isDecodeFailure(entry) && JsonRpc.isRequest(entry)) ids.push(entry.id)
  }
  return { ids, batch }
}

/** The answer to a request whose owner was lost before it answered. */
export const lostResponse = (id: JsonRpc.RequestId): JsonRpc.Message =>
  McpError.toResponse(
    id,
    new McpError.InternalError({
      message: "the process serving this session was lost before the request completed; it may not have run"
    })
  )

/** The JSON body answering every request of `requests` (a batch for a batch); undefined when there is none. */
export const lostJson = (requests: Requests): string | undefined => answersJson(requests, lostResponse)

/** The JSON body answering every request of `requests` with `answer` (a batch for a batch); undefined when none. */
export const answersJson = (
  requests: Requests,
  answer: (id: JsonRpc.RequestId) => JsonRpc.Message
): string | undefined => {
  if (requests.ids.length === 0) return undefined
  const answers = requests.ids.map(answer)
  return JsonRpcCodec.encode(requests.batch ? answers : answers[0]!)
}

/** An SSE event answering each request of `ids`. */
export const lostEvents = (ids: Iterable<JsonRpc.RequestId>): string => {
  let text = ""
  for (const id of ids) text += SseEvent.format({ event: "message", data: JsonRpcCodec.encode(lostResponse(id)) })
  return text
}

/**
 * Follows an SSE reply's events to know which requests were answered: the
 * ids of the responses among them. Events may be split between chunks.
 */
export class AnsweredIds {
  readonly pending: Set<JsonRpc.RequestId>
  private readonly parser: SseEvent.Parser
  /** The last two characters seen: where the reply stopped, relative to its events. */
  private tail = "\n\n"

  constructor(ids: ReadonlyArray<JsonRpc.RequestId>) {
    this.pending = new Set(ids)
    this.parser = SseEvent.makeParser((event) => this.answered(event.data), {
      // The owner's events were bounded by its own server: nothing is refused here.
      maxEventSize: Number.MAX_SAFE_INTEGER
    })
  }

  private answered(data: string): void {
    // A priming event (no data) or anything not JSON-RPC answers nothing.
    const decoded = JsonRpcCodec.decode(data)
    if (Result.isFailure(decoded)) return
    const frame = decoded.success
    for (const message of JsonRpcCodec.isBatch(frame) ? frame : [frame]) {
      if (!JsonRpcCodec.isDecodeFailure(message) && JsonRpc.isResponse(message) && message.id !== null) {
        this.pending.delete(message.id)
      }
    }
  }

  /** Reads one more chunk of the reply. */
  see(chunk: string): void {
    if (this.pending.size === 0 || chunk.length === 0) return
    this.tail = (this.tail + chunk).slice(-2)
    this.parser.feed(chunk)
  }

  /**
   * The reply was cut short: the text that ends the event it stopped in
   * (empty at an event boundary), so the events written after it are read
   * as events of their own. It is read here too: an event it completes
   * answers its request, as it does for the client.
   */
  end(): string {
    const rest = this.tail === "\n\n" ? "" : this.tail.endsWith("\n") ? "\n" : "\n\n"
    if (rest !== "") this.see(rest)
    return rest
  }
}
