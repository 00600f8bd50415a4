/**
 * The names of the headers one runner sets for another (the cluster's own,
 * besides the MCP ones of `@effect-mcp/http/McpHeaders`), in one place. A
 * runner believes them only on a direct hop carrying its own secret or on an
 * exchange it received as an entity RPC; from a client they are stripped
 * (forward.ts and replies.ts say which, where).
 *
 * Lower case, as Node and effect's `Headers` hold header names.
 */

/** Carries the owner's secret: the request is a hop from another runner (DirectHop). */
export const HOP = "x-effect-mcp-cluster-hop"

/** Set by an owner on a reply to a hop it refused: `not-owner` (421) or `lost` (503). */
export const HOP_REFUSED = "x-effect-mcp-cluster-hop-refused"

/** The id the receiving process chose for the session an `initialize` opens (its shard is the owner's). */
export const NEW_SESSION = "x-effect-mcp-cluster-session"

/** The client's address as the receiving process saw it, for the owner's per-client limits. */
export const CLIENT = "x-effect-mcp-cluster-client"

/**
 * When the receiving process sent an exchange (epoch ms), read on an entity
 * RPC only (a hop is never delivered twice): an owner refuses one sent well
 * before it took the session from a lost owner (effect/cluster may have
 * delivered it there first, and that owner may have run it). Left off an
 * exchange the receiving process knows reached no owner (its hop could not
 * even connect), which the next owner then serves however long it waited for
 * the shard to move.
 */
export const SENT_AT = "x-effect-mcp-cluster-sent-at"

/**
 * Asks the owner to answer `lost` without running anything: sent after a hop
 * to the owner broke, it is answered by the owner if it lives, else by the
 * session's next owner once effect/cluster moved the shard.
 */
export const LOST_PROBE = "x-effect-mcp-cluster-lost-probe"

/**
 * Asks, on a hop carrying a runner's secret, whether that runner is the
 * process the secret was made by: it answers 204 with this header. A process
 * started again at the same endpoint has another secret, so it answers as to
 * any request without it (see internal/owner.ts for why the difference counts).
 */
export const ALIVE = "x-effect-mcp-cluster-alive"
