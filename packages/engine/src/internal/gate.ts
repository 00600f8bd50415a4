/**
 * The session's gate: which revision an incoming message is read in, whether
 * the lifecycle allows it, whether the receiving side declared the capability
 * it needs, and the same checks for outgoing requests (refused locally).
 * Everything it decides comes from the RevisionSpec data and the role's
 * options; it never asks which role it serves.
 */
import * as Features from "@effect-mcp/protocol/Features"
import * as IncomingValidator from "@effect-mcp/protocol/IncomingValidator"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Registry from "@effect-mcp/protocol/Registry"
import type * as Revision from "@effect-mcp/protocol/Revision"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Predicate from "effect/Predicate"
import * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"
import * as CurrentRequest from "../CurrentRequest.ts"
import type * as Peer from "../Peer.ts"
import * as PeerError from "../PeerError.ts"
import type * as Session from "../Session.ts"
import * as Tracing from "../Tracing.ts"

const otherSide = { client: "server", server: "client" } as const

export const META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
export const META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
export const META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"

/** Whether `capabilities` declares the capability at `path` (every key present). */
export const hasCapability = (capabilities: Session.Capabilities, path: ReadonlyArray<string>): boolean => {
  let node: unknown = capabilities
  for (const key of path) {
    if (!Predicate.isObject(node)) return false
    const next = (node as { readonly [k: string]: unknown })[key]
    if (next === undefined || next === null || next === false) return false
    node = next
  }
  return true
}

const metaOf = (params: unknown): { readonly [key: string]: unknown } | undefined => {
  if (!Predicate.isObject(params)) return undefined
  const meta = (params as { readonly _meta?: unknown })._meta
  return Predicate.isObject(meta) ? (meta as { readonly [key: string]: unknown }) : undefined
}

export const failStream = (error: PeerError.NotSupported): Stream.Stream<never, PeerError.NotSupported> =>
  Stream.fail(error)

const notInitialized = (method: string) =>
  new McpError.InvalidRequest({ message: `${method}: the session is not initialized` })

const batchesNotSupported = new McpError.InvalidRequest({ message: "batches are not supported by this revision" })
const initializeInBatch = new McpError.InvalidRequest({ message: "initialize must not be part of a batch" })

const methodNotFound = (method: string, why: string) => new McpError.MethodNotFound({ message: `${method}: ${why}` })

/**
 * The request as a handler sees it in a revision whose progress
 * notifications have no `message` (2024-11-05): the same request, its
 * updates sent without one.
 */
const withoutProgressMessages = (current: CurrentRequest.CurrentRequestShape): CurrentRequest.CurrentRequestShape => {
  const shaped: { -readonly [K in keyof CurrentRequest.CurrentRequestShape]: CurrentRequest.CurrentRequestShape[K] } =
    Object.create(current)
  shaped.progress = (update) =>
    current.progress(update.message === undefined ? update : { progress: update.progress, total: update.total })
  return shaped
}

interface RequestScope {
  readonly revision: Revision.RevisionSpec
  readonly peerCapabilities: Session.Capabilities
  readonly peerInfo: Session.Implementation | undefined
}

// Validators hold no state: every session of a side shares one per revision.
const validators = {
  client: new WeakMap<Revision.RevisionSpec, IncomingValidator.IncomingValidator>(),
  server: new WeakMap<Revision.RevisionSpec, IncomingValidator.IncomingValidator>()
}
const sharedValidator = (revision: Revision.RevisionSpec, receiver: Session.Side) => {
  let validator = validators[receiver].get(revision)
  if (validator === undefined) {
    validator = IncomingValidator.make(revision, { receiver })
    validators[receiver].set(revision, validator)
  }
  return validator
}

/** The error for a request in a revision this side does not speak, listing the ones it does (`Session`'s). */
export const unsupportedVersion = (requested: string, supported: ReadonlyArray<string>) =>
  new McpError.UnsupportedProtocolVersion({
    message: `unsupported protocol version ${requested}`,
    data: { requested, supported: [...supported] }
  })
const unsupported = (requested: unknown, options: Session.RoleOptions) =>
  unsupportedVersion(String(requested), options.supportedVersions)

// What a session derives from its options is the same for every session made
// with the same options; a server keeps many sessions, so it is made once.
interface Versions {
  readonly stateless: ReadonlyArray<ProtocolVersion.ProtocolVersion>
  /** Before negotiation, lifecycle messages are read in our newest stateful revision. */
  readonly handshake: Revision.RevisionSpec
}
const versionsOf = new WeakMap<ReadonlyArray<ProtocolVersion.ProtocolVersion>, Versions>()
const versions = (supported: ReadonlyArray<ProtocolVersion.ProtocolVersion>): Versions => {
  let derived = versionsOf.get(supported)
  if (derived === undefined) {
    const stateful = supported.filter((v) => !Registry.get(v).stateless)
    derived = {
      stateless: supported.filter((v) => Registry.get(v).stateless),
      handshake: Registry.get(ProtocolVersion.newest(stateful) ?? ProtocolVersion.latest)
    }
    versionsOf.set(supported, derived)
  }
  return derived
}
const lifecycles = new Map<string, ReadonlySet<string>>()
const lifecycleOf = (methods: ReadonlySet<string> | undefined): ReadonlySet<string> => {
  const key = methods === undefined ? "" : [...methods].join(" ")
  let set = lifecycles.get(key)
  if (set === undefined) {
    set = new Set<string>(["ping", ...(methods ?? [])])
    lifecycles.set(key, set)
  }
  return set
}

/** What every session made with the same role options shares. */
interface Spec {
  readonly options: Session.RoleOptions
  readonly mySide: Session.Side
  readonly peerSide: Session.Side
  readonly lifecycle: ReadonlySet<string>
  readonly statelessVersions: ReadonlyArray<ProtocolVersion.ProtocolVersion>
  readonly handshakeRevision: Revision.RevisionSpec
  // The last revision's validator and stateless declarations, kept here rather than in each gate: the
  // sessions of a spec read nearly every message in one revision, and a server keeps many idle ones.
  validatorRevision: Revision.RevisionSpec | undefined
  validator: IncomingValidator.IncomingValidator | undefined
  metaRevision: Revision.RevisionSpec | undefined
  meta: object | undefined
}
const specs = new WeakMap<Session.RoleOptions, Spec>()
const specOf = (options: Session.RoleOptions): Spec => {
  let spec = specs.get(options)
  if (spec === undefined) {
    const derived = versions(options.supportedVersions)
    spec = {
      options,
      mySide: options.side,
      peerSide: otherSide[options.side],
      lifecycle: lifecycleOf(options.lifecycleMethods),
      statelessVersions: derived.stateless,
      handshakeRevision: derived.handshake,
      validatorRevision: undefined,
      validator: undefined,
      metaRevision: undefined,
      meta: undefined
    }
    specs.set(options, spec)
  }
  return spec
}

const completeResult = (result: unknown): unknown => {
  // Stateless revisions require `resultType` on every result; handlers need not know.
  if (!Predicate.isObject(result) || "resultType" in result) return result
  return { ...result, resultType: "complete" }
}

/**
 * How many request ids a session reserves at a time: its snapshot changes
 * once per block, not once per request.
 */
const REQUEST_ID_BLOCK = 1_000

/** Reserves the block of request ids from `id` on: the session's snapshot changed. */
const reserveRequestIds = (state: Session.State, id: number): void => {
  state.requestIdsBelow = id + REQUEST_ID_BLOCK
  state.onChange?.(state)
}

/** An outgoing request the gate allowed, and what it was allowed under. */
interface Allowed {
  readonly method: string
  readonly revision: Revision.RevisionSpec | undefined
  readonly capabilities: Session.Capabilities
}

/**
 * One session's gate: the shared spec of its role plus the session's state.
 * Its behaviour is on the prototype, so an idle session costs one small object.
 */
export class Gate implements Peer.Dispatcher {
  private readonly spec: Spec
  /** The state of the session it gates (the session reads it here). */
  readonly state: Session.State
  private allowed: Allowed | undefined = undefined

  constructor(options: Session.RoleOptions, state: Session.State) {
    this.spec = specOf(options)
    this.state = state
  }

  /** The side the session speaks for. */
  get side(): Session.Side {
    return this.spec.mySide
  }

  private validatorOf(revision: Revision.RevisionSpec): IncomingValidator.IncomingValidator {
    const spec = this.spec
    if (revision !== spec.validatorRevision || spec.validator === undefined) {
      spec.validator = sharedValidator(revision, spec.mySide)
      spec.validatorRevision = revision
    }
    return spec.validator
  }

  /** Decides the revision (and, for stateless requests, the peer's declarations) of one incoming request. */
  private scopeOf(request: JsonRpc.Request): RequestScope | McpError.McpError {
    const { options, lifecycle } = this.spec
    const state = this.state
    // A server (the only side told whether it accepts stateless requests), before any handshake.
    if (options.acceptsStateless !== undefined && state.phase === "New") {
      const meta = metaOf(request.params)
      const requested = meta?.[META_PROTOCOL_VERSION]
      if (requested === undefined) {
        // A server of the stateless revision only has no handshake to offer: it says what it speaks.
        if (request.method === "initialize" && options.acceptsStateless && this.spec.handshakeRevision.stateless) {
          return unsupported((request.params as { readonly protocolVersion?: unknown })?.protocolVersion, options)
        }
      } else if ((this.spec.statelessVersions as ReadonlyArray<unknown>).includes(requested)) {
        const capabilities = meta?.[META_CLIENT_CAPABILITIES]
        const info = meta?.[META_CLIENT_INFO]
        return {
          revision: Registry.get(requested as ProtocolVersion.ProtocolVersion),
          peerCapabilities: Predicate.isObject(capabilities) ? (capabilities as Session.Capabilities) : {},
          peerInfo: Predicate.isObject(info) ? (info as unknown as Session.Implementation) : undefined
        }
      } else if (!(options.supportedVersions as ReadonlyArray<unknown>).includes(requested)) {
        // Asked for a revision this server does not speak at all (-32022 lists those it does). One it speaks
        // statefully is served after the handshake, as a request naming no revision is.
        return unsupported(requested, options)
      }
    }
    if (state.revision === undefined) {
      if (!lifecycle.has(request.method)) return notInitialized(request.method)
      return {
        revision: this.spec.handshakeRevision,
        peerCapabilities: state.peerCapabilities,
        peerInfo: state.peerInfo
      }
    }
    if (state.phase === "New" && !lifecycle.has(request.method)) return notInitialized(request.method)
    return { revision: state.revision, peerCapabilities: state.peerCapabilities, peerInfo: state.peerInfo }
  }

  private checkIncoming(spec: Revision.MethodSpec): McpError.McpError | undefined {
    const { mySide, peerSide } = this.spec
    if (spec.sender !== peerSide && spec.sender !== "both") {
      return methodNotFound(spec.method, `not a method the ${peerSide} sends`)
    }
    const capability = spec.capability
    if (
      capability !== undefined &&
      (capability.side === mySide || capability.side === "receiver") &&
      !hasCapability(this.ownCapabilities(), capability.path)
    ) {
      return methodNotFound(spec.method, `capability ${capability.path.join(".")} was not declared`)
    }
    return undefined
  }

  request(request: JsonRpc.Request): Effect.Effect<unknown, McpError.McpError, CurrentRequest.CurrentRequest> {
    return Effect.suspend(() => this.requestNow(request))
  }

  // A method, not a bound field: a server keeps a Gate per idle session.
  requestNow(request: JsonRpc.Request): Effect.Effect<unknown, McpError.McpError, CurrentRequest.CurrentRequest> {
    const scope = this.scopeOf(request)
    if (scope instanceof Error) return Effect.fail(scope)
    const validated = this.validatorOf(scope.revision).validate(request)
    if (validated._tag === "Failure") {
      // A method this side did not declare is refused as such whatever its params say: a client without
      // elicitation is told it has none, not that the form it would not show was malformed.
      const spec = validated.failure._tag === "InvalidParams" ? scope.revision.methods.get(request.method) : undefined
      return Effect.fail((spec === undefined ? undefined : this.checkIncoming(spec)) ?? validated.failure)
    }
    const refusal = this.checkIncoming(validated.success.spec)
    if (refusal !== undefined) return Effect.fail(refusal)
    const handler = this.spec.options.handlers.get(request.method)
    if (handler === undefined) return Effect.fail(methodNotFound(request.method, "not implemented"))
    const info: Session.RequestInfo = {
      request,
      revision: scope.revision,
      peerCapabilities: scope.peerCapabilities,
      peerInfo: scope.peerInfo,
      state: this.state
    }
    const handled = handler(validated.success.params, info)
    // An outcome sends no progress; a revision without progress messages gets none from a handler.
    const result =
      Exit.isExit(handled) || Features.has(scope.revision.version, "progressMessage")
        ? handled
        : Effect.updateService(handled, CurrentRequest.CurrentRequest, withoutProgressMessages)
    if (!scope.revision.stateless) return result
    return Exit.isExit(result) && Exit.isSuccess(result)
      ? Exit.succeed(completeResult(result.value))
      : Effect.map(result, completeResult)
  }

  notification(notification: JsonRpc.Notification): Effect.Effect<void> {
    return Effect.suspend(() => {
      const handler = this.spec.options.notificationHandlers?.get(notification.method)
      if (handler === undefined) return Effect.void
      const revision = this.state.revision ?? this.spec.handshakeRevision
      const validated = this.validatorOf(revision).validate(notification)
      // An invalid notification cannot be answered; it is logged and dropped.
      if (validated._tag === "Failure") {
        return Effect.logDebug(`dropped invalid notification ${notification.method}: ${validated.failure.message}`)
      }
      return handler(validated.success.params, revision, this.state)
    })
  }

  /**
   * A failed request's error carries the code of the revision it was served
   * in (decided again here, from the request and the session's state: only
   * failures pay for it).
   */
  errorObject(request: JsonRpc.Request, error: McpError.McpError): JsonRpc.ErrorObject {
    const scope = this.scopeOf(request)
    return McpError.toErrorObject(error, scope instanceof Error ? undefined : scope.revision.version)
  }

  refuseBatch(): McpError.McpError | undefined {
    return this.state.revision?.batches === true ? undefined : batchesNotSupported
  }

  refuseInBatch(request: JsonRpc.Request): McpError.McpError | undefined {
    return request.method === "initialize" ? initializeInBatch : undefined
  }

  firstRequestId(): number {
    return this.state.requestIdsBelow
  }

  requestIdTaken(id: number): void {
    // Below the reserved bound: the common case, one comparison.
    if (id >= this.state.requestIdsBelow) reserveRequestIds(this.state, id)
  }

  cancellable(method: string): boolean {
    return method !== "initialize"
  }

  // A getter, not a field: the role's, shared by its sessions (a server keeps a Gate per idle session).
  get spanTarget(): Tracing.SpanTarget | undefined {
    return this.spec.options.spanTarget
  }

  annotateSpan(span: Tracer.Span, params: unknown): void {
    // A session knows its revision once negotiated; a stateless request carries its own.
    const version = this.state.revision?.version ?? metaOf(params)?.[META_PROTOCOL_VERSION]
    if (typeof version === "string") span.attribute(Tracing.Attributes.protocolVersion, version)
  }

  checkOutgoing(method: string): PeerError.NotSupported | undefined {
    // A client sends the same method over and over: the last allowed one is remembered
    // for as long as the revision and the peer's capabilities stay the same.
    const state = this.state
    const allowed = this.allowed
    if (
      allowed !== undefined &&
      allowed.method === method &&
      allowed.revision === state.revision &&
      allowed.capabilities === state.peerCapabilities &&
      state.phase === "Ready"
    ) {
      return undefined
    }
    const refusal = this.checkOutgoingSpec(method, "Request")
    if (refusal === undefined && state.phase === "Ready") {
      this.allowed = { method, revision: state.revision, capabilities: state.peerCapabilities }
    }
    return refusal
  }

  checkOutgoingNotification(method: string): PeerError.NotSupported | undefined {
    return this.checkOutgoingSpec(method, "Notification")
  }

  private checkOutgoingSpec(method: string, kind: "Request" | "Notification"): PeerError.NotSupported | undefined {
    const { mySide, peerSide, lifecycle } = this.spec
    const state = this.state
    const revision = state.revision ?? (lifecycle.has(method) ? this.spec.handshakeRevision : undefined)
    if (revision === undefined || (state.phase !== "Ready" && !lifecycle.has(method))) {
      return new PeerError.NotSupported({ method, reason: "NotInitialized", detail: "the session is not initialized" })
    }
    const spec = revision.methods.get(method)
    if (spec === undefined || spec._tag !== kind || (spec.sender !== mySide && spec.sender !== "both")) {
      return new PeerError.NotSupported({
        method,
        reason: "MethodNotInRevision",
        detail: `revision ${revision.version} has no ${kind.toLowerCase()} ${method} sent by the ${mySide}`
      })
    }
    const capability = spec.capability
    if (capability === undefined) return undefined
    if (
      (capability.side === peerSide || capability.side === "receiver") &&
      !hasCapability(state.peerCapabilities, capability.path)
    ) {
      return new PeerError.NotSupported({
        method,
        reason: "CapabilityNotDeclared",
        detail: `the ${peerSide} did not declare capability ${capability.path.join(".")}`
      })
    }
    // A notification gated by the sender's own declaration (`tools/list_changed` needs
    // `tools.listChanged`): what this session declared when it was initialized, which a
    // server that grew a tool since does not change for a session made before.
    if (
      kind === "Notification" &&
      capability.side === mySide &&
      !hasCapability(this.ownCapabilities(), capability.path)
    ) {
      return new PeerError.NotSupported({
        method,
        reason: "CapabilityNotDeclared",
        detail: `this ${mySide} did not declare capability ${capability.path.join(".")} to the session`
      })
    }
    return undefined
  }

  private ownCapabilities(): Session.Capabilities {
    const declared = this.spec.options.capabilities
    return typeof declared === "function" ? declared(this.state) : declared
  }

  /** The keepalive's request: `ping` where the revision has it, else `server/discover` (2026-07-28). */
  keepalive(): { readonly method: string; readonly params: object | undefined } {
    const revision = this.state.revision
    return revision === undefined || revision.methods.has("ping")
      ? { method: "ping", params: undefined }
      : { method: "server/discover", params: this.encodeOutgoingParams({}) }
  }

  encodeOutgoingParams(params: object | undefined): object | undefined {
    const revision = this.state.revision
    const statelessMeta = this.spec.options.statelessMeta
    if (revision === undefined || !revision.stateless || statelessMeta === undefined) return params
    // The declarations are the same on every request of a revision: made once, shared (frozen).
    const spec = this.spec
    if (spec.metaRevision !== revision || spec.meta === undefined) {
      spec.meta = Object.freeze(statelessMeta(revision))
      spec.metaRevision = revision
    }
    const meta = spec.meta
    const base = (params ?? {}) as { readonly _meta?: object }
    return { ...base, _meta: base._meta === undefined ? meta : { ...meta, ...base._meta } }
  }
}
