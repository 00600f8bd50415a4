/**
 * How the host reaches a server of its configuration: a scoped transport for
 * one entry. Each connection attempt calls `connect` in a scope of its own,
 * closed when the connection is lost or the host closes (which stops a stdio
 * server's process). `NodeConnector.layer` is the Node implementation; tests
 * and in-process hosts provide their own (in-memory servers, say).
 */
import type * as Transport from "@effect-mcp/engine/Transport"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as McpConfig from "./McpConfig.ts"

/** A transport to one server, and what the host reports about it. */
export interface Connected {
  readonly transport: Transport.TransportShape
  /** A stdio server's process id. */
  readonly pid?: number | undefined
}

/** Opens a transport to the server `name` configured as `server`, for as long as the scope lasts. */
export type Connect = (
  name: string,
  server: McpConfig.ServerConfig
) => Effect.Effect<Connected, Transport.TransportError, Scope.Scope>

/** The service the host asks for transports. */
export class Connector extends Context.Service<Connector, { readonly connect: Connect }>()(
  "@effect-mcp/host/Connector"
) {}

/** A connector from a function. */
export const layer = (connect: Connect): Layer.Layer<Connector> => Layer.succeed(Connector, { connect })
