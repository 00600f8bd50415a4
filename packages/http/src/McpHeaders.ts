/**
 * The names of the HTTP headers the MCP transports define, in one place so
 * that the servers, clients, the cluster's forwarding and the benchmarks all
 * read and write the same ones.
 *
 * Every name is lower case: HTTP header names ignore case, and Node's
 * `IncomingMessage.headers` and effect's `HttpServerRequest.headers` (and
 * `Headers` generally) hold them lower-cased, so a lookup by these names
 * finds the header whatever case the peer sent it in. The specification
 * spells them `Mcp-Session-Id`, `MCP-Protocol-Version`, `Last-Event-ID`,
 * `Mcp-Method`, `Mcp-Name` and `Mcp-Param-<Name>`.
 *
 * This module imports nothing, so that anything (a bare `node:http` server
 * among them) can take the names without loading the transports.
 */

/**
 * `Mcp-Session-Id`: the stateful Streamable HTTP session, assigned by the
 * server on the reply to `initialize` and sent back by the client on every
 * later request of the session.
 */
export const SESSION_ID = "mcp-session-id"

/**
 * `MCP-Protocol-Version`: the revision the client negotiated, sent on every
 * request after `initialize` (on a stateless revision, the one the request's
 * `_meta` names, on every request).
 */
export const PROTOCOL_VERSION = "mcp-protocol-version"

/**
 * `Last-Event-ID`: the id of the last SSE event a client received, sent on
 * the GET that resumes a dropped stream (standard SSE, which Streamable HTTP
 * uses for resumption).
 */
export const LAST_EVENT_ID = "last-event-id"

/**
 * `Mcp-Method`: the JSON-RPC method of the request, mirrored from the body on
 * a stateless revision (2026-07-28) so that intermediaries can route without
 * reading the body.
 */
export const METHOD = "mcp-method"

/**
 * `Mcp-Name`: what the request's method acts on (the tool of a
 * `tools/call`, the prompt of a `prompts/get`, the URI of a
 * `resources/read`, the task of a Tasks request), mirrored from the body
 * alongside {@link METHOD}.
 */
export const NAME = "mcp-name"

/**
 * The prefix of `Mcp-Param-<Name>`: a tool argument mirrored into a header
 * (SEP-2243). The full name is this prefix and the declared name lower-cased;
 * see `ParamHeaders` for the declarations and the values.
 */
export const PARAM_PREFIX = "mcp-param-"
