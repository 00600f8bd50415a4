/**
 * What the server asks of the client (sampling, elicitation, roots), served
 * by whichever handler Layers were provided. The same answers serve both the
 * stateful revisions' server-to-client requests (the session's handler map)
 * and the 2026-07-28 input requests inside `input_required` results. The
 * capabilities the client declares are derived here, from the same handlers.
 */
import type * as Session from "@effect-mcp/engine/Session"
import * as Elicitation from "@effect-mcp/protocol/Elicitation"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Sampling from "@effect-mcp/protocol/Sampling"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as ElicitationForm from "../ElicitationForm.ts"
import * as ElicitationHandler from "../ElicitationHandler.ts"
import * as RootsHandler from "../RootsHandler.ts"
import * as SamplingHandler from "../SamplingHandler.ts"

export interface Handlers {
  readonly sampling: SamplingHandler.SamplingHandler["Service"] | undefined
  readonly elicitation: ElicitationHandler.ElicitationHandler["Service"] | undefined
  readonly roots: RootsHandler.RootsHandler["Service"] | undefined
}

/** Reads the optional handler services from the context: a missing one means the feature is not offered. */
export const fromContext: Effect.Effect<Handlers> = Effect.gen(function* () {
  const sampling = yield* Effect.serviceOption(SamplingHandler.SamplingHandler)
  const elicitation = yield* Effect.serviceOption(ElicitationHandler.ElicitationHandler)
  const roots = yield* Effect.serviceOption(RootsHandler.RootsHandler)
  return {
    sampling: Option.getOrUndefined(sampling),
    elicitation: Option.getOrUndefined(elicitation),
    roots: Option.getOrUndefined(roots)
  }
})

/** The client capabilities the handlers amount to, on top of the caller's own declarations. */
export const capabilities = (handlers: Handlers, extra: Session.Capabilities | undefined): Session.Capabilities => ({
  ...extra,
  ...(handlers.sampling === undefined ? {} : { sampling: SamplingHandler.capability(handlers.sampling.options) }),
  ...(handlers.elicitation === undefined ? {} : { elicitation: ElicitationHandler.capability(handlers.elicitation) }),
  ...(handlers.roots === undefined ? {} : { roots: handlers.roots.changes === undefined ? {} : { listChanged: true } })
})

const invalidParams = (method: string, error: Schema.SchemaError) =>
  new McpError.InvalidParams({ message: `Invalid params for ${method}: ${error.message}` })

const decodeCreateMessage = Schema.decodeUnknownEffect(Sampling.CreateMessageParams)
const decodeElicit = Schema.decodeUnknownEffect(Elicitation.ElicitParams)

/** An answer the client cannot give: the handler for it is missing or refused. */
const unsupported = (message: string) => new McpError.InvalidParams({ message })

export type Answer = (
  method: string,
  params: unknown
) => Effect.Effect<object, McpError.McpError | ElicitationForm.FormError | RootsHandler.InvalidRoot>

/** Elicitation: runs the mode's handler; an accepted form gets its defaults and is validated before it is sent. */
// Made once (a generator function made per call costs its own generator prototype and map).
const elicit = Effect.fnUntraced(function* (handler: ElicitationHandler.Handlers, params: Elicitation.ElicitParams) {
  if (params.mode === "url") {
    if (handler.url === undefined)
      return yield* unsupported("elicitation/create: this client does not support URL mode")
    const answer = yield* handler.url(params)
    return { action: answer.action } satisfies Elicitation.ElicitResult
  }
  const form = params as Elicitation.ElicitFormParams
  if (handler.form === undefined)
    return yield* unsupported("elicitation/create: this client does not support form mode")
  const answer = yield* handler.form(form)
  if (answer.action !== "accept") return { action: answer.action } satisfies Elicitation.ElicitResult
  const completed = ElicitationForm.complete(form.requestedSchema, answer.content)
  if (Result.isFailure(completed)) return yield* completed.failure
  return { action: "accept", content: completed.success } satisfies Elicitation.ElicitResult
})

export const answerer =
  (handlers: Handlers): Answer =>
  (method, params) => {
    switch (method) {
      case "sampling/createMessage": {
        const sampling = handlers.sampling
        if (sampling === undefined) break
        return decodeCreateMessage(params).pipe(
          Effect.mapError((e) => invalidParams(method, e)),
          Effect.flatMap(sampling.createMessage)
        )
      }
      case "elicitation/create": {
        const elicitation = handlers.elicitation
        if (elicitation === undefined) break
        return decodeElicit(params).pipe(
          Effect.mapError((e) => invalidParams(method, e)),
          Effect.flatMap((p) => elicit(elicitation, p))
        )
      }
      case "roots/list": {
        const roots = handlers.roots
        if (roots === undefined) break
        // The one gate every source passes (a RootsHandler provided by hand too): no invalid root is sent.
        return roots.list.pipe(
          Effect.flatMap(RootsHandler.validate),
          Effect.map((list) => ({ roots: list }))
        )
      }
    }
    return Effect.fail(new McpError.MethodNotFound({ message: `${method}: this client has no handler for it` }))
  }

/** What the server gets when the client's roots are not all `file://` URIs: the offending URI is not sent. */
const invalidRoots = new McpError.InternalError({ message: "roots/list: the client's roots are not all file:// URIs" })

/** The session handler map for stateful revisions: one entry per handler present. */
export const sessionHandlers = (handlers: Handlers, answer: Answer): ReadonlyMap<string, Session.Handler> => {
  const map = new Map<string, Session.Handler>()
  const serve =
    (method: string): Session.Handler =>
    (params) =>
      answer(method, params).pipe(
        // A form answer that fails validation is never sent; the server learns the client could not answer.
        Effect.catchTag("FormError", (e) => Effect.fail(new McpError.InternalError({ message: e.message }))),
        // Nor is a root list with a root that is not file://; the root itself stays here (in the log).
        Effect.catchTag("InvalidRoot", (e) =>
          Effect.andThen(Effect.logWarning(`roots/list not answered: ${e.message}`), Effect.fail(invalidRoots))
        )
      )
  if (handlers.sampling !== undefined) map.set("sampling/createMessage", serve("sampling/createMessage"))
  if (handlers.elicitation !== undefined) map.set("elicitation/create", serve("elicitation/create"))
  if (handlers.roots !== undefined) map.set("roots/list", serve("roots/list"))
  return map
}
