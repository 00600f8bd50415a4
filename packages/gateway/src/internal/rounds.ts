/**
 * 2026-07-28 input rounds passed through. When the downstream request and
 * the upstream's connection both speak a stateless revision, the upstream's
 * `input_required` rounds reach the client as they came: its own keys, every
 * ask of a round at once. The client's retry becomes the upstream's retry:
 * its `inputResponses` as sent, and the upstream's `requestState`, which the
 * gateway carries sealed in its own (`ServerRequest.requireInput`), bound to
 * the request, so a retry reaching any replica with the same request-state
 * keys continues the same upstream round (the upstream's state goes back to
 * the upstream that issued it, never to another). The upstream is told the
 * client's own ask capabilities, so what the client cannot answer the
 * upstream refuses itself (-32021), as it would the client directly.
 *
 * When either side is stateful the asks travel as `asks.ts` says: requests
 * on the downstream session, or the gateway's own rounds (the upstream call
 * made again on the retry) for a stateless client of a stateful upstream.
 */
import type * as McpClient from "@effect-mcp/client/McpClient"
import type * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as ProgressStream from "@effect-mcp/engine/ProgressStream"
import * as Apps from "@effect-mcp/protocol/Apps"
import * as InputRequired from "@effect-mcp/protocol/InputRequired"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Meta from "@effect-mcp/protocol/Meta"
import * as Tasks from "@effect-mcp/protocol/Tasks"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Predicate from "effect/Predicate"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

type Obj = { readonly [key: string]: unknown }

/** The capabilities through which a server asks its client: the client's own pass on, the gateway's do not. */
const askCapabilities = ["sampling", "elicitation", "roots"]

/** The extensions whose declaration is the client's own, passed on as the ask capabilities are. */
const clientExtensions = [Apps.extensionId]

/** Whether a request passes its rounds through: both sides stateless. */
export const passes = (request: ServerRequest.ServerRequestShape, client: McpClient.McpClientShape): boolean =>
  request.stateless && client.session.state.revision?.stateless === true

/**
 * The capabilities the upstream is told: the gateway's, with the client's own in place of its ask capabilities,
 * and without the Tasks extension unless the client declared it: a call passed through is one the client did not
 * make a task of (the gateway's tasks are made in tasks.ts), so the upstream answers it as it would the client,
 * its result (a tool that takes tasks only: its -32021).
 * The MCP Apps extension is the client's too: the client, not the gateway, renders the UI the upstream's tool
 * names, so the upstream's tool asking whether its client renders apps is answered for the client.
 */
const capabilitiesFor = (request: ServerRequest.ServerRequestShape, client: McpClient.McpClientShape) => {
  const own: Record<string, unknown> = { ...(client.session.state.declared as Obj | undefined) }
  const downstream = request.clientCapabilities as Obj
  for (const name of askCapabilities) {
    if (downstream[name] === undefined) delete own[name]
    else own[name] = downstream[name]
  }
  const extensions: Record<string, unknown> = Predicate.isObject(own.extensions) ? { ...(own.extensions as Obj) } : {}
  const theirs: Obj = Predicate.isObject(downstream.extensions) ? (downstream.extensions as Obj) : {}
  if (!(Tasks.extensionId in theirs)) delete extensions[Tasks.extensionId]
  for (const id of clientExtensions) {
    if (theirs[id] === undefined) delete extensions[id]
    else extensions[id] = theirs[id]
  }
  if (Object.keys(extensions).length > 0) own.extensions = extensions
  else delete own.extensions
  return own
}

const decodeInputRequired = Schema.decodeUnknownEffect(InputRequired.InputRequiredResult)

const malformed = (method: string, message: string) =>
  new McpError.InternalError({ message: `${method}: the upstream's input_required result is malformed: ${message}` })

/**
 * An upstream's `input_required` round, as the call that got it returns it: the downstream request ends with it
 * (`finish`) once the call is over, so that the upstream's circuit and the audit see an answer, not an interruption.
 */
export class Round {
  readonly round: InputRequired.InputRequiredResult
  constructor(round: InputRequired.InputRequiredResult) {
    this.round = round
  }
}

/** The downstream request's end: with the upstream's round (`requireInput`), or with the upstream's answer. */
export const finish = <A>(answer: A | Round): Effect.Effect<A, McpError.McpError, ServerRequest.ServerRequest> =>
  answer instanceof Round
    ? ServerRequest.ServerRequest.use((request) =>
        Effect.mapError(
          request.requireInput(answer.round.inputRequests ?? {}, answer.round.requestState),
          (e) => new McpError.InternalError({ message: e.message })
        )
      )
    : Effect.succeed(answer)

/**
 * Sends `method` with `params` to the upstream once, the retry fields of the
 * downstream request in place of any of the gateway's: the upstream's complete
 * answer (its `resultType` the gateway's server's to write), its task (as it
 * came, `resultType: "task"`), or its round.
 * Progress is relayed to `current` when its client asked for it.
 */
export const send = (
  request: ServerRequest.ServerRequestShape,
  current: CurrentRequest.CurrentRequestShape,
  client: McpClient.McpClientShape,
  method: string,
  params: Obj,
  options: McpClient.RequestOptions | undefined
): Effect.Effect<unknown, McpClient.CallError | McpError.McpError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const retry = request.retry
      const meta = Predicate.isObject(params._meta) ? (params._meta as Obj) : {}
      const sent = {
        ...params,
        ...(retry === undefined || Object.keys(retry.inputResponses).length === 0
          ? {}
          : { inputResponses: retry.inputResponses }),
        ...(retry?.state === undefined ? {} : { requestState: retry.state }),
        _meta: { ...meta, [Meta.clientCapabilitiesKey]: capabilitiesFor(request, client) }
      }
      // Progress goes through a queue drained in order, before the answer is given.
      let relay:
        | { readonly queue: Queue.Queue<CurrentRequest.ProgressUpdate, Cause.Done>; readonly fiber: Fiber.Fiber<void> }
        | undefined
      if (current.progressToken !== undefined) {
        // Bounded as a progress Stream is: a client reading slower than the server reports keeps the newest.
        const queue = yield* Queue.sliding<CurrentRequest.ProgressUpdate, Cause.Done>(ProgressStream.maxBuffered)
        const fiber = yield* Effect.forkScoped(
          Stream.runForEach(Stream.fromQueue(queue), (update) => request.progress(update))
        )
        relay = { queue, fiber }
      }
      const result = yield* client.requestOnce(method, sent, {
        ...options,
        ...(relay === undefined ? {} : { onProgress: (update) => void Queue.offerUnsafe(relay.queue, update) })
      })
      if (relay !== undefined) {
        Queue.endUnsafe(relay.queue)
        yield* Fiber.join(relay.fiber)
      }
      if (!Predicate.isObject(result)) return result
      const { resultType, ...complete } = result as Obj
      // A task the upstream made (the client declared the Tasks extension): tasks.ts follows it.
      if (resultType === "task") return result
      if (resultType !== "input_required") return complete
      return new Round(yield* Effect.mapError(decodeInputRequired(result), (e) => malformed(method, e.message)))
    })
  )
