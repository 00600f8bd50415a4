/**
 * Small readers of raw message params used on the Peer's hot path. They look
 * only at the few fields the Peer itself needs (progress tokens, cancelled
 * ids); full params validation is the session's job.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Predicate from "effect/Predicate"
import type * as CurrentRequest from "../CurrentRequest.ts"

// The cancel's id is read by the protocol package's one reader, which the HTTP transports share.
export { cancelledRequestId } from "@effect-mcp/protocol/Cancellation"

// A progress token has a request id's shape (`Meta.ProgressToken`): the same guard tests both.
const isRequestId = JsonRpc.isRequestId

export const progressTokenOf = (params: unknown): CurrentRequest.ProgressToken | undefined => {
  if (!Predicate.isObject(params)) return undefined
  const meta = (params as { readonly _meta?: unknown })._meta
  if (!Predicate.isObject(meta)) return undefined
  const token = (meta as { readonly progressToken?: unknown }).progressToken
  return isRequestId(token) ? token : undefined
}

export const withProgressToken = (params: object | undefined, token: CurrentRequest.ProgressToken): object => {
  const base = (params ?? {}) as { readonly _meta?: object }
  return { ...base, _meta: { ...base._meta, progressToken: token } }
}

export const progressParams = (token: CurrentRequest.ProgressToken, update: CurrentRequest.ProgressUpdate): object => {
  const params: { progressToken: CurrentRequest.ProgressToken; progress: number; total?: number; message?: string } = {
    progressToken: token,
    progress: update.progress
  }
  if (update.total !== undefined) params.total = update.total
  if (update.message !== undefined) params.message = update.message
  return params
}

export const progressOf = (
  params: unknown
): { readonly token: CurrentRequest.ProgressToken; readonly update: CurrentRequest.ProgressUpdate } | undefined => {
  if (!Predicate.isObject(params)) return undefined
  const p = params as { progressToken?: unknown; progress?: unknown; total?: unknown; message?: unknown }
  if (!isRequestId(p.progressToken) || typeof p.progress !== "number") return undefined
  return {
    token: p.progressToken,
    update: {
      progress: p.progress,
      total: typeof p.total === "number" ? p.total : undefined,
      message: typeof p.message === "string" ? p.message : undefined
    }
  }
}
