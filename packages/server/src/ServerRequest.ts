/**
 * The request a server handler is serving: its negotiated revision, the
 * client's declarations, progress and logging for it, and the one way to ask
 * the client for something (sampling, elicitation, roots). Every handler the
 * server runs has it; `Elicitation`, `Sampling`, `Roots` and `Log` are the
 * friendly front of `ask` and `log`.
 *
 * How an ask travels depends on the revision, not on the handler: a
 * server-to-client request on stateful revisions, an `input_required` round
 * trip on 2026-07-28 (the handler is re-run on retry and its asks are
 * answered from the client's `inputResponses`, in order).
 */
import type * as InputRequired from "@effect-mcp/protocol/InputRequired"
import type * as Logging from "@effect-mcp/protocol/Logging"
import type { ProtocolVersion } from "@effect-mcp/protocol/ProtocolVersion"
import type * as Revision from "@effect-mcp/protocol/Revision"
import type * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import type * as Session from "@effect-mcp/engine/Session"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** The three things a server may ask of the client. */
export type AskMethod = "sampling/createMessage" | "elicitation/create" | "roots/list"

/** Why asking the client failed. */
export class ClientRequestError extends Schema.TaggedError<ClientRequestError>()("ClientRequestError", {
  reason: Schema.Literals([
    /** The client did not declare the capability the ask needs (see `requiredCapabilities`). */
    "CapabilityMissing",
    /** The negotiated revision has no such request (e.g. elicitation before 2025-06-18). */
    "NotInRevision",
    /** The client answered with an error. */
    "Rejected",
    /** The client's answer did not have the expected shape. */
    "InvalidResponse",
    "Timeout",
    /** The session closed before an answer arrived. */
    "Closed"
  ]),
  method: Schema.String,
  message: Schema.String,
  /** For `CapabilityMissing`: the client capabilities the ask needs. */
  requiredCapabilities: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  cause: Schema.optionalKey(Schema.Defect())
}) {}

/** How one ask is made. */
export interface AskOptions {
  /**
   * Its key among the `inputRequests` of a 2026-07-28 `input_required` result
   * (default: made from its method and position). The client's
   * `inputResponses` entry under this key answers it, with or without a
   * `requestState`. Ignored where asks are requests.
   */
  readonly key?: string | undefined
  /**
   * How long to wait for the client's answer (default: the session's request
   * timeout); the ask then fails with `Timeout` and the client is told the
   * request is cancelled. Where asks are input requests (2026-07-28) the
   * client answers on its retry and there is nothing to wait for.
   */
  readonly timeout?: Duration.Input | undefined
  /**
   * Receives the progress the client reports while it works on the ask
   * (`notifications/progress` for the request's progress token, which asking
   * for progress adds); each update also restarts the timeout. Not called
   * where asks are input requests.
   */
  readonly onProgress?: ((update: CurrentRequest.ProgressUpdate) => void) | undefined
  /**
   * Ask for the client to run a sampling or elicitation as a task (2025-11-25,
   * when the client declares `tasks.requests.sampling.createMessage` /
   * `tasks.requests.elicitation.create`; `{ ttl }` asks for a retention in
   * ms): the client answers with a task at once, which is polled with
   * `tasks/get` at the interval it suggests, then its outcome read with
   * `tasks/result`. The ask's answer is the same either way; where the client
   * cannot take a task it is asked plainly. Interrupting the ask cancels the task.
   */
  readonly task?: boolean | { readonly ttl?: number | undefined } | undefined
}

/**
 * What a 2026-07-28 retry carries for a handler that runs its own input
 * rounds (`ServerRequestShape.requireInput`): the client's `inputResponses`
 * as sent, and the state the handler gave its last round.
 */
export interface Retry {
  /** The client's answers, by the keys of the round they answer (empty when it sent none). */
  readonly inputResponses: InputRequired.InputResponses
  /** What the handler carried from the round it ended (none when the retry's `requestState` has none). */
  readonly state: string | undefined
}

/** The request a handler is serving, and what it can do on it. */
export interface ServerRequestShape {
  readonly method: string
  readonly revision: Revision.RevisionSpec
  readonly version: ProtocolVersion
  /** The client's capabilities (declared at initialize, or on this request in 2026-07-28). */
  readonly clientCapabilities: Session.Capabilities
  readonly clientInfo: Session.Implementation | undefined
  /** Whether this request arrived without a session (2026-07-28). */
  readonly stateless: boolean
  /** Sends `request` to the client and returns its (unchecked) result. */
  readonly ask: (method: AskMethod, params: object, options?: AskOptions) => Effect.Effect<unknown, ClientRequestError>
  /**
   * A 2026-07-28 retry's fields, for a handler that runs its own rounds: undefined when the request carries
   * neither `inputResponses` nor a `requestState` (or on a revision without input rounds).
   */
  readonly retry: Retry | undefined
  /**
   * Ends the request with an `input_required` result of the handler's own (2026-07-28): `inputRequests`
   * exactly as given, under their keys, all in one round; `state` is sealed into the server's
   * `requestState` (bound to this request, as the server's own rounds are) and comes back in `retry`.
   * For a handler that passes another server's rounds on (a proxy): the server's own asks replay the
   * handler, this one continues where the handler left off. Fails with `NotInRevision` where the client
   * cannot be asked by rounds (stateful revisions, or a client that declared nothing to ask).
   */
  readonly requireInput: (
    inputRequests: InputRequired.InputRequests,
    state?: string | undefined
  ) => Effect.Effect<never, ClientRequestError>
  /** Sends `notifications/message` for this request when the client's level lets it through. */
  readonly log: (level: Logging.LoggingLevel, data: unknown, logger?: string) => Effect.Effect<void>
  /** Reports progress when the client asked for it. */
  readonly progress: (update: CurrentRequest.ProgressUpdate) => Effect.Effect<void>
  /**
   * Sends a session notification (e.g. `notifications/elicitation/complete`)
   * when the revision has it; a no-op otherwise or without a session.
   */
  readonly notify: (method: string, params: object) => Effect.Effect<void>
}

/** The request being served, provided to every handler. */
export class ServerRequest extends Context.Service<ServerRequest, ServerRequestShape>()(
  "@effect-mcp/server/ServerRequest"
) {}

/** Sends a log message for the current request (dropped below the client's level). */
export const log = (
  level: Logging.LoggingLevel,
  data: unknown,
  logger?: string
): Effect.Effect<void, never, ServerRequest> => ServerRequest.use((request) => request.log(level, data, logger))

/** Reports progress of the current request (dropped when the client asked for none). */
export const progress = (update: CurrentRequest.ProgressUpdate): Effect.Effect<void, never, ServerRequest> =>
  ServerRequest.use((request) => request.progress(update))

/** Decodes what the client answered to `method`, failing with `InvalidResponse` when it does not fit. */
export const decodeAnswer =
  <S extends Schema.Codec<unknown, unknown, never, never>>(method: AskMethod, schema: S) =>
  (answer: unknown): Effect.Effect<S["Type"], ClientRequestError> =>
    Schema.decodeUnknownEffect(schema)(answer).pipe(
      Effect.mapError(
        (issue) =>
          new ClientRequestError({
            reason: "InvalidResponse",
            method,
            message: `${method}: the client's answer is invalid: ${issue.message}`,
            cause: issue
          })
      )
    )
