/**
 * Answers the server's `sampling/createMessage`: a Layer holding the
 * function that runs the model. A client built with it declares the
 * `sampling` capability; one built without it does not, and the server is
 * told so.
 */
import type * as McpError from "@effect-mcp/protocol/McpError"
import type * as Sampling from "@effect-mcp/protocol/Sampling"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** Which optional parts of sampling the handler supports (they are declared as capabilities). */
export interface Options {
  /** Declare `sampling.tools`: requests may carry `tools` / `toolChoice` (2025-11-25 on). */
  readonly tools?: boolean | undefined
  /** Declare `sampling.context`: `includeContext` other than "none" is honoured. */
  readonly context?: boolean | undefined
}

/** Runs the model for one `sampling/createMessage`; fail with an `McpError` to answer with an error. */
export type CreateMessage = (
  params: Sampling.CreateMessageParams
) => Effect.Effect<Sampling.CreateMessageResult, McpError.McpError>

/** The service a client looks for to answer `sampling/createMessage`; `layer` provides it. */
export class SamplingHandler extends Context.Service<
  SamplingHandler,
  { readonly createMessage: CreateMessage; readonly options: Options }
>()("@effect-mcp/client/SamplingHandler") {}

/** Answers the server's sampling requests with `createMessage` (provide it to `McpClient.layer`). */
export const layer = (createMessage: CreateMessage, options: Options = {}): Layer.Layer<SamplingHandler> =>
  Layer.succeed(SamplingHandler, { createMessage, options })

/** The `sampling` capability this handler declares. */
export const capability = (options: Options): { readonly [key: string]: object } => ({
  ...(options.tools === true ? { tools: {} } : {}),
  ...(options.context === true ? { context: {} } : {})
})
