/**
 * Runs one handler with its `ServerRequest`: logging (explicit and Effect's
 * Logger, bridged) filtered by the client's level and delivered in order
 * before the response, progress, and asks routed by revision (session
 * request, or multi-round-trip on 2026-07-28 for the methods that allow it).
 */
import * as Logging from "@effect-mcp/protocol/Logging"
import type * as McpError from "@effect-mcp/protocol/McpError"
import * as Meta from "@effect-mcp/protocol/Meta"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import type * as Session from "@effect-mcp/engine/Session"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as Predicate from "effect/Predicate"
import {
  type AskMethod,
  type AskOptions,
  ClientRequestError,
  ServerRequest,
  type ServerRequestShape
} from "../ServerRequest.ts"
import * as Ask from "./ask.ts"
import * as InputRounds from "./inputRounds.ts"
import type * as RequestState from "./requestState.ts"

type Obj = { readonly [key: string]: unknown }

/** The services a request scope provides to the handler it runs. */
export type Provided = ServerRequest | CurrentRequest.CurrentRequest

/** What the server supplies to every request scope. */
export interface Environment {
  /** The stateful session serving the request, if any. */
  readonly session: Session.SessionShape | undefined
  /** The level set by `logging/setLevel` on this session, if any. */
  readonly sessionLogLevel: () => Logging.LoggingLevel | undefined
  /** The level to use when a stateful client never set one. */
  readonly defaultLogLevel: Logging.LoggingLevel | undefined
  readonly codec: RequestState.Codec
  readonly newId: () => string
}

/** Methods that 2026-07-28 lets answer with `input_required` (their params carry the retry fields). */
export const retryable: ReadonlySet<string> = new Set(["tools/call", "prompts/get", "resources/read"])

const metaOf = (params: unknown): Obj => {
  const meta = Predicate.isObject(params) ? (params as Obj)._meta : undefined
  return Predicate.isObject(meta) ? (meta as Obj) : {}
}

const logData = (message: unknown): unknown => {
  const parts = Array.isArray(message) ? message : [message]
  return parts.length === 1 ? parts[0] : parts
}

type Notice = readonly [method: string, params: object]

/** Where effect's log lines of the request being served go (set by `run` around the handler). */
class LogSink extends Context.Service<LogSink, (level: Logging.LoggingLevel, data: unknown) => void>()(
  "@effect-mcp/server/internal/requestScope/LogSink"
) {}

/**
 * Bridges effect's logger to the `notifications/message` of the request
 * being served. A session installs it once (its fibers inherit it) instead
 * of every request adding a logger of its own: it finds the request's sink
 * in the logging fiber's context, and outside a handler there is none.
 */
export const bridge: Logger.Logger<unknown, void> = Logger.make((options) => {
  const sink = Context.getOrUndefined(options.fiber.context as Context.Context<LogSink>, LogSink)
  if (sink === undefined) return
  const level = Logging.fromLogLevel(options.logLevel)
  if (level !== undefined) sink(level, logData(options.message))
})

/**
 * Runs `body` as the handler of the request described by `info`. On
 * 2026-07-28 a retryable method whose handler asks the client ends in an
 * `InputRequired` outcome instead of a value.
 *
 * One generator function for every request (`fnUntraced`): an inline
 * `Effect.gen` would create a generator function per request, which costs
 * more than the rest of a trivial call.
 */
export const run = Effect.fnUntraced(function* <A, E, R>(
  env: Environment,
  info: Session.RequestInfo,
  params: unknown,
  body: Effect.Effect<A, E, R>
): Effect.fn.Return<
  InputRounds.Outcome<A>,
  E | McpError.InvalidParams,
  Exclude<R, ServerRequest> | CurrentRequest.CurrentRequest
> {
  const current = yield* CurrentRequest.CurrentRequest
  const revision = info.revision
  const stateless = revision.stateless
  const requestLevel = metaOf(params)[Meta.logLevelKey]
  const threshold: Logging.LoggingLevel | undefined = stateless
    ? Logging.levels.includes(requestLevel as Logging.LoggingLevel)
      ? (requestLevel as Logging.LoggingLevel)
      : undefined
    : (env.sessionLogLevel() ?? env.defaultLogLevel)

  // Notices wait in a plain array; a drainer fiber runs only while there are
  // some (most requests log nothing and need neither a queue nor a fiber).
  const outbox: Array<Notice> = []
  const runFork = Effect.runForkWith(yield* Effect.context<never>())
  let drainer: Fiber.Fiber<void> | undefined
  const drain: Effect.Effect<void> = Effect.suspend(() => {
    const notice = outbox.shift()
    if (notice === undefined) {
      drainer = undefined
      return Effect.void
    }
    return Effect.andThen(Effect.ignore(current.notify(notice[0], notice[1])), drain)
  })
  // The drainer starts a tick later, as a forked fiber would.
  const startDrainer = () => runFork(Effect.andThen(Effect.yieldNow, drain))
  const enqueue = (level: Logging.LoggingLevel, data: unknown, logger?: string) => {
    if (threshold === undefined || !Logging.isEnabled(level, threshold)) return
    outbox.push(["notifications/message", logger === undefined ? { level, data } : { level, logger, data }])
    if (drainer === undefined) drainer = startDrainer()
  }

  const askVia =
    (transportAsk: InputRounds.Ask | undefined) => (method: AskMethod, askParams: object, options?: AskOptions) =>
      Effect.suspend((): Effect.Effect<unknown, ClientRequestError> => {
        // What the revision cannot carry is refused before what the client did not declare.
        const shaped = Ask.shapeParams(revision, method, askParams as Obj, env.newId)
        if (shaped instanceof ClientRequestError) return Effect.fail(shaped)
        const missing = Ask.capabilityError(method, askParams as Obj, info.peerCapabilities)
        if (missing !== undefined) return Effect.fail(missing)
        if (!stateless && env.session !== undefined) return Ask.viaSession(env.session, current.id, method, shaped)
        if (transportAsk !== undefined) return transportAsk(method, shaped, options?.key)
        return Effect.fail(
          new ClientRequestError({
            reason: "NotInRevision",
            method,
            message: `${method}: ${info.request.method} cannot ask the client for input on protocol ${revision.version}`
          })
        )
      })

  const requestFor = (transportAsk: InputRounds.Ask | undefined): ServerRequestShape => ({
    method: info.request.method,
    revision,
    version: revision.version,
    clientCapabilities: info.peerCapabilities,
    clientInfo: info.peerInfo,
    stateless,
    ask: askVia(transportAsk),
    log: (level, data, logger) => Effect.sync(() => enqueue(level, data, logger)),
    progress: (update) => current.progress(update),
    notify: (method, p) =>
      env.session === undefined || stateless ? Effect.void : Effect.ignore(env.session.notify(method, p))
  })

  // The request and its log sink, laid over the context in one step.
  const provide = <X, Y>(effect: Effect.Effect<X, Y, R>, transportAsk: InputRounds.Ask | undefined) =>
    Effect.updateContext(effect as Effect.Effect<X, Y, ServerRequest | LogSink>, (context: Context.Context<never>) =>
      Context.add(Context.add(context, ServerRequest, requestFor(transportAsk)), LogSink, enqueue)
    ) as Effect.Effect<X, Y, Exclude<R, ServerRequest>>

  // A cancelled request stops its drainer, as it would stop a child fiber.
  const stopDrainer = Effect.onInterrupt(() => (drainer === undefined ? Effect.void : Fiber.interrupt(drainer)))
  const outcome = yield* Effect.exit(
    stateless && retryable.has(info.request.method)
      ? InputRounds.run({
          codec: env.codec,
          method: info.request.method,
          params: (Predicate.isObject(params) ? params : {}) as Obj,
          body: (ask) => provide(body, ask)
        })
      : Effect.map(provide(body, undefined), (value): InputRounds.Outcome<A> => ({ _tag: "Complete", value }))
  ).pipe(stopDrainer)
  // Everything logged during the request reaches the client before its response.
  if (drainer !== undefined) yield* stopDrainer(Fiber.join(drainer))
  return yield* outcome
})
