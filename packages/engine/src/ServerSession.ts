/**
 * The server role: answers `initialize` (stateful revisions) and
 * `server/discover` plus per-request `_meta` (stateless 2026-07-28), side by
 * side on the same session core.
 */
import * as JsonEquality from "@effect-mcp/protocol/JsonEquality"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Registry from "@effect-mcp/protocol/Registry"
import type * as Revision from "@effect-mcp/protocol/Revision"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import type * as Peer from "./Peer.ts"
import * as Session from "./Session.ts"
import type * as Tracing from "./Tracing.ts"
import type * as Transport from "./Transport.ts"

/**
 * The capabilities to declare, computed when they are announced: at
 * `initialize` (for the revision just negotiated) and at every
 * `server/discover` or stateless request (for `undefined`: no session).
 */
export type CapabilitiesOf = (revision: Revision.RevisionSpec | undefined) => Session.Capabilities

/** The server role's settings: who it is, what it declares, which revisions it serves, and its handlers. */
export interface Options {
  readonly serverInfo: Session.Implementation
  /** Fixed capabilities, or a function for servers whose features change while they run. */
  readonly capabilities: Session.Capabilities | CapabilitiesOf
  readonly instructions?: string | undefined
  /** 2026-07-28 cache hints of the `server/discover` result (required there). Default: `ttlMs: 0`, private. */
  readonly discoverCacheHints?: { readonly ttlMs: number; readonly cacheScope: "public" | "private" } | undefined
  /** Revisions served. Default: all of them. */
  readonly supportedVersions?: ReadonlyArray<ProtocolVersion.ProtocolVersion> | undefined
  readonly handlers?: ReadonlyMap<string, Session.Handler> | undefined
  readonly notificationHandlers?: ReadonlyMap<string, Session.NotificationHandler> | undefined
  readonly peer?: Peer.Options | undefined
  /**
   * The target the SERVER span of a traced request is named after (`{mcp.method.name} {target}`): the tool or
   * prompt asked for when the server has it (McpServer gives one from its registries). Without it, the spans are
   * named by the method alone: a client may ask for any name, and a span name must have few values.
   */
  readonly spanTarget?: Tracing.SpanTarget | undefined
  /**
   * What the announcement waits for: `initialize` and `server/discover` are
   * answered (their capabilities computed) once it is done, so a server whose
   * features arrive at run time (a gateway's upstreams) declares them all.
   * Bound it: the client's handshake deadline runs meanwhile.
   */
  readonly ready?: Effect.Effect<void> | undefined
}

const initializeParams = (params: unknown) => {
  const p = (Predicate.isObject(params) ? params : {}) as {
    readonly protocolVersion?: unknown
    readonly capabilities?: unknown
    readonly clientInfo?: unknown
  }
  return {
    protocolVersion: typeof p.protocolVersion === "string" ? p.protocolVersion : "",
    capabilities: (Predicate.isObject(p.capabilities) ? p.capabilities : {}) as Session.Capabilities,
    clientInfo: Predicate.isObject(p.clientInfo) ? (p.clientInfo as unknown as Session.Implementation) : undefined
  }
}

/**
 * One object for each distinct client declaration (capabilities, clientInfo):
 * the sessions of one kind of client all declare the same, and a server keeps
 * each idle session's for its life. Bounded: past `MAX_INTERNED` distinct
 * ones the table starts over.
 */
const internedValues = new Map<string, object>()
const MAX_INTERNED = 1_024
const interned = <A extends object>(value: A): A => {
  const key = JSON.stringify(value)
  const known = internedValues.get(key)
  if (known !== undefined) return known as A
  if (internedValues.size >= MAX_INTERNED) internedValues.clear()
  internedValues.set(key, Object.freeze(value))
  return value
}

const lifecycleMethods: ReadonlySet<string> = new Set([
  "initialize",
  "notifications/initialized",
  "notifications/message"
])

const ping: Session.Handler = () => Effect.succeed({})

const initialized: Session.NotificationHandler = (_params, _revision, state) =>
  Effect.sync(() => {
    if (state.phase === "Initializing") state.phase = "Ready"
  })

/**
 * The role options of every session made with the same options: built once,
 * so a server's sessions share their tables instead of copying them.
 */
const roles = new WeakMap<Options, Session.RoleOptions>()

const roleOf = (options: Options): Session.RoleOptions => {
  const cached = roles.get(options)
  if (cached !== undefined) return cached
  const supportedVersions = options.supportedVersions ?? ProtocolVersion.all
  const capabilitiesOf = options.capabilities
  const capabilitiesNow = (revision: Revision.RevisionSpec | undefined): Session.Capabilities =>
    typeof capabilitiesOf === "function" ? capabilitiesOf(revision) : capabilitiesOf
  const instructions = options.instructions === undefined ? {} : { instructions: options.instructions }
  const ready = options.ready

  const initializeResult = (version: ProtocolVersion.ProtocolVersion, declared: Session.Capabilities) => ({
    protocolVersion: version,
    capabilities: declared,
    serverInfo: options.serverInfo,
    ...instructions
  })

  const discoverResult = (revision: Revision.RevisionSpec | undefined) => ({
    supportedVersions: [...supportedVersions],
    // Shaped for the revision asking (a stateless one): e.g. no 2025-11-25 `tasks` there.
    capabilities: capabilitiesNow(revision),
    // 2026-07-28 carries server info in the result's `_meta`, not as a field.
    _meta: { "io.modelcontextprotocol/serverInfo": options.serverInfo },
    ...instructions,
    ...(options.discoverCacheHints ?? { ttlMs: 0, cacheScope: "private" })
  })

  const handlers = new Map<string, Session.Handler>([
    ["ping", ping],
    [
      "initialize",
      (params, info) => {
        const answer = Effect.suspend((): Effect.Effect<object, McpError.McpError> => {
          const s = info.state
          const request = initializeParams(params)
          const version = Session.negotiate(request.protocolVersion, supportedVersions)
          // Before `notifications/initialized` the handshake is still open: a repeated initialize
          // (a bridge such as supergateway forwarding its own client's) negotiates again and
          // replaces what the first said, as the reference servers answer it. Once the client said
          // it is initialized, a repeat that changes nothing gets the same answer, a change is refused.
          if (s.revision !== undefined && s.phase !== "Initializing") {
            if (version !== s.revision.version || !JsonEquality.equals(request.capabilities, s.peerCapabilities)) {
              return Effect.fail(
                new McpError.InvalidRequest({ message: "initialize: the session is already initialized" })
              )
            }
            return Effect.succeed(initializeResult(s.revision.version, s.declared ?? capabilitiesNow(s.revision)))
          }
          if (version === undefined) {
            return Effect.fail(Session.unsupportedVersion(request.protocolVersion, supportedVersions))
          }
          s.revision = Registry.get(version)
          s.peerCapabilities = interned(request.capabilities)
          s.peerInfo = request.clientInfo === undefined ? undefined : interned(request.clientInfo)
          s.phase = "Initializing"
          const declared = capabilitiesNow(s.revision)
          s.declared = declared
          // Negotiated: what the session's snapshot holds is now known (or changed, on a repeat).
          s.onChange?.(s)
          return Effect.succeed(initializeResult(version, declared))
        })
        return ready === undefined ? answer : Effect.andThen(ready, answer)
      }
    ],
    [
      "server/discover",
      (_params, info) =>
        ready === undefined
          ? Effect.succeed(discoverResult(info.revision))
          : Effect.andThen(
              ready,
              Effect.sync(() => discoverResult(info.revision))
            )
    ]
  ])
  for (const [method, handler] of options.handlers ?? []) handlers.set(method, handler)
  const notificationHandlers = new Map<string, Session.NotificationHandler>(options.notificationHandlers ?? [])
  notificationHandlers.set("notifications/initialized", initialized)

  const role: Session.RoleOptions = {
    side: "server",
    info: options.serverInfo,
    // Incoming requests are checked against what `initialize` declared; until
    // then (and for stateless requests) against the current declaration, for the
    // revision a session that started without a handshake is in.
    capabilities:
      typeof capabilitiesOf === "function"
        ? (state) =>
            state.phase === "New" ? capabilitiesOf(undefined) : (state.declared ?? capabilitiesOf(state.revision))
        : capabilitiesOf,
    supportedVersions,
    handlers,
    notificationHandlers,
    lifecycleMethods,
    acceptsStateless: supportedVersions.some((v) => Registry.get(v).stateless),
    spanTarget: options.spanTarget,
    peer: options.peer
  }
  roles.set(options, role)
  return role
}

/**
 * A server session over the current transport. Sessions made with the same
 * `options` object share everything derived from it.
 */
export const make = (options: Options) => Session.make(roleOf(options))

/** A server session over the current transport. */
export const layer = (options: Options): Layer.Layer<Session.Session, never, Transport.Transport> =>
  Layer.effect(Session.Session, make(options))
