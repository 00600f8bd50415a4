/**
 * What the other side is told when a handler dies: a generic internal error
 * carrying a correlation id, never the defect's message or stack, which may
 * hold anything (a connection string, a query, a token). The full Cause is
 * logged here, with the same id as the `correlationId` log annotation, so an
 * operator can find it from what the client reports.
 *
 * The log is written with effect's `Logger` from a context with no request in
 * it: a server's bridge from effect's logger to `notifications/message`
 * forwards only what a handler logs, so the Cause stays on this side.
 */
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Cause from "effect/Cause"
import type * as Context from "effect/Context"
import * as SecureRandom from "effect/crypto/SecureRandom"
import * as Effect from "effect/Effect"

/** The log annotation that carries the correlation id. */
export const annotation = "correlationId"

/** A fresh correlation id (a random UUID). */
export const makeId = (): string => SecureRandom.uuidV4Unsafe()

/** The text a peer sees in place of a defect. */
export const messageFor = (correlationId: string): string => `Internal error (correlation id ${correlationId})`

/** The generic -32603 a peer receives in place of a defect: `data: { correlationId }`. */
export const internalError = (correlationId: string): McpError.InternalError =>
  new McpError.InternalError({ message: messageFor(correlationId), data: { correlationId } })

/** Logs `cause` at Error level, annotated with the correlation id and the method being served. */
export const log = (cause: Cause.Cause<unknown>, correlationId: string, method: string): Effect.Effect<void> =>
  Effect.logError(`${method} failed with a defect (correlation id ${correlationId})`, cause).pipe(
    Effect.annotateLogs({ [annotation]: correlationId, method })
  )

/** Logs `cause` under a new correlation id and gives the id. */
export const report = (cause: Cause.Cause<unknown>, method: string): Effect.Effect<string> =>
  Effect.suspend(() => {
    const correlationId = makeId()
    return Effect.as(log(cause, correlationId, method), correlationId)
  })

/**
 * `report` for synchronous callers: logs with the loggers of `context` at
 * once and gives the generic error to answer with.
 */
export const reportUnsafe = (
  context: Context.Context<never>,
  cause: Cause.Cause<unknown>,
  method: string
): McpError.InternalError => {
  const correlationId = makeId()
  try {
    Effect.runSyncWith(context)(log(cause, correlationId, method))
  } catch {
    // A logger that fails must not keep the peer from answering.
  }
  return internalError(correlationId)
}
