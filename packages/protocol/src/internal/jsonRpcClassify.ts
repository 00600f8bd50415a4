/**
 * The hand-written JSON-RPC 2.0 classifier the codec runs on every parsed
 * frame. It reads each envelope member at most once and allocates nothing on
 * success; `JsonRpc`'s Schemas describe the same rules, and a test keeps them
 * in agreement.
 */
import type * as JsonRpc from "../JsonRpc.ts"
import { isRequestId } from "../JsonRpc.ts"

type Loose = { [key: string]: unknown }

const isPlainObject = (u: unknown): u is Loose => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The id to answer an invalid message with: its `id` when that is a valid
 * request id, else `null`.
 */
export const recoverId = (u: unknown): JsonRpc.RequestId | null => {
  if (!isPlainObject(u)) return null
  const id = u.id
  return isRequestId(id) ? id : null
}

/**
 * Why `u` is not a JSON-RPC 2.0 message, or `undefined` when it is one.
 *
 * An error response without `id` (allowed by MCP from 2025-11-25) gets
 * `id: null` written in, so every decoded `ErrorResponse` has an `id`; the
 * value is normally a freshly parsed object the codec owns.
 */
export const invalidReason = (u: unknown): string | undefined => {
  if (!isPlainObject(u)) return Array.isArray(u) ? "a batch entry must not be an array" : "message must be an object"
  const version = u.jsonrpc
  if (version !== "2.0") return version === undefined ? "missing jsonrpc member" : 'jsonrpc must be "2.0"'
  const method = u.method
  if (method !== undefined) {
    if (typeof method !== "string") return "method must be a string"
    const params = u.params
    if (params !== undefined && (typeof params !== "object" || params === null)) {
      return "params must be an object or an array"
    }
    const id = u.id
    if (id === undefined || isRequestId(id)) return undefined
    return id === null ? "request id must not be null" : "request id must be a string or a safe integer"
  }
  const error = u.error
  if (error !== undefined) {
    if (u.result !== undefined) return "response must not carry both result and error"
    if (!isPlainObject(error)) return "error must be an object"
    if (!Number.isSafeInteger(error.code)) return "error.code must be an integer"
    if (typeof error.message !== "string") return "error.message must be a string"
    const id = u.id
    // Reflect.set reports a frozen caller-supplied object instead of throwing.
    if (id === undefined) return Reflect.set(u, "id", null) ? undefined : "error response id missing"
    return id === null || isRequestId(id) ? undefined : "response id must be a string, a safe integer or null"
  }
  if (u.result !== undefined) {
    return isRequestId(u.id) ? undefined : "success response id must be a string or a safe integer"
  }
  return u.id === undefined ? "missing method" : "response must carry result or error"
}
