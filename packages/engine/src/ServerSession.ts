/**
 * The server role: answers `initialize` (stateful revisions) and
 * `server/discover` plus per-request `_meta` (stateless 2026-07-28), side by
 * side on the same session core.
 */
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Registry from "@effect-mcp/protocol/Registry"
import type * as Revision from "@effect-mcp/protocol/Revision"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import type * as Peer from "./Peer.ts"
import * as Session from "./Session.ts"
import type * as Transport from "./Transport.ts"

/**
 * The capabilities to declare, computed when they are announced: at
 * `initialize` (for the revision just negotiated) and at every
 * `server/discover` or stateless request (for `undefined`: no session).
 */
export type CapabilitiesOf = (revision: Revision.RevisionSpec | undefined) => Session.Capabilities

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
 * A read-only view whose keys are those of `current()` at the time of each
 * read: the gate checks incoming requests against it, so it sees the
 * declaration made at `initialize` (stateful) or the live one (stateless).
 */
const liveView = (current: () => Session.Capabilities): Session.Capabilities =>
  new Proxy(
    {},
    {
      get: (_, key) => (typeof key === "string" ? current()[key] : undefined),
      has: (_, key) => typeof key === "string" && key in current(),
      ownKeys: () => Reflect.ownKeys(current()),
      getOwnPropertyDescriptor: (_, key) => {
        const value = typeof key === "string" ? current()[key] : undefined
        return value === undefined ? undefined : { value, enumerable: true, configurable: true, writable: false }
      }
    }
  )

export const make = Effect.fnUntraced(function* (options: Options) {
  const supportedVersions = options.supportedVersions ?? ProtocolVersion.all
  let state: Session.State | undefined
  const capabilitiesOf = options.capabilities
  // What `initialize` declared; until then (and for stateless requests) the current declaration.
  let declared: Session.Capabilities | undefined
  const capabilitiesNow = (revision: Revision.RevisionSpec | undefined): Session.Capabilities =>
    typeof capabilitiesOf === "function" ? capabilitiesOf(revision) : capabilitiesOf
  const gateCapabilities =
    typeof capabilitiesOf === "function"
      ? liveView(() => (state?.phase === "New" ? undefined : declared) ?? capabilitiesOf(undefined))
      : capabilitiesOf
  const instructions = options.instructions === undefined ? {} : { instructions: options.instructions }

  const lifecycleHandlers: ReadonlyArray<readonly [string, Session.Handler]> = [
    ["ping", () => Effect.succeed({})],
    [
      "initialize",
      (params) =>
        Effect.suspend((): Effect.Effect<object, McpError.McpError> => {
          const s = state!
          if (s.revision !== undefined) {
            return Effect.fail(
              new McpError.InvalidRequest({ message: "initialize: the session is already initialized" })
            )
          }
          const request = initializeParams(params)
          const version = Session.negotiate(request.protocolVersion, supportedVersions)
          if (version === undefined) {
            return Effect.fail(Session.unsupportedVersion(request.protocolVersion, supportedVersions))
          }
          s.revision = Registry.get(version)
          s.peerCapabilities = request.capabilities
          s.peerInfo = request.clientInfo
          s.phase = "Initializing"
          declared = capabilitiesNow(s.revision)
          return Effect.succeed({
            protocolVersion: version,
            capabilities: declared,
            serverInfo: options.serverInfo,
            ...instructions
          })
        })
    ],
    [
      "server/discover",
      () =>
        Effect.succeed({
          supportedVersions: [...supportedVersions],
          capabilities: capabilitiesNow(undefined),
          // 2026-07-28 carries server info in the result's `_meta`, not as a field.
          _meta: { "io.modelcontextprotocol/serverInfo": options.serverInfo },
          ...instructions,
          ...(options.discoverCacheHints ?? { ttlMs: 0, cacheScope: "private" })
        })
    ]
  ]
  const handlers = new Map<string, Session.Handler>(lifecycleHandlers)
  for (const [method, handler] of options.handlers ?? []) handlers.set(method, handler)
  const notificationHandlers = new Map<string, Session.NotificationHandler>(options.notificationHandlers ?? [])
  notificationHandlers.set("notifications/initialized", () =>
    Effect.sync(() => {
      if (state!.phase === "Initializing") state!.phase = "Ready"
    })
  )

  const session = yield* Session.make({
    side: "server",
    info: options.serverInfo,
    capabilities: gateCapabilities,
    supportedVersions,
    handlers,
    notificationHandlers,
    lifecycleMethods: new Set(["initialize", "notifications/initialized", "notifications/message"]),
    acceptsStateless: supportedVersions.some((v) => Registry.get(v).stateless),
    peer: options.peer
  })
  state = session.state
  return session
})

/** A server session over the current transport. */
export const layer = (options: Options): Layer.Layer<Session.Session, never, Transport.Transport> =>
  Layer.effect(Session.Session, make(options))
