/**
 * Which server asks: while the host's sampling, elicitation or roots handler
 * answers a server's request, the `AskingServer` service in its context names
 * that server (its name in the `mcpServers` configuration). The host gives
 * every server's connection the same handlers; a handler that answers
 * differently per server (a gateway asking the client whose call that server
 * serves, a UI naming the server in its prompt) reads it with `current`.
 *
 * @example
 * ```ts
 * import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
 * import * as AskingServer from "@effect-mcp/host/AskingServer"
 * import * as Effect from "effect/Effect"
 *
 * export const Sampling = SamplingHandler.layer((params) =>
 *   Effect.map(AskingServer.current, (server) => ({
 *     role: "assistant" as const,
 *     content: { type: "text" as const, text: `${server ?? "someone"} asked ${params.messages.length} messages` },
 *     model: "scripted"
 *   }))
 * )
 * ```
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/** The server whose request a handler is answering. */
export class AskingServer extends Context.Service<AskingServer, { readonly name: string }>()(
  "@effect-mcp/host/AskingServer"
) {}

/** The name of the server whose request is being answered; undefined outside a host's handler. */
export const current: Effect.Effect<string | undefined> = Effect.map(Effect.serviceOption(AskingServer), (asking) =>
  Option.isNone(asking) ? undefined : asking.value.name
)
