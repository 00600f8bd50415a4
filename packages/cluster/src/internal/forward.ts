/**
 * How a receiving process finds a session's owner: the entity `McpSession`,
 * keyed by the session id, whose one RPC `Locate` runs nothing of the
 * session and answers where the owner's hop listener is (its direct hop,
 * DirectHop.ts). The exchange itself then goes by that hop, the one path
 * every forwarded request takes.
 *
 * Why the entity only locates. effect/cluster decides who owns a shard and
 * delivers an entity message to that runner, waiting while a lost runner's
 * shards move; that is what a receiving process needs from it. Carrying the
 * exchange as an RPC cost about 1.2 ms of CPU per forwarded call in its
 * client, RPC and serialization layers (the hop a few tens of µs, W8), a
 * second way with failures of its own, and an RPC whose runner is lost is
 * delivered again to the shard's next owner: an owner could not tell a call
 * that already ran on the lost runner from one that never reached it. A
 * `Locate` delivered twice is harmless, and a hop is never delivered twice.
 */
import type * as Cause from "effect/Cause"
import * as ClusterSchema from "effect/cluster/ClusterSchema"
import * as Entity from "effect/cluster/Entity"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as Rpc from "effect/rpc/Rpc"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as DirectHop from "../DirectHop.ts"
import * as ClusterHeaders from "./headers.ts"

/** The owner's answer to `Locate`: its hop target (DirectHop.encodeTarget). */
export const Located = Schema.Struct({ via: Schema.String })

/** Where the session's owner is; runs nothing of the session. */
export const Locate = Rpc.make("Locate", { success: Located })

/**
 * A clustered Streamable HTTP session: the entity keyed by its `Mcp-Session-Id`.
 * No client span per message: the HTTP server's span covers the exchange.
 */
export const McpSession = Entity.make("McpSession", [Locate]).annotate(ClusterSchema.ClientTracingEnabled, false)

/** The owner's side of `Locate`: answers with `via`, its own hop target. */
export const located = (via: string) => McpSession.of({ Locate: () => Effect.succeed({ via }) })

/** How often a refused `Locate` is asked again: soon at first, then at most every second. */
const locateRetry = Schedule.min([Schedule.exponential("20 millis"), Schedule.spaced("1 second")])

/**
 * `locate` (a `Locate` sent), asked again while it is refused (shards moving:
 * not yet assigned where it was sent, a full mailbox, storage briefly out),
 * all within `timeout`: a refusal is the cluster in motion, not the owner
 * out of reach.
 */
export const locateWithin = <A, E>(
  locate: Effect.Effect<A, E>,
  timeout: Duration.Duration
): Effect.Effect<A, E | Cause.TimeoutError> => Effect.timeout(Effect.retry(locate, locateRetry), timeout)

// The headers set by the receiving process for its owner, never taken from a
// client: named in headers.ts, and here under these names as well, which the
// tests use.
export { CLIENT as HEADER_CLIENT, NEW_SESSION as HEADER_NEW_SESSION } from "./headers.ts"

/** The exchange of a request whose body was read already, with what this process says of it (`said`). */
export const toExchange = (
  request: HttpServerRequest.HttpServerRequest,
  body: string,
  said: Record<string, string> | undefined
): DirectHop.Request => {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(request.headers)) {
    if (!ClusterHeaders.PRIVATE.has(name)) headers[name] = value
  }
  return { method: request.method, url: request.url, headers, body, said }
}
