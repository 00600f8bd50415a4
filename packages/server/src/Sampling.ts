/**
 * Asking the client's model for a completion from inside a handler
 * (`sampling/createMessage`), the same code on every revision: a request on
 * stateful sessions, an input request on 2026-07-28. Tools in the request
 * need 2025-11-25 or later and the client's `sampling.tools` capability.
 */
import * as Sampling from "@effect-mcp/protocol/Sampling"
import * as Effect from "effect/Effect"
import { type AskOptions, type ClientRequestError, decodeAnswer, ServerRequest } from "./ServerRequest.ts"

const decode = decodeAnswer("sampling/createMessage", Sampling.CreateMessageResult)

/** Asks the client's model for a message: `sampling/createMessage` on stateful revisions, an input request on 2026-07-28. */
export const createMessage = (
  params: Sampling.CreateMessageParams,
  options?: AskOptions
): Effect.Effect<Sampling.CreateMessageResult, ClientRequestError, ServerRequest> =>
  ServerRequest.use((request) => Effect.flatMap(request.ask("sampling/createMessage", params, options), decode))

/** The text of the model's answer (text blocks joined), for the common single-turn case. */
export const text = (result: Sampling.CreateMessageResult): string =>
  Sampling.contentBlocks(result.content)
    .flatMap((block) => (block.type === "text" ? [block.text] : []))
    .join("")
