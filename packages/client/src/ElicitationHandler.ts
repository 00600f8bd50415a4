/**
 * Answers the server's `elicitation/create`: a Layer holding one function
 * per mode the client supports. Form answers are completed with the schema's
 * defaults and validated (see ElicitationForm) before anything is sent; the
 * declared capability lists exactly the modes given.
 */
import type * as Elicitation from "@effect-mcp/protocol/Elicitation"
import type * as McpError from "@effect-mcp/protocol/McpError"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as ElicitationForm from "./ElicitationForm.ts"

/** What the user did with a form; `content` may leave out fields that have defaults. */
export type FormAnswer =
  | { readonly action: "accept"; readonly content?: ElicitationForm.Content | undefined }
  | { readonly action: "decline" }
  | { readonly action: "cancel" }

/** What the user did with a URL: `accept` means they agreed to open it. */
export type UrlAnswer = { readonly action: "accept" | "decline" | "cancel" }

/** One function per elicitation mode the client supports; the modes given are the ones it declares. */
export interface Handlers {
  /** Form mode: show `params.message` and a form for `params.requestedSchema`, and say what the user did. */
  readonly form?: ((params: Elicitation.ElicitFormParams) => Effect.Effect<FormAnswer, McpError.McpError>) | undefined
  /** URL mode (2025-11-25 on). */
  readonly url?: ((params: Elicitation.ElicitUrlParams) => Effect.Effect<UrlAnswer, McpError.McpError>) | undefined
}

/** The service a client looks for to answer `elicitation/create`; `layer` provides it. */
export class ElicitationHandler extends Context.Service<ElicitationHandler, Handlers>()(
  "@effect-mcp/client/ElicitationHandler"
) {}

/** Answers the server's elicitation requests with `handlers` (provide it to `McpClient.layer`). */
export const layer = (handlers: Handlers): Layer.Layer<ElicitationHandler> =>
  Layer.succeed(ElicitationHandler, handlers)

/** The `elicitation` capability: the modes this handler serves. */
export const capability = (handlers: Handlers): { readonly [key: string]: object } => ({
  ...(handlers.form === undefined ? {} : { form: {} }),
  ...(handlers.url === undefined ? {} : { url: {} })
})
