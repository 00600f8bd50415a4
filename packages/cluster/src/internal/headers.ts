/**
 * The names of the headers one runner sets for another (the cluster's own,
 * besides the MCP ones of `@effect-mcp/http/McpHeaders`), in one place. A
 * runner believes them only on a hop connection (one that opened with its
 * secret); from a client they are stripped (`PRIVATE`).
 *
 * Lower case, as Node and effect's `Headers` hold header names.
 */

/**
 * The header hops once carried the owner's secret in (a hop now proves itself
 * once per connection): still stripped from every client's request.
 */
export const HOP = "x-effect-mcp-cluster-hop"

/** Set by an owner on its reply to a hop for a session whose shard it does not hold (421, `not-owner`). */
export const HOP_REFUSED = "x-effect-mcp-cluster-hop-refused"

/** The id the receiving process chose for the session an `initialize` opens (its shard is the owner's). */
export const NEW_SESSION = "x-effect-mcp-cluster-session"

/** The client's address as the receiving process saw it, for the owner's per-client limits. */
export const CLIENT = "x-effect-mcp-cluster-client"

/**
 * Headers that belong to one connection and its framing, never passed across
 * the hop either way: the hop-by-hop ones (RFC 9110 7.6.1) and the length,
 * which the hop's frames carry themselves.
 */
export const OF_ONE_CONNECTION: ReadonlyArray<string> = [
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "content-length"
]

/** The headers one runner sets for another, never taken from a client (nor passed to the server). */
export const PRIVATE: ReadonlySet<string> = new Set([NEW_SESSION, CLIENT, HOP])
