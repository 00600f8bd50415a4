/**
 * Cancellation of an in-flight request (`notifications/cancelled`, either
 * direction). The receiver stops work and sends no response.
 *
 * | field       | 2024-11-05 .. 2025-06-18 | 2025-11-25                      | 2026-07-28 |
 * |-------------|--------------------------|---------------------------------|------------|
 * | `requestId` | required                 | optional (tasks are cancelled   | required   |
 * |             |                          | with `tasks/cancel` instead)    |            |
 * | `_meta`     | -                        | yes                             | yes        |
 *
 * `initialize` must never be cancelled.
 */
import * as Schema from "effect/Schema"
import { isRequestId, RequestId } from "./JsonRpc.ts"
import { NotificationMeta } from "./Meta.ts"

/** Params of `notifications/cancelled`. */
export const CancelledParams = Schema.Struct({
  _meta: Schema.optionalKey(NotificationMeta),
  /** The id of the request to cancel, as the sender of that request assigned it. */
  requestId: Schema.optionalKey(RequestId),
  reason: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "CancelledParams" })
/** Decoded `CancelledParams`. */
export type CancelledParams = typeof CancelledParams.Type

/**
 * The id of the request a `notifications/cancelled` names, read from its raw
 * params without decoding them (the Peer and the HTTP transports route a
 * cancel by it before any validation): undefined when the params are not an
 * object or carry no valid request id (2025-11-25 lets the id be absent).
 */
export const cancelledRequestId = (params: unknown): RequestId | undefined => {
  if (typeof params !== "object" || params === null) return undefined
  const id = (params as { readonly requestId?: unknown }).requestId
  return isRequestId(id) ? id : undefined
}
