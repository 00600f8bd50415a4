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

/**
 * A connector to the in-memory servers `servers`, by name; a name in `silent`
 * is connected to nobody: what is sent to it is never answered.
 */
export const memory = (
  servers: { readonly [name: string]: Context.Context<McpServer.McpServer> },
  silent: ReadonlyArray<string> = []
) =>
  Connector.layer((name) =>
    Effect.gen(function* () {
      const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: true })
      if (silent.includes(name)) return { transport: clientEnd }
      yield* McpServer.makeSession.pipe(
        Effect.provideService(Transport.Transport, serverEnd),
        Effect.provideContext(servers[name]!)
      )
      return { transport: clientEnd }
    })
  )
