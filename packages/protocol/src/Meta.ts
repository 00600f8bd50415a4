/**
 * `_meta` objects: free-form metadata a peer attaches to params, results and
 * content, plus the keys MCP reserves inside them.
 *
 * | `_meta` of           | 2024-11-05 / 2025-03-26 | 2025-06-18 / 2025-11-25   | 2026-07-28                                   |
 * |----------------------|-------------------------|---------------------------|----------------------------------------------|
 * | request params       | `progressToken?` only   | `progressToken?` + any    | RequestMetaObject: `protocolVersion` and     |
 * |                      |                         |                           | `clientCapabilities` required, `clientInfo?`, |
 * |                      |                         |                           | `logLevel?`, `progressToken?` + any; `_meta`  |
 * |                      |                         |                           | itself required on every request             |
 * | notification params  | any                     | any                       | NotificationMetaObject: `subscriptionId?`    |
 * | result               | any                     | any                       | ResultMetaObject: `serverInfo?`              |
 * | content, Tool, ...   | absent                  | any (from 2025-06-18)     | MetaObject (any)                             |
 *
 * Reserved keys are `io.modelcontextprotocol/<name>` in 2026-07-28 (2026 moved
 * lifecycle data, which older revisions exchange once in `initialize`, into
 * every request). The domain types make every reserved key optional: the same
 * type serves all revisions, and the engine fills the keys in when it speaks
 * 2026-07-28.
 */
import * as Schema from "effect/Schema"
import { ClientCapabilities, Implementation, LoggingLevel } from "./internal/metaValues.ts"
import { openStruct } from "./internal/open.ts"
import { RequestId } from "./JsonRpc.ts"

/** Any `_meta` object (the 2026-07-28 MetaObject; open in every revision). */
export const Meta = Schema.Record(Schema.String, Schema.Unknown).annotate({ identifier: "Meta" })
export type Meta = typeof Meta.Type

/** Opaque token correlating `notifications/progress` with the request that asked for them. */
export const ProgressToken = Schema.Union([Schema.String, Schema.Int]).annotate({ identifier: "ProgressToken" })
export type ProgressToken = typeof ProgressToken.Type

/** The prefix MCP reserves for its own `_meta` keys. */
export const reservedPrefix = "io.modelcontextprotocol/"

/** The `_meta` key of the protocol version (2026-07-28). */
export const protocolVersionKey = "io.modelcontextprotocol/protocolVersion"
/** The `_meta` key of the client's capabilities (2026-07-28). */
export const clientCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities"
/** The `_meta` key of the client's info (2026-07-28). */
export const clientInfoKey = "io.modelcontextprotocol/clientInfo"
/** The `_meta` key of the log level a request asks for (2026-07-28). */
export const logLevelKey = "io.modelcontextprotocol/logLevel"
/** The `_meta` key of the server's info in results (2026-07-28). */
export const serverInfoKey = "io.modelcontextprotocol/serverInfo"
/** The `_meta` key naming the `subscriptions/listen` stream a notification belongs to (2026-07-28). */
export const subscriptionIdKey = "io.modelcontextprotocol/subscriptionId"

/**
 * Whether a `_meta` key is reserved for MCP: its prefix's second label is
 * `modelcontextprotocol` or `mcp` (e.g. `io.modelcontextprotocol/`, `dev.mcp/`).
 */
export const isReservedKey = (key: string): boolean => {
  const slash = key.indexOf("/")
  if (slash <= 0) return false
  const labels = key.slice(0, slash).split(".")
  const second = labels[1]
  return second === "modelcontextprotocol" || second === "mcp"
}

/** `_meta` of request params. */
export const RequestMeta = openStruct({
  progressToken: Schema.optionalKey(ProgressToken),
  [protocolVersionKey]: Schema.optionalKey(Schema.String),
  [clientCapabilitiesKey]: Schema.optionalKey(ClientCapabilities),
  [clientInfoKey]: Schema.optionalKey(Implementation),
  [logLevelKey]: Schema.optionalKey(LoggingLevel)
}).annotate({ identifier: "RequestMeta" })
export type RequestMeta = typeof RequestMeta.Type

/** `_meta` of notification params. */
export const NotificationMeta = openStruct({
  [subscriptionIdKey]: Schema.optionalKey(RequestId)
}).annotate({ identifier: "NotificationMeta" })
export type NotificationMeta = typeof NotificationMeta.Type

/** `_meta` of results. */
export const ResultMeta = openStruct({
  [serverInfoKey]: Schema.optionalKey(Implementation)
}).annotate({ identifier: "ResultMeta" })
export type ResultMeta = typeof ResultMeta.Type

/**
 * Params of a request that carries nothing but `_meta` (ping, server/discover,
 * roots/list). Open: the generic request params of every revision allow extra keys.
 */
export const RequestParams = openStruct({ _meta: Schema.optionalKey(RequestMeta) }).annotate({
  identifier: "RequestParams"
})
export type RequestParams = typeof RequestParams.Type

/** Params of a notification that carries nothing but `_meta` (initialized, list_changed). */
export const NotificationParams = openStruct({ _meta: Schema.optionalKey(NotificationMeta) }).annotate({
  identifier: "NotificationParams"
})
export type NotificationParams = typeof NotificationParams.Type

/** The progress token of request params, if the caller asked for progress. */
export const progressTokenOf = (params: { readonly _meta?: RequestMeta } | undefined): ProgressToken | undefined =>
  params?._meta?.progressToken
