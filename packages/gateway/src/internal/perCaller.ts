/**
 * The connections of upstreams that act for their caller (see
 * `TokenExchange`): one per upstream and principal, made on the principal's
 * first call with a token exchanged for the caller's, shared by that
 * principal's calls, and closed once idle for the upstream's
 * `idleTimeToLive` (an `RcMap` by upstream and principal). The token the
 * connection was made with is the one it keeps: a connection is given up
 * shortly before its token expires (when the authorization server said when),
 * so that the next call makes a new one with a new token.
 */
import * as McpClient from "@effect-mcp/client/McpClient"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Connector from "@effect-mcp/host/Connector"
import { HostError } from "@effect-mcp/host/HostError"
import * as McpConfig from "@effect-mcp/host/McpConfig"
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as RcMap from "effect/RcMap"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as TokenExchange from "../TokenExchange.ts"
import { withHeader } from "./headers.ts"

/** The connections per caller of the upstreams given a token exchange. */
export interface PerCaller {
  /** Whether `upstream` is reached per caller. */
  readonly has: (upstream: string) => boolean
  /** The caller's connection to `upstream`, held for the scope (the caller: `principal`, with its verified token). */
  readonly client: (
    upstream: string,
    principal: Transport.Authenticated | undefined
  ) => Effect.Effect<McpClient.McpClientShape, McpError.McpError | HostError, Scope.Scope>
}

const unavailable = (upstream: string, why: string) =>
  new HostError({
    reason: "Unavailable",
    server: upstream,
    message: `server ${JSON.stringify(upstream)} is unavailable to this caller: ${why}`
  })

/** The connections of the upstreams of `exchanges`, closed with the scope. */
export const make = <H>(options: {
  readonly exchanges: { readonly [upstream: string]: TokenExchange.Options }
  readonly config: McpConfig.Config
  readonly client: McpClient.Options
  /** The services of a connection to `upstream` (the handlers of its asks). */
  readonly handlers: (upstream: string) => Layer.Layer<H>
}): Effect.Effect<PerCaller, never, Scope.Scope | Connector.Connector> =>
  Effect.gen(function* () {
    const connector = yield* Connector.Connector
    const handlers = new Map<string, Context.Context<never>>()
    for (const upstream of Object.keys(options.exchanges)) {
      handlers.set(upstream, (yield* Layer.build(options.handlers(upstream))) as Context.Context<never>)
    }
    const exchangers = new Map(
      Object.entries(options.exchanges).map(([upstream, exchange]) => {
        const server = options.config.mcpServers[upstream]
        // A stdio upstream takes no token: its calls are refused, never made with the gateway's identity instead.
        return [
          upstream,
          server === undefined || McpConfig.isStdio(server)
            ? undefined
            : { server, exchange: TokenExchange.exchanger(server.url, exchange) }
        ] as const
      })
    )
    // The caller's token for the connection being made, by key (the RcMap's lookup takes the key alone).
    const subjects = new Map<string, Redacted.Redacted<string>>()
    const connections: RcMap.RcMap<string, McpClient.McpClientShape, HostError> = yield* RcMap.make({
      lookup: (key: string): Effect.Effect<McpClient.McpClientShape, HostError, Scope.Scope> =>
        Effect.gen(function* () {
          const upstream = key.slice(0, key.indexOf("\u0000"))
          const remote = exchangers.get(upstream)
          if (remote === undefined) return yield* unavailable(upstream, "it is not a remote server: it takes no token")
          const { server, exchange } = remote
          const subject = subjects.get(key)!
          const { token, expiresIn } = yield* Effect.mapError(exchange(subject), (failure) =>
            unavailable(upstream, failure.message)
          )
          if (expiresIn !== undefined) {
            // Given up a little before the token runs out (a call started then still has time); calls in flight
            // finish on it. Invalidated from a fiber of its own: the one in the entry's scope is interrupted by it.
            const margin = Duration.min(Duration.seconds(30), Duration.divideUnsafe(expiresIn, 10))
            yield* Effect.sleep(Duration.subtract(expiresIn, margin)).pipe(
              Effect.andThen(Effect.forkDetach(RcMap.invalidate(connections, key))),
              Effect.forkScoped
            )
          }
          const connected = yield* Effect.mapError(
            connector.connect(upstream, {
              ...server,
              headers: withHeader(server.headers, "authorization", `Bearer ${Redacted.value(token)}`)
            }),
            (error) => unavailable(upstream, error.message)
          )
          return yield* McpClient.make(options.client).pipe(
            Effect.provideService(Transport.Transport, Transport.Transport.of(connected.transport)),
            Effect.provideContext(handlers.get(upstream)!),
            Effect.mapError((error) => unavailable(upstream, error.message))
          )
        }),
      idleTimeToLive: (key: string) =>
        Duration.fromInputUnsafe(options.exchanges[key.slice(0, key.indexOf("\u0000"))]?.idleTimeToLive ?? "1 minute")
    })
    // Made once, not per call: a generator function made per call costs its own generator prototype and map.
    const client: PerCaller["client"] = Effect.fnUntraced(function* (upstream, principal) {
      const subject = principal === undefined ? undefined : TokenExchange.subjectTokenOf(principal.value)
      if (principal === undefined || subject === undefined) {
        // Never the gateway's identity in the caller's place.
        return yield* new McpError.InvalidRequest({
          message: `${JSON.stringify(upstream)} acts for its caller: the request carries no verified token to exchange`
        })
      }
      const key = `${upstream}\u0000${principal.owner}`
      subjects.set(key, subject)
      // A failed connection is not kept (an RcMap keeps a failure as long as a value): the next call tries again.
      return yield* RcMap.get(connections, key).pipe(Effect.tapError(() => RcMap.invalidate(connections, key)))
    })
    return { has: (upstream) => exchangers.has(upstream), client }
  })
