/**
 * Why an outgoing request did not produce a result, apart from the error the
 * other side answered with (that one arrives as a protocol `McpError`).
 */
import * as Schema from "effect/Schema"

const RequestId = Schema.Union([Schema.String, Schema.Number])

/** No response arrived in time; `notifications/cancelled` was sent to the other side. */
export class RequestTimeout extends Schema.TaggedError<RequestTimeout>()("RequestTimeout", {
  method: Schema.String,
  requestId: RequestId,
  /** Milliseconds waited before giving up. */
  elapsedMs: Schema.Number,
  /** `Idle`: no response nor progress within the timeout; `Total`: the maximum total time ran out. */
  reason: Schema.Literals(["Idle", "Total"])
}) {
  override get message(): string {
    return `${this.method} (id ${this.requestId}) timed out after ${this.elapsedMs} ms (${this.reason})`
  }
}

/**
 * The session closed (or its transport ended) while the request was pending
 * or before it was sent. When the transport failed, `cause` is its error and
 * the message ends with what it says (a stdio server's exit code or signal
 * and the tail of its stderr, say).
 */
export class SessionClosed extends Schema.TaggedError<SessionClosed>()("SessionClosed", {
  method: Schema.String,
  reason: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {
  override get message(): string {
    const detail = causeMessage(this.cause)
    const base = `${this.method}: session closed (${this.reason})`
    return detail === undefined ? base : `${base}: ${detail}`
  }
}

const causeMessage = (cause: unknown): string | undefined => {
  const message =
    typeof cause === "object" && cause !== null ? (cause as { readonly message?: unknown }).message : undefined
  return typeof message === "string" && message !== "" ? message : undefined
}

/**
 * Refused locally, nothing was sent: the other side did not declare the
 * capability the method needs, or the negotiated revision has no such method.
 */
export class NotSupported extends Schema.TaggedError<NotSupported>()("NotSupported", {
  method: Schema.String,
  reason: Schema.Literals(["CapabilityNotDeclared", "MethodNotInRevision", "NotInitialized"]),
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.method}: ${this.detail}`
  }
}

/** The keepalive ping got no answer: the connection is treated as dead. `cause` is the ping's failure. */
export class KeepaliveFailed extends Schema.TaggedError<KeepaliveFailed>()("KeepaliveFailed", {
  missed: Schema.Number,
  cause: Schema.optional(Schema.Defect())
}) {
  override get message(): string {
    const why = causeMessage(this.cause)
    return why === undefined ? "the keepalive ping failed" : `the keepalive ping failed: ${why}`
  }
}
