/**
 * A connected client and server session over an in-memory transport, for
 * feature tests: `const { client, server } = yield* SessionPair.make()`.
 * The server session starts first, then the client performs its handshake,
 * so both are ready when `make` returns.
 */
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as FaultTransport from "./FaultTransport.ts"

/** Settings of a session pair. */
export interface Options {
  /** Server options; `serverInfo` and `capabilities` default to a test server declaring nothing. */
  readonly server?: Partial<ServerSession.Options> | undefined
  /** Client options; `clientInfo` and `capabilities` default to a test client declaring nothing. */
  readonly client?: Partial<ClientSession.Options> | undefined
  /** Every frame crosses as JSON text (the full codec path). Default false. */
  readonly codec?: boolean | undefined
  /** Frames buffered per direction. Default 1024. */
  readonly capacity?: number | undefined
  /** Faults injected on the client's end (outgoing = client to server). */
  readonly faults?: FaultTransport.Options | undefined
}

/** A connected client session and server session, and their transports. */
export interface SessionPair {
  readonly client: Session.SessionShape
  readonly server: Session.SessionShape
  /** The client's end of the connection (the fault wrapper when `faults` is set). */
  readonly clientTransport: MemoryTransport.End
  /** The server's end of the connection. */
  readonly serverTransport: MemoryTransport.End
  /** The injected faults so far (empty without `faults`). */
  readonly faultEvents: Effect.Effect<ReadonlyArray<FaultTransport.FaultEvent>>
}

/** The `serverInfo` of a pair's server unless the options say otherwise. */
export const testServerInfo = { name: "effect-mcp-test-server", version: "0.0.0" }
/** The `clientInfo` of a pair's client unless the options say otherwise. */
export const testClientInfo = { name: "effect-mcp-test-client", version: "0.0.0" }

/**
 * Connects a server session and a client session. Closing the scope closes
 * both sessions and the transport.
 */
export const make = Effect.fnUntraced(function* (
  options?: Options
): Effect.fn.Return<SessionPair, ClientSession.InitializeError, Scope.Scope> {
  const [clientEnd, serverEnd] = yield* MemoryTransport.makePair({
    capacity: options?.capacity,
    codec: options?.codec
  })
  const faulty = options?.faults === undefined ? undefined : yield* FaultTransport.make(clientEnd, options.faults)
  const clientTransport: MemoryTransport.End = faulty ?? clientEnd

  const server = yield* ServerSession.make({
    ...options?.server,
    serverInfo: options?.server?.serverInfo ?? testServerInfo,
    capabilities: options?.server?.capabilities ?? {}
  }).pipe(Effect.provideService(Transport.Transport, serverEnd))

  const client = yield* ClientSession.make({
    ...options?.client,
    clientInfo: options?.client?.clientInfo ?? testClientInfo,
    capabilities: options?.client?.capabilities ?? {}
  }).pipe(Effect.provideService(Transport.Transport, clientTransport))

  return {
    client,
    server,
    clientTransport,
    serverTransport: serverEnd,
    faultEvents: faulty === undefined ? Effect.succeed([]) : faulty.events
  }
})

/** The pair as a service, for sharing one pair across tests with `it.layer`. */
export class CurrentSessionPair extends Context.Service<CurrentSessionPair, SessionPair>()(
  "@effect-mcp/testing/SessionPair/CurrentSessionPair"
) {}

/** A session pair as a service, for sharing one pair across tests with `it.layer`. */
export const layer = (options?: Options): Layer.Layer<CurrentSessionPair, ClientSession.InitializeError> =>
  Layer.effect(CurrentSessionPair, make(options))
