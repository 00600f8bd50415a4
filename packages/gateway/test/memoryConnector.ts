/**
 * The upstreams of the in-memory gateway tests: a `Connector` that reaches
 * servers by name, each connection a memory pair (through the real codec)
 * served by a session of its own.
 */
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Connector from "@effect-mcp/host/Connector"
import * as McpServer from "@effect-mcp/server/McpServer"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Gateway from "../src/Gateway.ts"

/** In-memory upstreams that can go away and come back. */
export interface Switchable {
  readonly connector: Layer.Layer<Connector.Connector>
  /** Ends the server's current connection and refuses every attempt to connect until `up` (an outage). */
  readonly down: (name: string) => Effect.Effect<void>
  /** Accepts connections to the server again (the outage is over). */
  readonly up: (name: string) => void
  /** Connection attempts per server. */
  readonly attempts: Map<string, number>
}

/**
 * A connector to the in-memory servers `servers`, by name, with their outages
 * under the test's control; a name in `silent` is connected to nobody: what
 * is sent to it is never answered.
 */
export const switchable = (
  servers: { readonly [name: string]: Context.Context<McpServer.McpServer> },
  silent: ReadonlyArray<string> = []
): Switchable => {
  const downs = new Set<string>()
  const current = new Map<string, MemoryTransport.End>()
  const attempts = new Map<string, number>()
  return {
    connector: Connector.layer((name) =>
      Effect.gen(function* () {
        attempts.set(name, (attempts.get(name) ?? 0) + 1)
        if (downs.has(name)) {
          return yield* new Transport.TransportError({ reason: "Io", message: "connection refused" })
        }
        const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: true })
        if (silent.includes(name)) return { transport: clientEnd }
        yield* McpServer.makeSession.pipe(
          Effect.provideService(Transport.Transport, serverEnd),
          Effect.provideContext(servers[name]!)
        )
        current.set(name, serverEnd)
        return { transport: clientEnd }
      })
    ),
    down: (name) =>
      Effect.suspend(() => {
        downs.add(name)
        return current.get(name)?.close ?? Effect.void
      }),
    up: (name) => {
      downs.delete(name)
    },
    attempts
  }
}

/**
 * A connector to the in-memory servers `servers`, by name; a name in `silent`
 * is connected to nobody: what is sent to it is never answered.
 */
export const memory = (
  servers: { readonly [name: string]: Context.Context<McpServer.McpServer> },
  silent: ReadonlyArray<string> = []
) => switchable(servers, silent).connector

/**
 * A gateway in front of one in-memory upstream named `up`, its tools unprefixed and no health check; `options`
 * override the rest (its connection's revisions, say).
 */
export const gatewayOver = (upstream: Layer.Layer<McpServer.McpServer>, options: Partial<Gateway.Options> = {}) =>
  Effect.gen(function* () {
    const up = yield* Layer.build(upstream)
    return yield* Layer.build(
      Gateway.layer({
        server: { name: "gateway", version: "1.0.0" },
        config: { mcpServers: { up: { command: "up" } } },
        unprefixed: "up",
        healthCheck: false,
        ...options
      }).pipe(Layer.provide(memory({ up })))
    )
  })
