/**
 * Looks into JSON-RPC frames without decoding their params: the few facts a
 * transport or the Peer needs to route, settle or coalesce a message (which
 * request a `notifications/cancelled` names, which responses a frame carries,
 * whether a notification is idempotent). One place reads these fields, so the
 * HTTP server and the HTTP client agree on them; a cancel's id is read by
 * `Cancellation.cancelledRequestId`, as the Peer reads it.
 *
 * Every function takes what a codec yields (a message, a batch, or a decoded
 * batch holding decode failures, which are skipped) and allocates nothing for
 * a frame that holds none of what it looks for.
 */
import * as Cancellation from "@effect-mcp/protocol/Cancellation"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"

/** A frame as a transport sees it: one message, a batch, or a decoded batch (its decode failures are skipped). */
export type Frame = JsonRpc.Message | ReadonlyArray<JsonRpc.Message> | JsonRpcCodec.Decoded

const isMessage = (entry: JsonRpc.Message | JsonRpcCodec.DecodeFailure): entry is JsonRpc.Message =>
  !JsonRpcCodec.isDecodeFailure(entry)

/** The messages of a frame, batch or not (decode failures left out). */
export const messagesOf = (frame: Frame): ReadonlyArray<JsonRpc.Message> => {
  if (!Array.isArray(frame)) return [frame as JsonRpc.Message]
  for (const entry of frame) if (!isMessage(entry)) return frame.filter(isMessage)
  return frame as ReadonlyArray<JsonRpc.Message>
}

/** The ids of the requests a frame's `notifications/cancelled` name; undefined when it holds none. */
export const cancelledIdsOf = (frame: Frame): Array<JsonRpc.RequestId> | undefined => {
  let ids: Array<JsonRpc.RequestId> | undefined
  for (const message of Array.isArray(frame) ? frame : [frame]) {
    if (!isMessage(message) || !JsonRpc.isNotification(message) || message.method !== "notifications/cancelled") {
      continue
    }
    const id = Cancellation.cancelledRequestId(message.params)
    if (id === undefined) continue
    if (ids === undefined) ids = []
    ids.push(id)
  }
  return ids
}

/** The ids of the responses in a frame (a response with a null id answers nothing and is left out). */
export const responseIdsOf = (frame: Frame): Array<JsonRpc.RequestId> => {
  const ids: Array<JsonRpc.RequestId> = []
  if (!Array.isArray(frame)) {
    const message = frame as JsonRpc.Message
    if (JsonRpc.isResponse(message) && message.id !== null) ids.push(message.id)
    return ids
  }
  for (const message of frame) {
    if (isMessage(message) && JsonRpc.isResponse(message) && message.id !== null) ids.push(message.id)
  }
  return ids
}

/**
 * The key under which a notification is idempotent: a second one with the
 * same key, sent before the peer read the first, says nothing new and may be
 * dropped. `notifications/{tools,resources,prompts}/list_changed` (the key is
 * the method) and `notifications/resources/updated` (method and URI).
 * Undefined for anything else, batches included.
 */
export const idempotencyKeyOf = (frame: Frame): string | undefined => {
  if (Array.isArray(frame)) return undefined
  const message = frame as JsonRpc.Message
  if (!JsonRpc.isNotification(message)) return undefined
  switch (message.method) {
    case "notifications/tools/list_changed":
    case "notifications/resources/list_changed":
    case "notifications/prompts/list_changed":
      return message.method
    case "notifications/resources/updated": {
      const uri = (message.params as { readonly uri?: unknown } | undefined)?.uri
      return typeof uri === "string" ? `${message.method} ${uri}` : undefined
    }
    default:
      return undefined
  }
}

/**
 * What a request names for its required scopes: the `name` of a `tools/call`
 * or `prompts/get`, the `uri` of a `resources/read`, `resources/subscribe` or
 * `resources/unsubscribe`; undefined for anything else.
 */
export const scopeTargetOf = (message: JsonRpc.Message): string | undefined => {
  if (!JsonRpc.isRequest(message)) return undefined
  let key: "name" | "uri"
  switch (message.method) {
    case "tools/call":
    case "prompts/get":
      key = "name"
      break
    case "resources/read":
    case "resources/subscribe":
    case "resources/unsubscribe":
      key = "uri"
      break
    default:
      return undefined
  }
  const params = message.params as { readonly name?: unknown; readonly uri?: unknown } | undefined
  const target = params?.[key]
  return typeof target === "string" ? target : undefined
}

/**
 * Every scope the requests of `messages` need (see `scopeTargetOf`), in
 * order, each once; undefined when `granted` holds them all.
 */
export const missingScopesOf = (
  messages: ReadonlyArray<JsonRpc.Message>,
  requiredScopes: (method: string, target: string) => ReadonlyArray<string> | undefined,
  granted: ReadonlyArray<string>
): ReadonlyArray<string> | undefined => {
  let required: Array<string> | undefined
  let lacking = false
  for (const message of messages) {
    const target = scopeTargetOf(message)
    if (target === undefined) continue
    const scopes = requiredScopes((message as JsonRpc.Request).method, target)
    if (scopes === undefined) continue
    for (const scope of scopes) {
      if (required === undefined) required = []
      if (!required.includes(scope)) required.push(scope)
      if (!granted.includes(scope)) lacking = true
    }
  }
  return lacking ? required : undefined
}
