/**
 * What became of a handler: its value, or its failure turned into what the
 * request should answer. Typed failures are kept (a tool turns them into an
 * `isError` result); a defect is kept as its Cause, reported to the client
 * only as a correlation id (`Defect`); interruption is not caught, so a
 * cancelled request still stops.
 */
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Revision from "@effect-mcp/protocol/Revision"
import * as Defect from "@effect-mcp/engine/Defect"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import { ClientRequestError } from "../ServerRequest.ts"

export type Caught<A> =
  | { readonly _tag: "Ok"; readonly value: A }
  | { readonly _tag: "Failed"; readonly error: unknown }
  | { readonly _tag: "Died"; readonly cause: Cause.Cause<unknown> }

/**
 * What a failed handler comes to: its first typed failure, else its defects
 * (the whole Cause, for the log); undefined when it was only interrupted (the
 * request stops).
 */
export const fromCause = (cause: Cause.Cause<unknown>): Caught<never> | undefined => {
  if (Cause.hasInterruptsOnly(cause)) return undefined
  const failure = cause.reasons.find(Cause.isFailReason)
  if (failure !== undefined) return { _tag: "Failed", error: failure.error }
  return { _tag: "Died", cause }
}

/** A readable message for any failure. */
export const messageOf = (error: unknown): string => {
  if (Predicate.isObject(error)) {
    const e = error as { readonly message?: unknown; readonly _tag?: unknown }
    const message = typeof e.message === "string" && e.message.length > 0 ? e.message : undefined
    const tag = typeof e._tag === "string" ? e._tag : error instanceof Error ? error.name : undefined
    if (message !== undefined) return tag === undefined || tag === "Error" ? message : `${tag}: ${message}`
    if (tag !== undefined) return tag
    try {
      return JSON.stringify(error)
    } catch {
      return String(error)
    }
  }
  return error === undefined ? "unknown failure" : String(error)
}

/**
 * The protocol error a failure must become whatever the method: an explicit
 * `McpError`, or (2026-07-28) an ask the client cannot serve, which is
 * `MissingRequiredClientCapability` (-32021) there. Undefined otherwise.
 */
export const protocolError = (revision: Revision.RevisionSpec, error: unknown): McpError.McpError | undefined => {
  if (McpError.isMcpError(error)) return error
  if (error instanceof ClientRequestError && error.reason === "CapabilityMissing" && revision.stateless) {
    return new McpError.MissingRequiredClientCapability({
      message: error.message,
      data: { requiredCapabilities: error.requiredCapabilities ?? {} }
    })
  }
  return undefined
}

/**
 * What a non-tool handler's failure answers: its protocol error, or an
 * internal error carrying its message; a defect is logged and answered with
 * a generic internal error carrying the log's correlation id.
 */
export const asProtocolError = (
  revision: Revision.RevisionSpec,
  method: string,
  done: Exclude<Caught<unknown>, { readonly _tag: "Ok" }>
): Effect.Effect<never, McpError.McpError> => {
  if (done._tag === "Died")
    return Effect.flatMap(Defect.report(done.cause, method), (id) => Effect.fail(Defect.internalError(id)))
  return Effect.fail(
    protocolError(revision, done.error) ??
      new McpError.InternalError({ message: `${method} failed: ${messageOf(done.error)}` })
  )
}
