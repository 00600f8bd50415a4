/**
 * Runs one handler with its `ServerRequest`: logging (explicit and Effect's
 * Logger, bridged) filtered by the client's level and delivered in order
 * before the response, progress, and asks routed by revision (session
 * request, or multi-round-trip on 2026-07-28 for the methods that allow it).
 */
import type * as InputRequired from "@effect-mcp/protocol/InputRequired"
import * as Logging from "@effect-mcp/protocol/Logging"
import type * as McpError from "@effect-mcp/protocol/McpError"
import * as Meta from "@effect-mcp/protocol/Meta"
import type * as Revision from "@effect-mcp/protocol/Revision"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import type * as Session from "@effect-mcp/engine/Session"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import {
  type AskMethod,
  type AskOptions,
  ClientRequestError,
  type Retry,
  ServerRequest,
  type ServerRequestShape
} from "../ServerRequest.ts"
import { mayAsk } from "./capabilities.ts"
import type * as InputRounds from "./inputRounds.ts"
import * as Lazy from "./lazy.ts"
import * as Outcome from "./outcome.ts"
import { type Obj, metaOf, paramsOf } from "./params.ts"
import type * as RequestState from "./requestState.ts"

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

const logData = (message: unknown): unknown => {
  const parts = Array.isArray(message) ? message : [message]
  return parts.length === 1 ? parts[0] : parts
}

type Notice = readonly [method: string, params: object]

/**
 * Log notices a request holds for a client that takes them slower than the
 * handler logs: past it, `ServerRequest.log` waits for them to go out, and a
 * line of effect's logger (which cannot wait) is dropped and counted.
 */
const maxQueuedNotices = 1024

/**
 * Bridges effect's logger to the `notifications/message` of the request
 * being served. A session installs it once (its fibers inherit it) instead
 * of every request adding a logger of its own: it finds the request in the
 * logging fiber's context, and outside a handler there is none.
 */
export const bridge: Logger.Logger<unknown, void> = Logger.make((options) => {
  const request = Context.getOrUndefined(options.fiber.context as Context.Context<ServerRequest>, ServerRequest)
  if (!(request instanceof HandlerRequest)) return
  const level = Logging.fromLogLevel(options.logLevel)
  if (level !== undefined) request.enqueue(level, logData(options.message))
})

/** The warning that replaces the lines of effect's logger a request dropped, at the level the client hears. */
const droppedNotice = (count: number, threshold: Logging.LoggingLevel | undefined): object => ({
  level: threshold !== undefined && Logging.isEnabled("warning", threshold) ? "warning" : threshold,
  logger: "effect-mcp",
  data: `${count} log message${count === 1 ? "" : "s"} of this request dropped: the client took them slower than they were logged`
})

/**
 * One request's `ServerRequest` (what a handler's asks, logs and progress go
 * through): a single object per request, its behaviour
 * on the prototype (a bag of closures per request costs more than the rest
 * of a trivial call). Log notices wait in a plain array; a drainer fiber runs
 * only while there are some, so most requests need neither a queue nor a fiber.
 */
class HandlerRequest implements ServerRequestShape {
  readonly method: string
  readonly revision: Revision.RevisionSpec
  readonly version: Revision.RevisionSpec["version"]
  readonly clientCapabilities: Session.Capabilities
  readonly clientInfo: Session.Implementation | undefined
  readonly stateless: boolean
  private readonly threshold: Logging.LoggingLevel | undefined
  private readonly outbox: Array<Notice> = []
  /** Lines of effect's logger dropped since the outbox last emptied (said then, in one warning). */
  private dropped = 0
  drainer: Fiber.Fiber<void> | undefined = undefined
  transportAsk: InputRounds.Ask | undefined = undefined
  ownRounds: InputRounds.Own | undefined = undefined
  private readonly env: Environment
  /**
   * The session serving the request, read once here (in the request's fiber, where `env.session` finds it):
   * a handler may ask or notify from any fiber it starts, whose context need not hold the session.
   */
  private readonly session: Session.SessionShape | undefined
  private readonly info: Session.RequestInfo
  private readonly current: CurrentRequest.CurrentRequestShape
  private readonly context: Context.Context<never>

  constructor(
    env: Environment,
    info: Session.RequestInfo,
    params: unknown,
    current: CurrentRequest.CurrentRequestShape,
    context: Context.Context<never>
  ) {
    const revision = info.revision
    this.env = env
    this.session = env.session
    this.info = info
    this.current = current
    this.context = context
    this.method = info.request.method
    this.revision = revision
    this.version = revision.version
    this.clientCapabilities = info.peerCapabilities
    this.clientInfo = info.peerInfo
    this.stateless = revision.stateless
    if (revision.stateless) {
      const requestLevel = metaOf(params)[Meta.logLevelKey]
      this.threshold = Logging.levels.includes(requestLevel as Logging.LoggingLevel)
        ? (requestLevel as Logging.LoggingLevel)
        : undefined
    } else {
      this.threshold = env.sessionLogLevel() ?? env.defaultLogLevel
    }
  }

  enqueue(level: Logging.LoggingLevel, data: unknown, logger?: string): void {
    const threshold = this.threshold
    if (threshold === undefined || !Logging.isEnabled(level, threshold)) return
    if (this.outbox.length >= maxQueuedNotices) {
      this.dropped++
      return
    }
    this.outbox.push(["notifications/message", logger === undefined ? { level, data } : { level, logger, data }])
    // The drainer starts a tick later, as a forked fiber would.
    if (this.drainer === undefined)
      this.drainer = Effect.runForkWith(this.context)(Effect.andThen(Effect.yieldNow, this.drain))
  }

  private readonly drain: Effect.Effect<void> = Effect.suspend(() => {
    let notice = this.outbox.shift()
    if (notice === undefined && this.dropped > 0) {
      notice = ["notifications/message", droppedNotice(this.dropped, this.threshold)]
      this.dropped = 0
    }
    if (notice === undefined) {
      this.drainer = undefined
      return Effect.void
    }
    return Effect.andThen(Effect.ignore(this.current.notify(notice[0], notice[1])), this.drain)
  })

  log(level: Logging.LoggingLevel, data: unknown, logger?: string): Effect.Effect<void> {
    const enqueue = Effect.sync(() => this.enqueue(level, data, logger))
    // Full: the handler waits until what it logged went out (the transport's own bound makes that wait).
    return Effect.suspend(() => (this.outbox.length < maxQueuedNotices ? enqueue : Effect.andThen(this.flush, enqueue)))
  }

  progress(update: CurrentRequest.ProgressUpdate): Effect.Effect<void> {
    return this.current.progress(update)
  }

  notify(method: string, p: object): Effect.Effect<void> {
    const session = this.session
    return session === undefined || this.stateless ? Effect.void : Effect.ignore(session.notify(method, p))
  }

  ask(method: AskMethod, askParams: object, options?: AskOptions): Effect.Effect<unknown, ClientRequestError> {
    return Effect.flatMap(Lazy.ask, (Ask): Effect.Effect<unknown, ClientRequestError> => {
      const revision = this.revision
      // What the revision cannot carry is refused before what the client did not declare.
      const shaped = Ask.shapeParams(revision, method, askParams as Obj, this.env.newId)
      if (shaped instanceof ClientRequestError) return Effect.fail(shaped)
      const missing = Ask.capabilityError(method, askParams as Obj, this.clientCapabilities)
      if (missing !== undefined) return Effect.fail(missing)
      if (!this.stateless && this.session !== undefined)
        return Ask.viaSession(this.session, this.current.id, method, shaped, options)
      if (this.transportAsk !== undefined) return this.transportAsk(method, shaped, options?.key)
      return Effect.fail(
        new ClientRequestError({
          reason: "NotInRevision",
          method,
          message: `${method}: ${this.info.request.method} cannot ask the client for input on protocol ${revision.version}`
        })
      )
    })
  }

  get retry(): Retry | undefined {
    return this.ownRounds?.retry
  }

  requireInput(
    inputRequests: InputRequired.InputRequests,
    state?: string | undefined
  ): Effect.Effect<never, ClientRequestError> {
    if (this.ownRounds !== undefined) return this.ownRounds.require(inputRequests, state)
    return Effect.fail(
      new ClientRequestError({
        reason: "NotInRevision",
        method: this.method,
        message: `${this.method} cannot ask the client for input by rounds on protocol ${this.version}${this.stateless ? " (the client declared nothing it could be asked)" : ""}`
      })
    )
  }

  /**
   * The context the handler runs in: the request's, with the registrant's
   * services laid over it and this request as its `ServerRequest` (on top:
   * a registrant's own request-scoped services never shadow this request's).
   */
  contextFor(context: Context.Context<never>, services: Overlay): Context.Context<never> {
    let merged = context
    for (let i = 0; i < services.length; i++) {
      const [key, service] = services[i]!
      merged = Context.addUnsafe(merged, key, service)
    }
    return Context.add(merged, ServerRequest, this)
  }

  /**
   * What follows the handler: its log notices reach the client before
   * `onDone`'s response; an interrupted request stops them instead, as it
   * would stop a child fiber.
   */
  after<A, B, E>(interrupted: boolean, onDone: (a: A) => Effect.Effect<B, E>, a: A): Effect.Effect<B, E> {
    const drainer = this.drainer
    if (drainer === undefined) return onDone(a)
    if (interrupted) {
      this.drainer = undefined
      this.outbox.length = 0
      this.dropped = 0
      return Effect.andThen(
        Effect.uninterruptible(Fiber.interrupt(drainer)),
        Effect.suspend(() => onDone(a))
      )
    }
    return Effect.andThen(
      this.flush,
      Effect.suspend(() => onDone(a))
    )
  }

  /** Everything logged during the request reaches the client before its response. */
  readonly flush: Effect.Effect<void> = Effect.suspend(() =>
    this.drainer === undefined ? Effect.void : this.stopDrainer(Fiber.join(this.drainer))
  )

  // A cancelled request stops its drainer, as it would stop a child fiber.
  stopDrainer<X, Y, Z>(effect: Effect.Effect<X, Y, Z>): Effect.Effect<X, Y, Z> {
    return Effect.onInterrupt(effect, () => (this.drainer === undefined ? Effect.void : Fiber.interrupt(this.drainer)))
  }
}

/** Services laid over a request's context for its handler (its registrant's), listed once per registration. */
export type Overlay = ReadonlyArray<readonly [key: string, service: unknown]>

/** What became of a request's handler: its value or failure, or (2026-07-28) a need for client input. */
export type Done<A> = InputRounds.Outcome<Outcome.Caught<A>>

const failCause = <E>(cause: Cause.Cause<E>): Effect.Effect<never, E> => Effect.failCause(cause)

// What the handler's own fiber makes of it on 2026-07-28: a complete outcome, unless interrupted.
const completed = {
  onSuccess: (value: unknown): Effect.Effect<Done<unknown>> =>
    Effect.succeed({ _tag: "Complete", value: { _tag: "Ok", value } }),
  onFailure: (cause: Cause.Cause<unknown>): Effect.Effect<Done<unknown>> => {
    const failed = Outcome.fromCause(cause)
    return failed === undefined
      ? Effect.failCause(cause as Cause.Cause<never>)
      : Effect.succeed({ _tag: "Complete", value: failed })
  }
}

/**
 * Whether a retryable 2026-07-28 request needs its handler run in rounds: it
 * carries input of earlier rounds (to check and use), or the client can be
 * asked something. Otherwise every ask fails before reaching the rounds, and
 * the handler runs like any other, in the request's fiber.
 */
const roundsNeeded = (info: Session.RequestInfo, params: unknown): boolean => {
  if (mayAsk(info.peerCapabilities)) return true
  const p = paramsOf(params)
  return p.inputResponses !== undefined || p.requestState !== undefined
}

/**
 * Runs `body` as the handler of the request described by `info`, with its
 * `ServerRequest` and the `services` of its registrant, and hands what became
 * of it to `onDone`, in the request's own context, after the handler's log
 * notices. On 2026-07-28 a retryable method whose handler asks the client
 * ends in an `InputRequired` outcome instead of a value.
 *
 * The request's fiber runs the handler with its context switched for the
 * duration (restored by the continuation that follows, on every exit) and
 * its failure kept as a value: one continuation per request rather than a
 * stack of combinators, which is most of a trivial call's cost.
 */
export const run = <A, B, E>(
  env: Environment,
  info: Session.RequestInfo,
  params: unknown,
  body: Effect.Effect<A, unknown, unknown>,
  services: Overlay,
  onDone: (done: Done<A>) => Effect.Effect<B, E>
): Effect.Effect<B, E | McpError.InvalidParams, CurrentRequest.CurrentRequest> =>
  Effect.withFiber((fiber): Effect.Effect<B, E | McpError.InvalidParams> => {
    const context = fiber.context
    const request = new HandlerRequest(
      env,
      info,
      params,
      Context.get(context as Context.Context<CurrentRequest.CurrentRequest>, CurrentRequest.CurrentRequest),
      context
    )
    fiber.setContext(request.contextFor(context, services))
    if (request.stateless && retryable.has(info.request.method) && roundsNeeded(info, params)) {
      // The rounds fork the handler's fiber from this context; their own failures (a bad
      // `requestState`) are the request's. They start once the continuation restoring the
      // context is in place: the handler's synchronous part runs when its fiber is forked.
      const rounds = Effect.flatMap(
        Lazy.inputRounds,
        (InputRounds) =>
          InputRounds.run(
            {
              codec: env.codec,
              method: info.request.method,
              params: paramsOf(params),
              body: (ask, own) => {
                request.transportAsk = ask
                request.ownRounds = own
                return Effect.matchCauseEffect(body as Effect.Effect<A, unknown>, completed)
              }
            },
            fiber
          ) as Effect.Effect<Done<A>, McpError.InvalidParams>
      )
      return Effect.matchCauseEffect(rounds, {
        onSuccess: (done) => {
          fiber.setContext(context)
          return request.after(false, onDone, done)
        },
        onFailure: (cause) => {
          fiber.setContext(context)
          return request.after(Cause.hasInterrupts(cause), failCause, cause)
        }
      })
    }
    return Effect.matchCauseEffect(body as Effect.Effect<A, unknown>, {
      onSuccess: (value) => {
        fiber.setContext(context)
        return request.after(false, onDone, { _tag: "Complete", value: { _tag: "Ok", value } })
      },
      onFailure: (cause) => {
        fiber.setContext(context)
        const failed = Outcome.fromCause(cause)
        if (failed === undefined) return request.after(true, failCause, cause as Cause.Cause<never>)
        return request.after(Cause.hasInterrupts(cause), onDone, { _tag: "Complete", value: failed })
      }
    })
  })
