/**
 * What the Streamable HTTP client knows of its session: the id the server
 * assigned, the revision it sends in `MCP-Protocol-Version` (learnt from the
 * `initialize` result), the tools' `Mcp-Param-*` declarations, and the queue
 * the session's frames are delivered to. A 404 for the session expires it:
 * the queue fails with `SessionExpired` and sends fail until `renew` readies
 * a new session (a new queue, no session id).
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Wire from "./httpWire.ts"
import * as Sniff from "./jsonRpcSniff.ts"
import * as ToolParamHeaders from "./toolParamHeaders.ts"

/** The server no longer knows the session (HTTP 404): start a new session. */
export class SessionExpired extends Schema.TaggedError<SessionExpired>()("SessionExpired", {
  sessionId: Schema.String
}) {
  override get message(): string {
    return `the server ended session ${this.sessionId} (HTTP 404); initialize a new session`
  }
}

/** Why sends fail once the transport closed for no other reason. */
export const closedError = new Transport.TransportError({ reason: "Closed", message: "HTTP transport closed" })

type Incoming = Queue.Queue<Transport.Incoming, Transport.TransportError | Cause.Done>

const messagesIn = (decoded: JsonRpcCodec.Decoded): ReadonlyArray<JsonRpc.Message> => Sniff.messagesOf(decoded)

/** The client's session state; one per transport, renewed in place after expiry. */
export class HttpClientSession {
  sessionId: string | undefined = undefined
  protocolVersion: string | undefined = undefined
  /** Sends fail once set: the scope closed, the session expired, or the stream failed. */
  closedWith: Transport.TransportError | undefined = undefined
  /** The `x-mcp-header` declarations of the tools listed through this transport (SEP-2243). */
  readonly toolParams = ToolParamHeaders.make()
  private incoming: Incoming
  private expiredSignal = Deferred.makeUnsafe<SessionExpired>()
  private readonly initializeIds = new Set<JsonRpc.RequestId>()
  private readonly capacity: number
  private readonly extraHeaders: Readonly<Record<string, string>> | undefined

  constructor(incoming: Incoming, capacity: number, headers: Readonly<Record<string, string>> | undefined) {
    this.incoming = incoming
    this.capacity = capacity
    this.extraHeaders = headers
  }

  /** The current session's frames; read again after `renew`, it reads the new session's. */
  get queue(): Incoming {
    return this.incoming
  }

  get closed(): boolean {
    return this.closedWith !== undefined
  }

  /** Completes when the server answers 404 for the current session. */
  get expired(): Effect.Effect<SessionExpired> {
    return Effect.suspend(() => Deferred.await(this.expiredSignal))
  }

  /** Notes the requests being sent whose results teach the transport something. */
  watch(requests: ReadonlyArray<JsonRpc.Request>): void {
    for (const request of requests) if (request.method === "initialize") this.initializeIds.add(request.id)
    this.toolParams.watch(requests)
  }

  private learn(messages: ReadonlyArray<JsonRpc.Message>): void {
    this.toolParams.learn(messages)
    if (this.initializeIds.size === 0) return
    for (const message of messages) {
      if (!JsonRpc.isSuccess(message) || !this.initializeIds.has(message.id)) continue
      this.initializeIds.delete(message.id)
      const version = (message.result as { readonly protocolVersion?: unknown } | null)?.protocolVersion
      if (typeof version === "string") this.protocolVersion = version
    }
  }

  /** Hands a received frame to the session; returns the ids of the responses it held. */
  deliver(text: string): Effect.Effect<ReadonlyArray<JsonRpc.RequestId>> {
    return Effect.suspend(() => this.offer(JsonRpcCodec.decode(text)))
  }

  /**
   * Hands a POST's JSON reply to the session; returns the ids of the
   * responses it held, or undefined, handing nothing over, when it is not
   * JSON-RPC. A reply has no request of the server's to answer with a parse
   * error: the POST's own requests fail instead.
   */
  deliverReply(text: string): Effect.Effect<ReadonlyArray<JsonRpc.RequestId> | undefined> {
    return Effect.suspend(() => {
      const decoded = JsonRpcCodec.decode(text)
      return Result.isSuccess(decoded) ? this.offer(decoded) : Effect.undefined
    })
  }

  private offer(decoded: Transport.Incoming): Effect.Effect<ReadonlyArray<JsonRpc.RequestId>> {
    const messages = Result.isSuccess(decoded) ? messagesIn(decoded.success) : []
    this.learn(messages)
    return Effect.as(Queue.offer(this.incoming, decoded), Sniff.responseIdsOf(messages))
  }

  /** Hands a message made on this side (an answer for a request the transport failed) to the session. */
  deliverLocal(message: JsonRpc.Message): Effect.Effect<void> {
    return Effect.asVoid(Queue.offer(this.incoming, Result.succeed(message)))
  }

  /** Headers of a GET or DELETE: the caller's, the session id and the revision. */
  headers(): Record<string, string> {
    const headers: Record<string, string> = { ...this.extraHeaders }
    if (this.sessionId !== undefined) headers[Wire.HEADER_SESSION_ID] = this.sessionId
    if (this.protocolVersion !== undefined) headers[Wire.HEADER_PROTOCOL_VERSION] = this.protocolVersion
    return headers
  }

  /**
   * The server answered 404 for the session: the session's frames end with
   * `SessionExpired`. The requests of the refused POST (`unanswered`) are
   * answered first, with the failure itself (see `failedAnswer`): the server
   * never took them, so the session layer may send them again on a new session.
   */
  expire(
    unanswered: ReadonlyArray<JsonRpc.RequestId>,
    failedAnswer: (id: JsonRpc.RequestId, error: Transport.TransportError) => JsonRpc.Message
  ): Transport.TransportError {
    if (this.closedWith !== undefined) return this.closedWith
    const error = new SessionExpired({ sessionId: this.sessionId ?? "" })
    this.sessionId = undefined
    const failure = new Transport.TransportError({ reason: "Closed", message: error.message, cause: error })
    // Without a session every later POST would be refused: sends fail with the reason instead.
    this.closedWith = failure
    // All at once, with no wait: whoever reads an answer may renew the session, which must find it
    // expired and the old queue ended. An answer that finds the queue full is dropped: its request
    // then fails as the session closes.
    for (const id of unanswered) Queue.offerUnsafe(this.incoming, Result.succeed(failedAnswer(id, failure)))
    Queue.failCauseUnsafe(this.incoming, Cause.fail(failure))
    Deferred.doneUnsafe(this.expiredSignal, Exit.succeed(error))
    return failure
  }

  /** The transport failed (an oversize event, a legacy stream that broke): the frames end with `error`. */
  fail(error: Transport.TransportError): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.closedWith ??= error
      return Effect.asVoid(Queue.fail(this.incoming, error))
    })
  }

  /** The frames end without error (the legacy event stream ended, the scope closed). */
  end(): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.closedWith ??= closedError
      return Effect.asVoid(Queue.end(this.incoming))
    })
  }

  /**
   * Readies a new session after the old one expired: a new queue, no session
   * id nor revision (the next `initialize` goes without them), sends allowed again.
   * Does nothing unless the session expired.
   */
  renew(): Effect.Effect<boolean> {
    return Effect.suspend(() => {
      if (!Deferred.isDoneUnsafe(this.expiredSignal)) return Effect.succeed(false)
      return Effect.map(
        Queue.bounded<Transport.Incoming, Transport.TransportError | Cause.Done>(this.capacity),
        (queue) => {
          this.incoming = queue
          this.expiredSignal = Deferred.makeUnsafe<SessionExpired>()
          this.sessionId = undefined
          this.protocolVersion = undefined
          this.initializeIds.clear()
          this.closedWith = undefined
          return true
        }
      )
    })
  }
}
