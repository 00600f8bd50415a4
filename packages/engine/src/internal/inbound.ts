/**
 * Small readers of raw message params used on the Peer's hot path. They look
 * only at the few fields the Peer itself needs (progress tokens, cancelled
 * ids); full params validation is the session's job.
 */
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import type * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as McpError from "@effect-mcp/protocol/McpError"
import type { ProtocolVersion } from "@effect-mcp/protocol/ProtocolVersion"
import * as Cause from "effect/Cause"
import type * as Context from "effect/Context"
import * as Predicate from "effect/Predicate"
import type * as CurrentRequest from "../CurrentRequest.ts"
import * as Defect from "../Defect.ts"

const isRequestId = (u: unknown): u is JsonRpc.RequestId =>
  typeof u === "string" || (typeof u === "number" && Number.isInteger(u))

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

export const cancelledRequestId = (params: unknown): JsonRpc.RequestId | undefined => {
  if (!Predicate.isObject(params)) return undefined
  const id = (params as { readonly requestId?: unknown }).requestId
  return isRequestId(id) ? id : undefined
}

/**
 * The JSON-RPC error for a failed handler: its typed MCP error, or, for a
 * defect (or a failure that is no MCP error), a generic internal error with a
 * correlation id, the Cause being logged under that id with `context`'s loggers.
 */
export const errorObjectOf = (
  cause: Cause.Cause<McpError.McpError>,
  revision: ProtocolVersion | undefined,
  method: string,
  context: Context.Context<never>
): JsonRpc.ErrorObject => {
  const failure = cause.reasons.find(Cause.isFailReason)
  if (failure !== undefined && McpError.isMcpError(failure.error))
    return McpError.toErrorObject(failure.error, revision)
  return McpError.toErrorObject(Defect.reportUnsafe(context, cause, method))
}

/** A batch entry is a message, or the decode failure to answer it with. */
export type BatchEntry = JsonRpc.Message | JsonRpcCodec.DecodeFailure
