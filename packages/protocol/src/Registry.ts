/**
 * The `RevisionSpec` of every MCP revision: the methods, params and result
 * schemas come from the generated wire modules (which read them off the
 * normative JSON Schemas); the capability gates and revision flags are the
 * hand-kept data below.
 */
import { compile } from "./internal/jit.ts"
import { modules } from "./internal/wire/index.ts"
import type { WireModule, WireNotification, WireRequest } from "./internal/wireTable.ts"
import * as ProtocolVersion from "./ProtocolVersion.ts"
import * as Skills from "./Skills.ts"
import type { AnyCodec, CapabilityRef, MethodSpec, NotificationSpec, RequestSpec, RevisionSpec } from "./Revision.ts"
import * as Tasks from "./Tasks.ts"

const server = (...path: ReadonlyArray<string>): CapabilityRef => ({ side: "server", path })
const client = (...path: ReadonlyArray<string>): CapabilityRef => ({ side: "client", path })
const receiver = (...path: ReadonlyArray<string>): CapabilityRef => ({ side: "receiver", path })

interface Gate {
  readonly capability: CapabilityRef
  /** The first revision that gates the method (it existed ungated before). */
  readonly since?: ProtocolVersion.ProtocolVersion
}

/**
 * The capability each method needs, keyed by method. For a request it is the
 * receiver's declaration; for a notification, the sender's (a server only sends
 * `notifications/tools/list_changed` when it declared `tools.listChanged`).
 * Methods absent here (ping, initialize, cancellation, progress, ...) are never gated.
 */
const gates: Readonly<Record<string, Gate>> = {
  "tools/list": { capability: server("tools") },
  "tools/call": { capability: server("tools") },
  "resources/list": { capability: server("resources") },
  "resources/templates/list": { capability: server("resources") },
  "resources/read": { capability: server("resources") },
  "resources/subscribe": { capability: server("resources", "subscribe") },
  "resources/unsubscribe": { capability: server("resources", "subscribe") },
  "prompts/list": { capability: server("prompts") },
  "prompts/get": { capability: server("prompts") },
  "logging/setLevel": { capability: server("logging") },
  // 2024-11-05 has completion/complete but no capability for it.
  "completion/complete": { capability: server("completions"), since: "2025-03-26" },
  "sampling/createMessage": { capability: client("sampling") },
  "roots/list": { capability: client("roots") },
  "elicitation/create": { capability: client("elicitation") },
  // 2025-11-25: `tasks` is "present if [the party] supports task-augmented requests";
  // `tasks.list` / `tasks.cancel` say whether tasks/list / tasks/cancel are supported.
  "tasks/get": { capability: receiver("tasks") },
  "tasks/result": { capability: receiver("tasks") },
  "tasks/list": { capability: receiver("tasks", "list") },
  "tasks/cancel": { capability: receiver("tasks", "cancel") },
  // Extensions (SEP-2133): their methods exist in every revision, gated by the receiver's declaration.
  [Skills.listMethod]: { capability: server("extensions", Skills.extensionId) },
  [Skills.getMethod]: { capability: server("extensions", Skills.extensionId) },
  [Skills.directoryReadMethod]: { capability: server("extensions", Skills.extensionId, "directoryRead") },
  "notifications/message": { capability: server("logging") },
  "notifications/resources/updated": { capability: server("resources", "subscribe") },
  "notifications/resources/list_changed": { capability: server("resources", "listChanged") },
  "notifications/prompts/list_changed": { capability: server("prompts", "listChanged") },
  "notifications/tools/list_changed": { capability: server("tools", "listChanged") },
  "notifications/roots/list_changed": { capability: client("roots", "listChanged") }
}

/** Revision-wide behaviour. Batching arrived in 2025-03-26 and left in 2025-06-18. */
const flags: {
  readonly [V in ProtocolVersion.ProtocolVersion]: { readonly stateless: boolean; readonly batches: boolean }
} = {
  "2024-11-05": { stateless: false, batches: false },
  "2025-03-26": { stateless: false, batches: true },
  "2025-06-18": { stateless: false, batches: false },
  "2025-11-25": { stateless: false, batches: false },
  "2026-07-28": { stateless: true, batches: false }
}

/**
 * Gates a revision replaces: on 2026-07-28 the `tasks/*` methods are the Tasks
 * extension's (SEP-2663), which the server declares under `extensions`, not
 * the 2025-11-25 `tasks` capability.
 */
const revisionGates: { readonly [V in ProtocolVersion.ProtocolVersion]?: Readonly<Record<string, Gate>> } = {
  "2026-07-28": {
    "tasks/get": { capability: server("extensions", Tasks.extensionId) },
    "tasks/update": { capability: server("extensions", Tasks.extensionId) },
    "tasks/cancel": { capability: server("extensions", Tasks.extensionId) }
  }
}

const capabilityOf = (version: ProtocolVersion.ProtocolVersion, method: string): CapabilityRef | undefined => {
  const gate = revisionGates[version]?.[method] ?? gates[method]
  return gate === undefined || (gate.since !== undefined && !ProtocolVersion.isAtLeast(version, gate.since))
    ? undefined
    : gate.capability
}

/**
 * Methods a session sees once, at its start: their schemas stay interpreted.
 * Generating and compiling a decoder costs more than one interpreted decode
 * (initialize's params and result: ~8 ms against ~3 ms of CPU on first use),
 * and for a stdio process that first use is its only one.
 */
const once: ReadonlySet<string> = new Set(["initialize"])

/**
 * Message schemas are decoded on every message, so they get effect's JIT
 * schema compiler (generated decoders, falling back to the interpreter where
 * `new Function` is unavailable; internal/jit.ts), enabled when a spec first
 * hands the schema out.
 */
const maybeCompile = (method: string, schema: AnyCodec): AnyCodec => (once.has(method) ? schema : compile(schema))

/**
 * A spec builds (and compiles) its schemas on first read, so a process
 * builds only those of the methods it sees: a stdio server that is only
 * initialized builds two. The getters live on the classes' prototypes: the
 * specs of a kind share one fast shape, read per message as plain fields are
 * (an object literal with a getter is a dictionary, each read a hash lookup).
 */
abstract class Method<Wire extends WireRequest | WireNotification> {
  readonly method: string
  readonly sender: Wire["sender"]
  readonly paramsRequired: boolean
  readonly capability: CapabilityRef | undefined
  protected readonly wire: Wire
  protected builtParams: AnyCodec | undefined = undefined

  constructor(version: ProtocolVersion.ProtocolVersion, wire: Wire) {
    this.method = wire.method
    this.sender = wire.sender
    this.paramsRequired = wire.paramsRequired
    this.capability = capabilityOf(version, wire.method)
    this.wire = wire
  }
}

class Request extends Method<WireRequest> implements RequestSpec {
  readonly _tag = "Request"
  private builtResult: AnyCodec | undefined = undefined

  get params(): AnyCodec {
    if (this.builtParams === undefined) this.builtParams = maybeCompile(this.method, this.wire.params())
    return this.builtParams
  }

  get result(): AnyCodec {
    if (this.builtResult === undefined) this.builtResult = maybeCompile(this.method, this.wire.result())
    return this.builtResult
  }
}

/** A notification's spec, its schema built on first read (see `Method`). */
class Notification extends Method<WireNotification> implements NotificationSpec {
  readonly _tag = "Notification"

  get params(): AnyCodec {
    if (this.builtParams === undefined) this.builtParams = compile(this.wire.params())
    return this.builtParams
  }
}

/** Request methods of the extensions this package models (added to every revision's table). */
const extensionRequests = [...Skills.wireRequests]

interface Tables {
  readonly methods: ReadonlyMap<string, MethodSpec>
  readonly inputRequests: ReadonlyMap<string, RequestSpec>
}

/**
 * Methods of official extensions a revision carries beside its own schema:
 * the Tasks extension (SEP-2663) on 2026-07-28. They are not gated by a
 * capability here: whether the client declared the extension on the request
 * is for the receiver's handler to check (-32021 when it did not).
 */
const extensions: { readonly [V in ProtocolVersion.ProtocolVersion]?: WireModule } = {
  "2026-07-28": {
    requests: [
      {
        method: "tasks/get",
        sender: "client",
        params: () => Tasks.TaskIdParams,
        paramsRequired: true,
        result: () => Tasks.ExtensionGetTaskResult
      },
      {
        method: "tasks/update",
        sender: "client",
        params: () => Tasks.UpdateTaskParams,
        paramsRequired: true,
        result: () => Tasks.TaskAckResult
      },
      {
        method: "tasks/cancel",
        sender: "client",
        params: () => Tasks.TaskIdParams,
        paramsRequired: true,
        result: () => Tasks.TaskAckResult
      }
    ],
    notifications: [
      // The revision's filter schema has no `taskIds`: decoding the acknowledgement with it would drop them.
      {
        method: "notifications/subscriptions/acknowledged",
        sender: "server",
        params: () => Tasks.ListenAcknowledgedParams,
        paramsRequired: true
      },
      {
        method: "notifications/tasks",
        sender: "server",
        params: () => Tasks.TaskNotificationParams,
        paramsRequired: true
      }
    ],
    inputRequests: []
  }
}

const buildTables = (version: ProtocolVersion.ProtocolVersion): Tables => {
  const wire = modules[version]
  const methods = new Map<string, MethodSpec>()
  for (const r of wire.requests) methods.set(r.method, new Request(version, r))
  for (const n of wire.notifications) methods.set(n.method, new Notification(version, n))
  const extension = extensions[version]
  if (extension !== undefined) {
    for (const r of extension.requests) methods.set(r.method, new Request(version, r))
    for (const n of extension.notifications) methods.set(n.method, new Notification(version, n))
  }
  for (const r of extensionRequests) if (!methods.has(r.method)) methods.set(r.method, new Request(version, r))
  return { methods, inputRequests: new Map(wire.inputRequests.map((r) => [r.method, new Request(version, r)])) }
}

/**
 * A revision's flags are plain data; its method tables are built on first
 * read (and each schema when its spec first hands it out), so a process pays
 * only for the revisions and methods it sees. Asking whether a revision is
 * stateless builds nothing. The getters live on the prototype (see
 * `Request`) and return the same tables once built.
 */
class Revision implements RevisionSpec {
  readonly version: ProtocolVersion.ProtocolVersion
  readonly stateless: boolean
  readonly batches: boolean
  private tables: Tables | undefined = undefined

  constructor(version: ProtocolVersion.ProtocolVersion) {
    this.version = version
    this.stateless = flags[version].stateless
    this.batches = flags[version].batches
  }

  private get built(): Tables {
    if (this.tables === undefined) this.tables = buildTables(this.version)
    return this.tables
  }

  get methods(): ReadonlyMap<string, MethodSpec> {
    return this.built.methods
  }

  get inputRequests(): ReadonlyMap<string, RequestSpec> {
    return this.built.inputRequests
  }
}

const specs = new Map<ProtocolVersion.ProtocolVersion, RevisionSpec>()

/** What `version` allows. */
export const get = (version: ProtocolVersion.ProtocolVersion): RevisionSpec => {
  let spec = specs.get(version)
  if (spec === undefined) {
    spec = new Revision(version)
    specs.set(version, spec)
  }
  return spec
}

/** Every revision, oldest first. */
export const all: ReadonlyArray<RevisionSpec> = ProtocolVersion.all.map(get)
