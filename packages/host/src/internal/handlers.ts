/**
 * The client-side features, once for all servers: the sampling, elicitation
 * and roots handler services the host was built with, given to every
 * server's client with the consent hooks in front (each hook learns which
 * server asks, and each handler runs with `AskingServer` naming it). A
 * handler the host was not given is not given to any client, so no client
 * declares that capability.
 */
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as RootsHandler from "@effect-mcp/client/RootsHandler"
import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
import type * as Session from "@effect-mcp/engine/Session"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { AskingServer } from "../AskingServer.ts"
import * as Consent from "../Consent.ts"

/** The host's handlers and consent hooks. */
export interface Handlers {
  readonly sampling: SamplingHandler.SamplingHandler["Service"] | undefined
  readonly elicitation: ElicitationHandler.ElicitationHandler["Service"] | undefined
  readonly roots: RootsHandler.RootsHandler["Service"] | undefined
  readonly consent: Consent.ConsentShape
}

/** Reads the optional services from the context. */
export const fromContext: Effect.Effect<Handlers> = Effect.gen(function* () {
  const sampling = yield* Effect.serviceOption(SamplingHandler.SamplingHandler)
  const elicitation = yield* Effect.serviceOption(ElicitationHandler.ElicitationHandler)
  const roots = yield* Effect.serviceOption(RootsHandler.RootsHandler)
  const consent = yield* Effect.serviceOption(Consent.Consent)
  return {
    sampling: Option.getOrUndefined(sampling),
    elicitation: Option.getOrUndefined(elicitation),
    roots: Option.getOrUndefined(roots),
    consent: Option.getOrElse(consent, () => Consent.allowAll)
  }
})

/** The client capabilities the handlers declare (what every connection of the host declares). */
export const capabilities = (handlers: Handlers): Session.Capabilities => ({
  ...(handlers.sampling === undefined ? {} : { sampling: SamplingHandler.capability(handlers.sampling.options) }),
  ...(handlers.elicitation === undefined ? {} : { elicitation: ElicitationHandler.capability(handlers.elicitation) }),
  ...(handlers.roots === undefined ? {} : { roots: handlers.roots.changes === undefined ? {} : { listChanged: true } })
})

// The code the specification's examples use for a sampling request the user rejected.
const rejected = () => new McpError.JsonRpcError({ code: -1, message: "User rejected sampling request" })

/** Provides `server`'s handler services (with consent in front) to `effect`. */
export const provide =
  (handlers: Handlers, server: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
    let out: Effect.Effect<A, E, R> = effect
    const { consent, sampling, elicitation, roots } = handlers
    const asking = { name: server }
    const as = <X, Y>(answer: Effect.Effect<X, Y>) => Effect.provideService(answer, AskingServer, asking)
    if (sampling !== undefined) {
      out = Effect.provideService(out, SamplingHandler.SamplingHandler, {
        options: sampling.options,
        createMessage: (params) =>
          Effect.flatMap(consent.sampling({ server, params }), (approved) =>
            approved ? as(sampling.createMessage(params)) : Effect.fail(rejected())
          )
      }) as Effect.Effect<A, E, R>
    }
    if (elicitation !== undefined) {
      const { form, url } = elicitation
      out = Effect.provideService(out, ElicitationHandler.ElicitationHandler, {
        form:
          form === undefined
            ? undefined
            : (params) =>
                Effect.flatMap(consent.elicitation({ server, params }), (approved) =>
                  approved ? as(form(params)) : Effect.succeed({ action: "decline" as const })
                ),
        url:
          url === undefined
            ? undefined
            : (params) =>
                Effect.flatMap(consent.elicitation({ server, params }), (approved) =>
                  approved ? as(url(params)) : Effect.succeed({ action: "decline" as const })
                )
      }) as Effect.Effect<A, E, R>
    }
    if (roots !== undefined) {
      out = Effect.provideService(out, RootsHandler.RootsHandler, { ...roots, list: as(roots.list) }) as Effect.Effect<
        A,
        E,
        R
      >
    }
    return out
  }
