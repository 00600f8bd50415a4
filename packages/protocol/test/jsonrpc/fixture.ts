/**
 * A small hand-built RevisionSpec, so IncomingValidator is tested on schemas
 * whose rules are visible here rather than on the generated wire modules.
 */
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import type * as Revision from "@effect-mcp/protocol/Revision"
import * as Schema from "effect/Schema"

const Empty = Schema.Struct({})
const Meta = Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))

const request = (
  method: string,
  sender: Revision.Sender,
  params: Revision.AnyCodec,
  paramsRequired: boolean
): Revision.RequestSpec => ({
  _tag: "Request",
  method,
  sender,
  params,
  paramsRequired,
  result: Schema.Record(Schema.String, Schema.Unknown),
  capability: undefined
})

const notification = (
  method: string,
  sender: Revision.Sender,
  params: Revision.AnyCodec,
  paramsRequired: boolean
): Revision.NotificationSpec => ({
  _tag: "Notification",
  method,
  sender,
  params,
  paramsRequired,
  capability: undefined
})

export const InitializeParams = Schema.Struct({
  protocolVersion: Schema.String,
  capabilities: Schema.Record(Schema.String, Schema.Unknown),
  clientInfo: Schema.Struct({ name: Schema.String, version: Schema.String })
})

export const CallToolParams = Schema.Struct({
  _meta: Meta,
  name: Schema.String,
  arguments: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
})

export const ListParams = Schema.Struct({ _meta: Meta, cursor: Schema.optionalKey(Schema.String) })

export const ProgressParams = Schema.Struct({
  progressToken: Schema.Union([Schema.String, Schema.Int]),
  progress: Schema.Number,
  total: Schema.optionalKey(Schema.Number)
})

const methods: ReadonlyArray<Revision.MethodSpec> = [
  request("initialize", "client", InitializeParams, true),
  request("ping", "both", Empty, false),
  request("tools/list", "client", ListParams, false),
  request("tools/call", "client", CallToolParams, true),
  request("sampling/createMessage", "server", Schema.Record(Schema.String, Schema.Unknown), true),
  notification("notifications/initialized", "client", Empty, false),
  notification("notifications/progress", "both", ProgressParams, true)
]

const revision = (version: ProtocolVersion.ProtocolVersion, batches: boolean): Revision.RevisionSpec => ({
  version,
  stateless: false,
  batches,
  methods: new Map(methods.map((spec) => [spec.method, spec])),
  inputRequests: new Map()
})

/** Batches allowed, like 2025-03-26. */
export const withBatches = revision("2025-03-26", true)

/** No batches, like 2025-06-18. */
export const withoutBatches = revision("2025-06-18", false)
