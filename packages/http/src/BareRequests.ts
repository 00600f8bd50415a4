/**
 * What an MCP HTTP transport tells the `HttpClient` under it about the
 * requests it makes in a region: they need none of the extras
 * `HttpClient.make` gives every request.
 *
 * Per request `HttpClient.make` parses the URL, makes an `AbortController`,
 * registers the response with a `FinalizationRegistry` (to abort one dropped
 * unread) and wraps it to abort its reading when interrupted. A Streamable
 * HTTP POST needs none of it: it is not traced (a traced POST is not made
 * under this reference: it goes the usual way, with its span and trace
 * headers), it is bound to no scope (`HttpClient.withScope`), and its
 * response is always read to its end, or its reading interrupted, which an
 * implementation honouring the reference handles itself. On Node these
 * extras cost about a third of the client's CPU per POST (`apps/bench` W3).
 *
 * An `HttpClient` may honour it (platform-node's `NodeHttpClient.layer`
 * does) or ignore it: the requests behave the same either way.
 */
import * as Context from "effect/Context"

/**
 * True in a region whose requests need no span, no scope and no guard for
 * an unread response (see the module). Default false.
 */
export const BareRequests = Context.Reference<boolean>("@effect-mcp/http/BareRequests", {
  defaultValue: () => false
})
