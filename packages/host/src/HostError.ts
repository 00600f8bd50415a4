/**
 * What the host itself can fail with, beside the errors of the call it
 * routes (those are the client's: `McpError`, `RequestTimeout`,
 * `TransportError`, ...): a name no server offers, a server that is not
 * connected, a call the consent hook refused.
 */
import * as Schema from "effect/Schema"

/** A failure of the host's own, with a `reason` to match on. */
export class HostError extends Schema.TaggedError<HostError>()("HostError", {
  /**
   * `UnknownServer`: no server of that name; `UnknownTool`, `UnknownPrompt`,
   * `UnknownResource`: nothing in the catalog by that name or URI (or, for a
   * resource, several servers and none chosen); `Unavailable`: the server is
   * not connected (it failed, or did not come back before the call's
   * timeout); `Declined`: the consent hook refused the call.
   */
  reason: Schema.Literals([
    "UnknownServer",
    "UnknownTool",
    "UnknownPrompt",
    "UnknownResource",
    "Unavailable",
    "Declined"
  ]),
  /** The server concerned, when there is one. */
  server: Schema.optional(Schema.String),
  message: Schema.String
}) {}
