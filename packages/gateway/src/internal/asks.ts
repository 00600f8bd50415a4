/**
 * The host's client-side handlers, as the gateway gives them: an upstream's
 * `sampling/createMessage`, `elicitation/create` and `roots/list` are asked
 * of the downstream client whose call the upstream is serving (see
 * `callers.ts`), on that call's own request (so a Streamable HTTP client gets
 * it on the stream of its call, and cancelling the call ends the ask).
 *
 * The host names the asking upstream to its handlers (`AskingServer`); a
 * connection of the gateway's own (a caller's, see `perCaller.ts`) is to one
 * upstream, which is the one asking.
 */
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as RootsHandler from "@effect-mcp/client/RootsHandler"
import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
import * as AskingServer from "@effect-mcp/host/AskingServer"
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Roots from "@effect-mcp/protocol/Roots"
import type * as Sampling from "@effect-mcp/protocol/Sampling"
import type * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Callers from "./callers.ts"

/** The code the specification's examples use for a request the user rejected. */
const rejectedCode = -1

const noCaller = (method: string, server: string | undefined, miss: Callers.Miss) =>
  new McpError.JsonRpcError({
    code: McpError.Code.InvalidRequest,
    message:
      miss._tag === "None"
        ? `${method}: no call of a downstream client is in flight on ${server === undefined ? "the gateway" : JSON.stringify(server)}`
        : `${method}: ${miss.sessions} downstream clients have calls in flight on ${server === undefined ? "the gateway" : JSON.stringify(server)}; the gateway cannot tell which one is asked`
  })

/** The client capability each ask needs. */
const capabilityOf = {
  "sampling/createMessage": "sampling",
  "elicitation/create": "elicitation",
  "roots/list": "roots"
}

/**
 * The upstream's answer when asking the downstream client failed, its code saying why: the client cannot be asked
 * this (it lacks the capability, or its revision the request) is -32021 naming what it lacks, as an upstream would
 * answer it; a rejection -1; the rest (no answer in time, a malformed one, the session gone) -32603. None of these
 * is the upstream's failure, whatever it answers its caller next (`asCaller` keeps them out of its circuit).
 */
const failed = (method: ServerRequest.AskMethod, error: ServerRequest.ClientRequestError): McpError.McpError => {
  switch (error.reason) {
    case "CapabilityMissing":
    case "NotInRevision":
      return new McpError.MissingRequiredClientCapability({
        message: error.message,
        data: { requiredCapabilities: error.requiredCapabilities ?? { [capabilityOf[method]]: {} } }
      })
    case "Rejected":
      return new McpError.JsonRpcError({ code: rejectedCode, message: error.message })
    default:
      return new McpError.InternalError({ message: error.message })
  }
}

/**
 * An accepted form's answer with only the fields the form asks for. The client answered the upstream's question,
 * and a field it added the upstream would not read; the gateway's own client refuses a form answer with a field the
 * form does not have (every answer to a task's asks at once, 2026-07-28: one `content` may serve several).
 */
const onlyAsked = (
  answer: ElicitationHandler.FormAnswer,
  schema: { readonly properties: { readonly [field: string]: unknown } }
): ElicitationHandler.FormAnswer => {
  if (answer.action !== "accept" || answer.content === undefined) return answer
  const content: Record<string, unknown> = {}
  for (const [field, value] of Object.entries(answer.content)) if (field in schema.properties) content[field] = value
  return { ...answer, content: content as typeof answer.content }
}

/** The handler services asking the callers `callers` tracks for the upstream `asking` names. */
const handlers = (callers: Callers.Callers, asking: Effect.Effect<string | undefined>) => {
  const ask = (method: ServerRequest.AskMethod, params: object) =>
    Effect.flatMap(Effect.all([asking, Effect.service(Callers.Pinned)]), ([server, pinned]) => {
      const found = pinned !== undefined && pinned.server === server ? pinned.caller : callers.pick(server)
      if (!Callers.isCaller(found)) return Effect.fail(noCaller(method, server, found))
      return Effect.mapError(Effect.provideContext(found.request.ask(method, params), found.context), (error) => {
        // The call this ask serves now fails, if it does, for its client's sake, not the upstream's.
        found.askFailed = true
        return failed(method, error)
      })
    })
  const sampling = SamplingHandler.layer(
    (params) => ask("sampling/createMessage", params) as Effect.Effect<Sampling.CreateMessageResult, McpError.McpError>,
    { tools: true, context: true }
  )
  const elicitation = ElicitationHandler.layer({
    form: (params) =>
      Effect.map(
        ask("elicitation/create", params) as Effect.Effect<ElicitationHandler.FormAnswer, McpError.McpError>,
        (answer) => onlyAsked(answer, params.requestedSchema)
      ),
    url: (params) => ask("elicitation/create", params) as Effect.Effect<ElicitationHandler.UrlAnswer, McpError.McpError>
  })
  const roots = RootsHandler.layerFrom({
    list: Effect.map(
      ask("roots/list", {}),
      (answer) => (answer as { readonly roots?: ReadonlyArray<Roots.Root> }).roots ?? []
    )
  })
  return Layer.mergeAll(sampling, elicitation, roots)
}

/** The handler services to build the gateway's host with, asking the callers `callers` tracks. */
export const layer = (callers: Callers.Callers) => handlers(callers, AskingServer.current)

/** The handler services of a connection of the gateway's own to `server` (made without the host). */
export const layerFor = (callers: Callers.Callers, server: string) => handlers(callers, Effect.succeed(server))
