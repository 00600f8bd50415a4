/**
 * What can go wrong on the client's side of a call beyond what the engine
 * reports (protocol errors, timeouts, closed sessions, local refusals): a
 * result that does not match its schema, a paginated list that loops, a
 * multi-round-trip request that cannot be completed, a tool that failed.
 */
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Schema from "effect/Schema"

/** The server's answer does not have the shape the method (or the caller's schema) requires. */
export class InvalidResult extends Schema.TaggedError<InvalidResult>()("InvalidResult", {
  method: Schema.String,
  /**
   * `Malformed`: the result does not decode with the method's schema;
   * `OutputSchema`: `structuredContent` fails the caller's schema or the tool's advertised `outputSchema`;
   * `MissingStructuredContent`: a schema was expected but the tool returned no `structuredContent`.
   */
  reason: Schema.Literals(["Malformed", "OutputSchema", "MissingStructuredContent"]),
  message: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {}

/** A paginated list that would never end: the server repeated a cursor, or sent more pages than allowed. */
export class PaginationError extends Schema.TaggedError<PaginationError>()("PaginationError", {
  method: Schema.String,
  reason: Schema.Literals(["CursorRepeated", "TooManyPages"]),
  /** Pages received before giving up. */
  pages: Schema.Number,
  cursor: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return this.reason === "CursorRepeated"
      ? `${this.method}: the server repeated cursor ${JSON.stringify(this.cursor)} after ${this.pages} pages`
      : `${this.method}: more than ${this.pages} pages`
  }
}

/** A 2026-07-28 request whose `input_required` answers could not be completed. */
export class InputRequiredError extends Schema.TaggedError<InputRequiredError>()("InputRequiredError", {
  method: Schema.String,
  /**
   * `TooManyRounds`: the server kept asking past the configured bound;
   * `MissingHandler`: it asked for input this client has no handler for;
   * `Malformed`: the `input_required` result could not be read.
   */
  reason: Schema.Literals(["TooManyRounds", "MissingHandler", "Malformed"]),
  message: Schema.String
}) {}

/** A 2026-07-28 `subscriptions/listen` stream that could not be established. */
export class SubscriptionError extends Schema.TaggedError<SubscriptionError>()("SubscriptionError", {
  /** `NotAcknowledged`: the server sent no `notifications/subscriptions/acknowledged` in time. */
  reason: Schema.Literals(["NotAcknowledged"]),
  message: Schema.String
}) {}

/**
 * A tool reported a tool-level failure (`isError: true`) to a caller that
 * asked for typed output: there is no structured content to decode.
 */
export class ToolError extends Schema.TaggedError<ToolError>()("ToolError", {
  name: Schema.String,
  /** The result's content blocks, usually text saying what went wrong. */
  content: Schema.Array(Schema.Unknown),
  message: Schema.String,
  /**
   * The failure's fields when the tool sent them: the result's
   * `structuredContent`, or the JSON its text block holds (an effect-mcp
   * tool's declared failure Schema encodes both). Decode it with the same
   * Schema, or pass `failure` to `callTool` to have the call fail with it.
   */
  structuredContent: Schema.optional(Schema.Unknown)
}) {}

/** The reason a handler refused or failed a server request, as the wire error the server sees. */
export const toMcpError = (cause: unknown): McpError.McpError =>
  McpError.isMcpError(cause)
    ? cause
    : new McpError.InternalError({ message: cause instanceof Error ? cause.message : String(cause) })

/**
 * A tool call run as a task did not come to a result: the task ended
 * `cancelled` (by the server, or by a `tasks/cancel` of someone else), or
 * `failed` without the JSON-RPC error that made it fail (a task that carries
 * its error fails the call with that error, as the call itself would have).
 */
export class TaskError extends Schema.TaggedError<TaskError>()("TaskError", {
  taskId: Schema.String,
  reason: Schema.Literals(["Cancelled", "Failed"]),
  message: Schema.String
}) {}
