/**
 * The incoming request a handler fiber is serving. The Peer provides it to
 * every handler fiber; `Progress` and request-scoped notifications read it.
 */
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Transport from "./Transport.ts"

/** The token a request carries to ask for progress notifications. */
export type ProgressToken = string | number

/** One progress notification: `progress` increases, `total` if known, and an optional message. */
export interface ProgressUpdate {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
}

/** The incoming request a handler is serving: its id, method, progress token and revision. */
export interface CurrentRequestShape {
  readonly id: JsonRpc.RequestId
  readonly method: string
  /** The token the requester asked progress for, if it did. */
  readonly progressToken: ProgressToken | undefined
  /**
   * Sends `notifications/progress` for this request. Values that do not
   * increase, updates after the response, and requests without a token are
   * dropped (and logged at debug level).
   */
  readonly progress: (update: ProgressUpdate) => Effect.Effect<void>
  /** Sends a notification tied to this request (transports route it with the response). */
  readonly notify: (method: string, params?: object | undefined) => Effect.Effect<void>
  /**
   * Whom the request came from, when its transport authenticates (an HTTP
   * server with an `authentication` hook); undefined otherwise. In a stateful
   * session: always the same owner (a session is bound to it), with the
   * scopes of its latest request.
   */
  readonly principal: Transport.Authenticated | undefined
  /** The id of the transport's session (a Streamable HTTP `Mcp-Session-Id`), when it has one. */
  readonly sessionId: string | undefined
}

/** The incoming request being served, provided to every handler fiber. */
export class CurrentRequest extends Context.Service<CurrentRequest, CurrentRequestShape>()(
  "@effect-mcp/engine/CurrentRequest"
) {}

/** The principal of the request being served (see `CurrentRequestShape.principal`); undefined outside a request. */
export const principal: Effect.Effect<Transport.Authenticated | undefined> = Effect.map(
  Effect.serviceOption(CurrentRequest),
  (current) => (Option.isNone(current) ? undefined : current.value.principal)
)

/** The transport session id of the request being served (see `CurrentRequestShape.sessionId`). */
export const sessionId: Effect.Effect<string | undefined> = Effect.map(
  Effect.serviceOption(CurrentRequest),
  (current) => (Option.isNone(current) ? undefined : current.value.sessionId)
)
