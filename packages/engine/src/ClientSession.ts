/**
 * The client role: negotiates with the server (probing `server/discover` for
 * stateless revisions, falling back to the `initialize` handshake) and then
 * exposes the same session core as the server role.
 */
import * as Features from "@effect-mcp/protocol/Features"
import * as FrozenJson from "@effect-mcp/protocol/FrozenJson"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Registry from "@effect-mcp/protocol/Registry"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Gate from "./internal/gate.ts"
import type * as Peer from "./Peer.ts"
import type * as PeerError from "./PeerError.ts"
import * as Session from "./Session.ts"
import * as Transport from "./Transport.ts"

/** The client role's settings: who it is, what it declares, which revisions it speaks, and its handlers. */
export interface Options {
  readonly clientInfo: Session.Implementation
  readonly capabilities: Session.Capabilities
  /** Revisions this client speaks. Default: all of them. */
  readonly supportedVersions?: ReadonlyArray<ProtocolVersion.ProtocolVersion> | undefined
  readonly handlers?: ReadonlyMap<string, Session.Handler> | undefined
  readonly notificationHandlers?: ReadonlyMap<string, Session.NotificationHandler> | undefined
  readonly peer?: Peer.Options | undefined
  /**
   * The handshake's one deadline: `server/discover`, the fallback `initialize` and any retry share it (a
   * probe that gets no answer may use half of it). Default: the Peer's request timeout.
   */
  readonly handshakeTimeout?: Duration.Input | undefined
}

/**
 * The handshake failed: no revision in common (`UnsupportedVersion`), the server refused (`Rejected`), the
 * connection failed (`Transport`), or the server did not answer within the handshake's deadline (`Timeout`;
 * the message names the step and how long it waited).
 */
export class InitializeError extends Schema.TaggedError<InitializeError>()("InitializeError", {
  reason: Schema.Literals(["UnsupportedVersion", "Rejected", "Transport", "Timeout"]),
  message: Schema.String,
  /** The revision the server answered with, when it answered one we do not speak, or the newest it listed. */
  serverVersion: Schema.optional(Schema.String),
  cause: Schema.optional(Schema.Defect())
}) {}

const SERVER_INFO = "io.modelcontextprotocol/serverInfo"

/** The handshake's deadline when neither `handshakeTimeout` nor the Peer's request timeout is set. */
const defaultHandshakeTimeout = Duration.seconds(60)

const asObject = (u: unknown): { readonly [key: string]: unknown } =>
  (Predicate.isObject(u) ? u : {}) as { readonly [key: string]: unknown }

/** The newest of the revisions a server listed (dates sort as text), unknown ones included. */
const newestListed = (versions: ReadonlyArray<string>): string | undefined =>
  versions.length === 0 ? undefined : versions.reduce((a, b) => (b > a ? b : a))

/**
 * The capabilities that let a server send requests a revision may not have,
 * each with the feature that brings them.
 */
const askingCapabilities: ReadonlyArray<readonly [string, Features.FeatureName]> = [
  ["elicitation", "elicitation"],
  ["tasks", "tasks"]
]

/**
 * What the client declares in an `initialize` of `version`: without the
 * capabilities of requests the revision does not have. A server takes a
 * declaration at its word: `elicitation` declared in 2024-11-05 would bring
 * an `elicitation/create` the session must refuse.
 */
const declaredIn = (version: ProtocolVersion.ProtocolVersion, capabilities: Session.Capabilities) => {
  let out: { [key: string]: unknown } | undefined
  for (const [key, feature] of askingCapabilities) {
    if (capabilities[key] === undefined || Features.has(version, feature)) continue
    out ??= { ...capabilities }
    delete out[key]
  }
  return out ?? capabilities
}

/** Negotiates with the server over the current transport and returns the ready session. */
export const make = Effect.fnUntraced(function* (options: Options) {
  const supportedVersions = options.supportedVersions ?? ProtocolVersion.all
  const transport = yield* Transport.Transport
  /** False when the transport cannot carry a stateless revision: then `initialize` is the first message. */
  const carriesStateless = () => transport.carriesStateless?.() !== false
  const statelessVersion = carriesStateless()
    ? ProtocolVersion.newest(supportedVersions.filter((v) => Registry.get(v).stateless))
    : undefined
  // Sent in every stateless request's `_meta`: copies that can never change (the gate freezes the `_meta`
  // around them), so a server in this process knows the same `_meta` again without comparing it
  // (FrozenJson). What is not plain JSON (or is too large to copy) goes as given.
  const unchanging = (value: unknown) => FrozenJson.copy(value, 100_000)?.value ?? value
  const capabilities = unchanging(options.capabilities)
  const clientInfo = unchanging(options.clientInfo)
  const statelessMeta = (revision: { readonly version: string }) => ({
    [Gate.META_PROTOCOL_VERSION]: revision.version,
    [Gate.META_CLIENT_CAPABILITIES]: capabilities,
    [Gate.META_CLIENT_INFO]: clientInfo
  })
  const handlers = new Map<string, Session.Handler>([["ping", () => Effect.succeed({})]])
  for (const [method, handler] of options.handlers ?? []) handlers.set(method, handler)

  const session = yield* Session.make({
    side: "client",
    info: options.clientInfo,
    capabilities: options.capabilities,
    supportedVersions,
    handlers,
    notificationHandlers: options.notificationHandlers,
    lifecycleMethods: new Set(["initialize", "notifications/initialized", "server/discover", "notifications/message"]),
    statelessMeta,
    peer: options.peer
  })
  const state = session.state
  // What this client declares, for those who report it (a host's connection status).
  state.declared = options.capabilities
  // One budget for the whole handshake, on the Clock: each request gets what is left of it.
  const budgetMs = Duration.toMillis(
    Duration.fromInputUnsafe(options.handshakeTimeout ?? options.peer?.requestTimeout ?? defaultHandshakeTimeout)
  )
  const startedAt = yield* Clock.currentTimeMillis
  /** The options of the next handshake request: what is left of the budget, at most `shareMs`. */
  const callOptions = (method: string, shareMs = Number.POSITIVE_INFINITY) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const left = budgetMs - (now - startedAt)
      return left <= 0 ? Effect.fail(outOfTime(method, now)) : Effect.succeed({ timeout: Math.min(left, shareMs) })
    })
  const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`
  const outOfTime = (method: string, now: number) =>
    new InitializeError({
      reason: "Timeout",
      message: `no time left for ${method}: the handshake's ${seconds(budgetMs)} ran out after ${seconds(now - startedAt)}`
    })
  const timedOut = (error: PeerError.RequestTimeout) =>
    new InitializeError({
      reason: "Timeout",
      message: `${error.method} got no answer within ${seconds(error.elapsedMs)} (the handshake's deadline is ${seconds(budgetMs)})`,
      cause: error
    })

  /** What the `server/discover` probe decided: the session is ready, or which revisions to try next. */
  type Probe =
    | { readonly _tag: "Ready" }
    | {
        readonly _tag: "Retry"
        readonly versions: ReadonlyArray<ProtocolVersion.ProtocolVersion>
        /** The server named these revisions itself (a -32022 or discover list), so a stateless one may be retried. */
        readonly listed: boolean
        /** What the server listed, when it did: named in the error when nothing is in common. */
        readonly serverVersions?: ReadonlyArray<string> | undefined
      }

  const ready: Probe = { _tag: "Ready" }
  const retry = (
    versions: ReadonlyArray<ProtocolVersion.ProtocolVersion>,
    listed: boolean,
    serverVersions?: ReadonlyArray<unknown>
  ): Probe => ({
    _tag: "Retry",
    versions,
    listed,
    serverVersions: serverVersions?.filter((v): v is string => typeof v === "string")
  })
  /** Nothing in common: the error names both sides' revisions, and the server's newest. */
  const noCommonRevision = (serverVersions: ReadonlyArray<string> | undefined) =>
    new InitializeError({
      reason: "UnsupportedVersion",
      message:
        serverVersions === undefined || serverVersions.length === 0
          ? "the server speaks no revision this client speaks"
          : `the server speaks ${serverVersions.join(", ")}; this client speaks ${supportedVersions.join(", ")}`,
      serverVersion: serverVersions === undefined ? undefined : newestListed(serverVersions)
    })

  // A server that does not answer the probe at all may still answer `initialize`: the probe takes at most
  // half of the budget, so the fallback has the rest.
  const discover = (version: ProtocolVersion.ProtocolVersion) =>
    callOptions("server/discover", budgetMs / 2).pipe(
      Effect.flatMap((call) => session.peer.request("server/discover", { _meta: statelessMeta({ version }) }, call)),
      Effect.map((result): Probe => {
        const r = asObject(result)
        const versions = Array.isArray(r.supportedVersions) ? (r.supportedVersions as ReadonlyArray<unknown>) : []
        // A result that lists no revisions (a server that answers any method) says nothing: try everything.
        if (versions.length === 0) return retry(supportedVersions, false)
        if (!versions.includes(version))
          return retry(
            supportedVersions.filter((v) => versions.includes(v)),
            true,
            versions
          )
        state.revision = Registry.get(version)
        state.peerCapabilities = asObject(r.capabilities)
        // 2026-07-28 carries server info in the result's `_meta`; a top-level `serverInfo` is read too.
        const info = asObject(r._meta)[SERVER_INFO] ?? r.serverInfo
        state.peerInfo = Predicate.isObject(info) ? (info as unknown as Session.Implementation) : undefined
        state.peerExtras = r
        state.phase = "Ready"
        return ready
      }),
      // -32022 lists what the server speaks: the next attempt uses a revision both sides speak.
      Effect.catchTag("UnsupportedProtocolVersion", (error) =>
        Effect.succeed(
          retry(
            supportedVersions.filter((v) => error.data.supported.includes(v)),
            true,
            error.data.supported
          )
        )
      ),
      // Servers of earlier revisions answer the probe with some other error: fall back to the handshake.
      Effect.catchTag(["MethodNotFound", "InvalidRequest", "InvalidParams", "JsonRpcError", "RequestTimeout"], () =>
        Effect.succeed(retry(supportedVersions, false))
      ),
      // The server refused the probe without a JSON-RPC answer (a Streamable HTTP server of an earlier revision
      // refusing a method it does not know before any session exists; a 2024-11-05 server refusing a POST to
      // its event stream's URL, which the `initialize` that follows falls back from), or the transport cannot
      // carry it (one that fell back to legacy HTTP+SSE): `initialize` goes next. A server that cannot be
      // reached at all fails the handshake here.
      Effect.catchTag("TransportError", (error) =>
        error.reason === "Protocol" || !carriesStateless()
          ? Effect.succeed(retry(supportedVersions, false))
          : Effect.fail(error)
      )
    )

  const initialize = (version: ProtocolVersion.ProtocolVersion) =>
    Effect.gen(function* () {
      const result = asObject(
        yield* session.peer.request(
          "initialize",
          {
            protocolVersion: version,
            capabilities: declaredIn(version, options.capabilities),
            clientInfo: options.clientInfo
          },
          yield* callOptions("initialize")
        )
      )
      const answered = result.protocolVersion
      if (typeof answered !== "string" || !(supportedVersions as ReadonlyArray<string>).includes(answered)) {
        return yield* new InitializeError({
          reason: "UnsupportedVersion",
          message: `the server answered protocol version ${String(answered)}; this client speaks ${supportedVersions.join(", ")}`,
          serverVersion: String(answered)
        })
      }
      state.revision = Registry.get(answered as ProtocolVersion.ProtocolVersion)
      state.peerCapabilities = asObject(result.capabilities)
      state.peerInfo = Predicate.isObject(result.serverInfo)
        ? (result.serverInfo as unknown as Session.Implementation)
        : undefined
      state.peerExtras = result
      // Within what is left of the budget too: a server that never takes it (an HTTP server that never answers
      // the notification's POST) would hold the handshake until the Peer's own bound on a notification, the
      // request timeout; whichever of the two ends first, it is the handshake's timeout.
      const left = yield* callOptions("notifications/initialized")
      const sentAt = yield* Clock.currentTimeMillis
      const notTaken = Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.fail(
          new InitializeError({
            reason: "Timeout",
            message: `notifications/initialized was not taken within ${seconds(now - sentAt)} (the handshake's deadline is ${seconds(budgetMs)})`
          })
        )
      )
      yield* session.peer.notify("notifications/initialized").pipe(
        Effect.timeoutOrElse({ duration: left.timeout, orElse: () => notTaken }),
        Effect.catchIf(
          (error) => error instanceof Transport.TransportError && Cause.isTimeoutError(error.cause),
          () => notTaken
        )
      )
      state.phase = "Ready"
    })

  const handshake = Effect.gen(function* () {
    let probe = statelessVersion === undefined ? retry(supportedVersions, false) : yield* discover(statelessVersion)
    // One more probe when the server named a stateless revision we speak (a refused first choice).
    const statelessRetry =
      probe._tag === "Retry" && probe.listed
        ? ProtocolVersion.newest(probe.versions.filter((v) => Registry.get(v).stateless))
        : undefined
    if (statelessRetry !== undefined) probe = yield* discover(statelessRetry)
    if (probe._tag === "Ready") return
    const version = ProtocolVersion.newest(probe.versions.filter((v) => !Registry.get(v).stateless))
    if (version === undefined) return yield* noCommonRevision(probe.serverVersions)
    // A server of the stateless revision only refuses `initialize` with what it speaks.
    yield* Effect.catchTag(initialize(version), "UnsupportedProtocolVersion", (error) =>
      Effect.fail(noCommonRevision(error.data.supported))
    )
  })

  yield* handshake.pipe(
    Effect.catchIf(
      (e): e is Exclude<typeof e, InitializeError> => !(e instanceof InitializeError),
      (cause) =>
        Effect.fail(
          cause._tag === "RequestTimeout"
            ? timedOut(cause)
            : new InitializeError({
                reason: cause._tag === "TransportError" || cause._tag === "SessionClosed" ? "Transport" : "Rejected",
                message: `initialization failed: ${cause.message}`,
                cause
              })
        )
    )
  )
  return session
})

/** A client session over the current transport; building it performs the handshake. */
export const layer = (options: Options): Layer.Layer<Session.Session, InitializeError, Transport.Transport> =>
  Layer.effect(Session.Session, make(options))
