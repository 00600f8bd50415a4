/**
 * The host's consent hooks: asked before a tool call is sent, and before a
 * server's sampling or elicitation request reaches the model or the user.
 * Each hook says yes or no; the host does the rest: a refused tool call fails
 * with `HostError` (reason `Declined`) and nothing is sent, a refused
 * sampling request is answered with an error, a refused elicitation with
 * `decline`. Without a `Consent` service everything is approved.
 *
 * @example
 * ```ts
 * import * as Consent from "@effect-mcp/host/Consent"
 * import * as Effect from "effect/Effect"
 *
 * // Read-only tools go through; anything else, and every sampling request, is refused.
 * export const Cautious = Consent.layer({
 *   toolCall: (request) => Effect.succeed(request.tool.annotations?.readOnlyHint === true),
 *   sampling: () => Effect.succeed(false)
 * })
 * ```
 */
import type * as Elicitation from "@effect-mcp/protocol/Elicitation"
import type * as Sampling from "@effect-mcp/protocol/Sampling"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** A tool call about to be sent. */
export interface ToolCall {
  readonly server: string
  /** The catalog name the call was made with. */
  readonly name: string
  /** The tool as its server listed it (its own name, annotations, schemas). */
  readonly tool: Tools.Tool
  readonly arguments: { readonly [key: string]: unknown } | undefined
}

/** A server's sampling request. */
export interface SamplingRequest {
  readonly server: string
  readonly params: Sampling.CreateMessageParams
}

/** A server's elicitation request. */
export interface ElicitationRequest {
  readonly server: string
  readonly params: Elicitation.ElicitFormParams | Elicitation.ElicitUrlParams
}

/** The hooks; each answers true to approve. */
export interface ConsentShape {
  /** Asked before a tool call is sent; false fails the call with `HostError` (reason `Declined`). */
  readonly toolCall: (request: ToolCall) => Effect.Effect<boolean>
  /** Asked before a server's sampling request reaches the model; false answers it with an error. */
  readonly sampling: (request: SamplingRequest) => Effect.Effect<boolean>
  /** Asked before a server's elicitation reaches the user; false answers it `decline`. */
  readonly elicitation: (request: ElicitationRequest) => Effect.Effect<boolean>
}

/** The service the host asks; `layer` provides it. */
export class Consent extends Context.Service<Consent, ConsentShape>()("@effect-mcp/host/Consent") {}

const approve = () => Effect.succeed(true)

/** Approves everything: what the host does without a `Consent` service. */
export const allowAll: ConsentShape = { toolCall: approve, sampling: approve, elicitation: approve }

/** Consent hooks; a hook left out approves. */
export const layer = (hooks: Partial<ConsentShape>): Layer.Layer<Consent> =>
  Layer.succeed(Consent, { ...allowAll, ...hooks })
