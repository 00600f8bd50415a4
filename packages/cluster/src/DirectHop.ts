/**
 * The direct hop of a clustered server: the one way a process that does not
 * own a session carries an HTTP exchange to the owner, straight to the
 * owner's hop listener (on Node: a connection kept open between the two
 * processes, one exchange at a time on it, in frames that need no HTTP
 * parser on either side; loopback or the LAN). effect/cluster still decides
 * who owns what (shard assignment, runner health, rebalancing); the hop
 * carries the exchange.
 *
 * How the receiving process finds the owner: the session's row in
 * `SessionState` names the process that holds it (read when the shard's
 * owner is not known yet), and otherwise the entity RPC `Locate`, which
 * effect/cluster delivers to the shard's owner (waiting while a lost owner's
 * shards move), answers with the owner's hop address and its secret
 * (`Target`), remembered for the session's shard. An owner that no longer
 * holds the shard refuses the hop (421) without running anything, and one
 * that cannot be connected to received nothing: either way the exchange is
 * located again and sent to the next owner. A hop is never forwarded again
 * and never delivered twice: a hop that broke after it was sent is answered
 * as lost, once.
 *
 * Security. A connection to the hop listener counts only once it proved it
 * comes from a runner: it opens with the owner's secret (random per process,
 * compared in constant time), and is closed otherwise before anything is
 * served (its exchange then counts as not sent, `Unsent`: the address may be
 * a former runner's, its port now another process's). What only a receiving process may say (the client's address for
 * per-client limits, which session id to open) is believed on such a
 * connection only; on the public endpoint those headers are stripped from
 * every request. The client's own `Host`, `Origin`, `Authorization` and
 * session headers travel unchanged, so the owner applies the same
 * DNS-rebinding, authentication and session-binding checks as to a request
 * from the client itself. The secret travels only between runners (inside
 * `Locate` replies and at the start of each hop connection) and in the
 * cluster's database (each session's row names its holder): keep the runner
 * port (effect/cluster's transport, which has no authentication of its own),
 * the hop listener and the database reachable by the runners only.
 */
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import * as ClusterHeaders from "./internal/headers.ts"

/** Where another runner's endpoint is, and the secret it believes. */
export interface Target {
  /** The hop listener as other runners reach it: `tcp://10.0.0.5:41234`. */
  readonly origin: string
  /** The owner's hop secret. */
  readonly secret: string
}

/** An exchange carried by the hop: the client's request, its body read already. */
export interface Request {
  readonly method: string
  /** The path and query of the client's request. */
  readonly url: string
  /** The client's headers: a hop never carries the private ones from them (see `said`). */
  readonly headers: Record<string, string>
  /** The POST body (empty for GET and DELETE). */
  readonly body: string
  /**
   * What the receiving process says of the request, in the private headers
   * only runners may set: the id of the session it opens for the client
   * (when it owns no shard to open it in itself) and the client's address.
   * Carried beside the client's headers, which never carry them.
   */
  readonly said?: Record<string, string> | undefined
}

/** What came back from the owner. */
export type Result =
  /**
   * Nothing reached the owner (it could not be connected to, or did not take the connection): the
   * exchange may be sent to its next owner.
   */
  | { readonly _tag: "Unsent" }
  /** The owner no longer holds the session's shard: it did not run the exchange. */
  | { readonly _tag: "Refused" }
  /** The owner was reached but no reply head came back: the exchange may have run. */
  | { readonly _tag: "Lost" }
  | Reply

/** The owner's reply: whole, or streamed (an SSE stream). */
export interface Reply {
  readonly _tag: "Reply"
  readonly status: number
  /** Response headers, without those of the hop's own connection. */
  readonly headers: Record<string, string>
  readonly contentType: string | undefined
  /** The whole body (`stream` undefined), empty when there is none. */
  readonly body: Uint8Array
  /** The body as it arrives; fails when the owner is lost before its end. */
  readonly stream: Stream.Stream<string, unknown> | undefined
}

/**
 * A hop already sent for a request by a fast path in front of the server's
 * handler (NodeClusteredServer's Node relay), whose result it did not settle
 * itself (a refusal, a lost owner, a streamed reply): the handler takes it
 * from there without reading the body or sending the request again.
 */
export interface Attempt {
  readonly target: Target
  /** The request's body, read already. */
  readonly body: string
  readonly result: Result
}

/** The client side of the hop, one per process. */
export interface DirectHop {
  /** This runner's hop listener and secret, as the other runners are told. */
  readonly self: Target
  /** Sends an exchange to `target` (its path is the request's own). */
  readonly send: (target: Target, request: Request) => Effect.Effect<Result>
}

/** A header only runners may set: stripped from every client's request, never believed from one. */
export const HEADER_SECRET = ClusterHeaders.HOP

/** Set by an owner on its reply (421, `not-owner`) to a hop for a session whose shard it does not hold. */
export const HEADER_REFUSED = ClusterHeaders.HOP_REFUSED

/** `self` as one string, as `Locate` answers it and a session's row names its holder. */
export const encodeTarget = (target: Target): string => `${target.secret} ${target.origin}`

/** A target carried as one string, when it is one. */
export const decodeTarget = (text: string | undefined): Target | undefined => {
  if (text === undefined) return undefined
  const space = text.indexOf(" ")
  return space <= 0 ? undefined : { secret: text.slice(0, space), origin: text.slice(space + 1) }
}

/** Whether `given` is `secret`, in a time that does not depend on where they differ. */
export const isSecret = (secret: string, given: string | undefined): boolean => {
  if (given === undefined || given.length !== secret.length) return false
  let difference = 0
  for (let i = 0; i < secret.length; i++) difference |= secret.charCodeAt(i) ^ given.charCodeAt(i)
  return difference === 0
}
