/**
 * A session: one connection's negotiated revision, capabilities of both
 * sides, lifecycle phase and capability gate, on top of a Peer. The same code
 * serves clients and servers; a role only supplies data (its side, its
 * capabilities, its handlers) and its lifecycle steps (see ServerSession and
 * ClientSession).
 */
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import type * as McpError from "@effect-mcp/protocol/McpError"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Registry from "@effect-mcp/protocol/Registry"
import type * as Revision from "@effect-mcp/protocol/Revision"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as CurrentRequest from "./CurrentRequest.ts"
import * as Gate from "./internal/gate.ts"
import type { PeerImpl } from "./internal/peerImpl.ts"
import * as Peer from "./Peer.ts"
import type * as PeerError from "./PeerError.ts"
import type * as Tracing from "./Tracing.ts"
import * as Transport from "./Transport.ts"

/** Which role a session plays. */
export type Side = "client" | "server"

/** A JSON object of declared capabilities (`ClientCapabilities` or `ServerCapabilities`). */
export type Capabilities = { readonly [key: string]: unknown }

/** The `clientInfo` / `serverInfo` of an implementation. */
export interface Implementation {
  readonly name: string
  readonly version: string
  readonly [key: string]: unknown
}

/** What a handler learns about the request it serves. */
export interface RequestInfo {
  readonly request: JsonRpc.Request
  readonly revision: Revision.RevisionSpec
  /** The other side's capabilities for this request (per request in stateless revisions). */
  readonly peerCapabilities: Capabilities
  readonly peerInfo: Implementation | undefined
  /** The state of the session serving the request (its lifecycle phase, negotiated revision). */
  readonly state: State
}

/** Serves one request; the Peer provides `CurrentRequest` (progress, request-scoped notifications). */
export type Handler = (
  params: unknown,
  info: RequestInfo
) => Effect.Effect<unknown, McpError.McpError, CurrentRequest.CurrentRequest>
/** Handles one incoming notification. */
export type NotificationHandler = (
  params: unknown,
  revision: Revision.RevisionSpec,
  state: State
) => Effect.Effect<void>

/** Where a stateful session is in its lifecycle. */
export type Phase = "New" | "Initializing" | "Ready"

/** The state a role's lifecycle steps read and move forward. */
export interface State {
  phase: Phase
  revision: Revision.RevisionSpec | undefined
  peerCapabilities: Capabilities
  peerInfo: Implementation | undefined
  /** Extra fields the peer sent at initialization (e.g. `instructions`). */
  peerExtras: { readonly [key: string]: unknown }
  /** What this side declared at initialization, when its role computes its capabilities then. */
  declared: Capabilities | undefined
  /**
   * What features keep about the session beyond the handshake (a server's log
   * level, its resource subscriptions), as JSON values by key: part of its
   * snapshot, so a session continued elsewhere has them (see `SessionSnapshot`).
   * Written through `SessionShape.setFeature`.
   */
  features: { readonly [key: string]: unknown }
  /**
   * Every outgoing request id so far is below this: ids are reserved in blocks,
   * and a session continued elsewhere numbers its requests from here, so no
   * id repeats within the session.
   */
  requestIdsBelow: number
  /** The id its keeper knows it by (a Streamable HTTP session's id), once one registered it. */
  id: string | undefined
  /**
   * Called when what a snapshot of the session holds changed; set by whoever
   * keeps its snapshots (one function for all its sessions, told which by the state).
   */
  onChange: ((state: State) => void) | undefined
}

/** What a role (client or server) gives the session core. */
export interface RoleOptions {
  readonly side: Side
  readonly info: Implementation
  /**
   * What this side declares; incoming requests are checked against it. A
   * function is asked at every check (a role whose declaration changes).
   */
  readonly capabilities: Capabilities | ((state: State) => Capabilities)
  /** Revisions this side speaks; the first one is preferred when offering. */
  readonly supportedVersions: ReadonlyArray<ProtocolVersion.ProtocolVersion>
  readonly handlers: ReadonlyMap<string, Handler>
  readonly notificationHandlers?: ReadonlyMap<string, NotificationHandler> | undefined
  /** Methods served before the handshake completes (`ping` always is). */
  readonly lifecycleMethods?: ReadonlySet<string> | undefined
  /** Serves stateless (2026-07-28) requests that carry their revision in `_meta`. */
  readonly acceptsStateless?: boolean | undefined
  /** `_meta` a stateless revision requires on every outgoing request (the client's per-request declarations). */
  readonly statelessMeta?: ((revision: Revision.RevisionSpec) => object) | undefined
  /** The target the span of an incoming request is named after (`Peer.Dispatcher.spanTarget`). */
  readonly spanTarget?: Tracing.SpanTarget | undefined
  readonly peer?: Peer.Options | undefined
}

/** A session: the Peer, the negotiated state, and requests gated by the revision and the other side's capabilities. */
export interface SessionShape {
  readonly side: Side
  readonly state: State
  readonly peer: Peer.Peer
  /**
   * Sends a request in the negotiated revision. Refused locally with
   * `NotSupported` when the revision has no such method or the other side did
   * not declare the capability it needs: nothing is sent then.
   */
  readonly request: (
    method: string,
    params?: object | undefined,
    options?: Peer.CallOptions
  ) => Effect.Effect<unknown, Peer.CallError | PeerError.NotSupported>
  /** A request as a Stream of progress updates ending with its result (gated like `request`). */
  readonly requestWithProgress: (
    method: string,
    params?: object | undefined,
    options?: Omit<Peer.CallOptions, "onProgress">
  ) => Stream.Stream<Peer.ProgressEvent, Peer.CallError | PeerError.NotSupported>
  /** Sends a notification in the negotiated revision (refused with `NotSupported` when the revision has no such method). */
  readonly notify: (
    method: string,
    params?: object | undefined,
    options?: Transport.SendOptions
  ) => Effect.Effect<void, Transport.TransportError | PeerError.NotSupported>
  readonly closed: Effect.Effect<Exit.Exit<void, Transport.TransportError | PeerError.KeepaliveFailed>>
  /** What a feature kept about this session under `key` (see `State.features`); undefined when nothing. */
  readonly feature: (key: string) => unknown
  /** Keeps `value` (a JSON value; undefined removes it) under `key` in the session's snapshot. */
  readonly setFeature: (key: string, value: unknown) => void
}

/** The current session, as a service. */
export class Session extends Context.Service<Session, SessionShape>()("@effect-mcp/engine/Session") {}

/** What a session that starts already initialized takes as negotiated (see `StartInitialized`). */
export interface Initialized {
  /** The revision the session speaks; a stateful one (2026-07-28 needs no handshake anyway). */
  readonly revision: ProtocolVersion.ProtocolVersion
  /** The other side's capabilities. */
  readonly peerCapabilities: Capabilities
  /** The other side's `clientInfo` / `serverInfo`, when known. */
  readonly peerInfo: Implementation | undefined
  /** What features kept about the session where it was before (see `State.features`). */
  readonly features?: { readonly [key: string]: unknown } | undefined
  /** Where its outgoing request ids continue (see `State.requestIdsBelow`). Default 1. */
  readonly nextRequestId?: number | undefined
}

/**
 * A session made while this is set starts `Ready` in the given revision,
 * with the given peer capabilities and info, as if `initialize` had run: no
 * handshake is expected or sent. The Streamable HTTP server sets it for the
 * one-shot session of a stateless request on a stateful revision, so the
 * request is served without a synthetic `initialize`. Default: unset, the
 * session starts `New`.
 */
export const StartInitialized = Context.Reference<Initialized | undefined>(
  "@effect-mcp/engine/Session/StartInitialized",
  {
    defaultValue: () => undefined
  }
)

const noExtras: { readonly [key: string]: unknown } = Object.freeze({})

/**
 * Called with each session made while it is set, and the transport it runs
 * over, once it exists: how the keeper of a transport's sessions (a
 * `SessionRegistry`) reaches the MCP session a factory made over its
 * transport. Default: unset.
 */
export const OnSessionStart = Context.Reference<
  ((session: SessionShape, transport: Transport.TransportShape) => void) | undefined
>("@effect-mcp/engine/Session/OnSessionStart", { defaultValue: () => undefined })

/**
 * The session core: the state, its gate and the Peer. Behaviour lives on the
 * prototype; a server keeps many idle sessions and each costs one object.
 */
class SessionCore implements SessionShape {
  readonly peer: Peer.Peer
  private readonly gate: Gate.Gate

  constructor(gate: Gate.Gate, peer: Peer.Peer) {
    this.gate = gate
    this.peer = peer
  }

  // Read from the gate's shared spec: a field fewer in each of a server's many idle sessions.
  get side(): Side {
    return this.gate.side
  }

  // The gate's: a field fewer in each of a server's many idle sessions.
  get state(): State {
    return this.gate.state
  }

  get closed(): Effect.Effect<Exit.Exit<void, Transport.TransportError | PeerError.KeepaliveFailed>> {
    return this.peer.closed
  }

  request(
    method: string,
    params?: object,
    callOptions?: Peer.CallOptions
  ): Effect.Effect<unknown, Peer.CallError | PeerError.NotSupported> {
    return Effect.suspend((): Effect.Effect<unknown, Peer.CallError | PeerError.NotSupported> => {
      const refusal = this.gate.checkOutgoing(method)
      if (refusal !== undefined) return Effect.fail(refusal)
      // Already inside the caller's suspend: the Peer's own start, one step cheaper than `request`.
      return (this.peer as PeerImpl).requestNow(method, this.gate.encodeOutgoingParams(params), callOptions)
    })
  }

  requestWithProgress(
    method: string,
    params?: object,
    callOptions?: Omit<Peer.CallOptions, "onProgress">
  ): Stream.Stream<Peer.ProgressEvent, Peer.CallError | PeerError.NotSupported> {
    const refusal = this.gate.checkOutgoing(method)
    if (refusal !== undefined) return Gate.failStream(refusal)
    return this.peer.requestWithProgress(method, this.gate.encodeOutgoingParams(params), callOptions)
  }

  notify(
    method: string,
    params?: object,
    sendOptions?: Transport.SendOptions
  ): Effect.Effect<void, Transport.TransportError | PeerError.NotSupported> {
    return Effect.suspend((): Effect.Effect<void, Transport.TransportError | PeerError.NotSupported> => {
      const refusal = this.gate.checkOutgoingNotification(method)
      if (refusal !== undefined) return Effect.fail(refusal)
      return this.peer.notify(method, params, sendOptions)
    })
  }

  feature(key: string): unknown {
    return this.state.features[key]
  }

  setFeature(key: string, value: unknown): void {
    const { [key]: _, ...rest } = this.state.features
    this.state.features = value === undefined ? rest : { ...rest, [key]: value }
    this.state.onChange?.(this.state)
  }
}

/**
 * Builds the session core over the current transport. The role finishes the
 * lifecycle (ServerSession answers `initialize`, ClientSession sends it).
 */
export const make = Effect.fnUntraced(function* (
  options: RoleOptions
): Effect.fn.Return<SessionShape, never, Scope.Scope | Transport.Transport> {
  const transport = yield* Transport.Transport
  const initialized = yield* StartInitialized
  const state: State = {
    phase: initialized === undefined ? "New" : "Ready",
    revision: initialized === undefined ? undefined : Registry.get(initialized.revision),
    peerCapabilities: initialized?.peerCapabilities ?? noExtras,
    peerInfo: initialized?.peerInfo,
    peerExtras: noExtras,
    declared: undefined,
    features: initialized?.features ?? noExtras,
    requestIdsBelow: initialized?.nextRequestId ?? 1,
    id: undefined,
    onChange: undefined
  }
  const gate = new Gate.Gate(options, state)
  const peer = yield* Peer.make(transport, gate, options.peer)
  const session = new SessionCore(gate, peer)
  const onStart = yield* OnSessionStart
  if (onStart !== undefined) onStart(session, transport)
  return session
})

/**
 * Whether `capabilities` declares the capability at `path`, e.g.
 * `["resources", "subscribe"]`: every key present and neither false nor null.
 * The check the session's gate applies before sending a request.
 */
export const hasCapability: (capabilities: Capabilities, path: ReadonlyArray<string>) => boolean = Gate.hasCapability

/** The revision to answer an `initialize` offering `requested` with, or undefined when none is common. */
export const negotiate = (
  requested: string,
  supported: ReadonlyArray<ProtocolVersion.ProtocolVersion>
): ProtocolVersion.ProtocolVersion | undefined => {
  const stateful = supported.filter((v) => !Registry.get(v).stateless)
  if ((stateful as ReadonlyArray<string>).includes(requested)) return requested as ProtocolVersion.ProtocolVersion
  // Not supported: answer our newest stateful revision and let the client decide.
  return ProtocolVersion.newest(stateful)
}

/** The error for a request in a revision this side does not speak, listing the ones it does. */
export const unsupportedVersion: (
  requested: string,
  supported: ReadonlyArray<string>
) => McpError.UnsupportedProtocolVersion = Gate.unsupportedVersion
