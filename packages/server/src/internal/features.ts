/**
 * The handlers that run user code: `tools/call`, `resources/read`,
 * `prompts/get` and `completion/complete`. Each looks the item up live,
 * checks its input, runs the handler in a request scope (logging, progress,
 * asks) with the services of the code that registered it, and shapes the
 * result for the negotiated revision.
 */
import * as Completion from "@effect-mcp/protocol/Completion"
import * as McpError from "@effect-mcp/protocol/McpError"
import type { ProtocolVersion } from "@effect-mcp/protocol/ProtocolVersion"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as Defect from "@effect-mcp/engine/Defect"
import type * as Session from "@effect-mcp/engine/Session"
import type * as Cause from "effect/Cause"
import * as Services from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Predicate from "effect/Predicate"
import type * as Resource from "../Resource.ts"
import type * as ResourceTemplate from "../ResourceTemplate.ts"
import { ServerRequest } from "../ServerRequest.ts"
import * as Task from "../Task.ts"
import type * as Tool from "../Tool.ts"
import * as Outcome from "./outcome.ts"
import { echo, type Obj, paramsOf } from "./params.ts"
import * as RequestScope from "./requestScope.ts"
import * as Results from "./results.ts"
import { CurrentEntry, type Registered, type State } from "./server.ts"
import * as Shape from "./shape.ts"
import * as Tasking from "./tasking.ts"

/** What the feature handlers share: the server's state, the request scopes' environment, and result finishing. */
export interface Context {
  readonly server: State
  readonly env: RequestScope.Environment
  /** Adds what every result of `revision` carries (server info in `_meta` on 2026-07-28). */
  readonly finish: <A extends object>(info: Session.RequestInfo, result: A) => A
}

/**
 * How each revision's tools page classifies arguments that fail the input
 * schema: a protocol error (-32602) up to 2025-06-18; from 2025-11-25 an input
 * validation error is a tool execution error (`isError: true`), so the model
 * can read it and correct itself.
 */
const argumentErrors: { readonly [V in ProtocolVersion]: "protocol" | "result" } = {
  "2024-11-05": "protocol",
  "2025-03-26": "protocol",
  "2025-06-18": "protocol",
  "2025-11-25": "result",
  "2026-07-28": "result"
}

const conservative = { ttlMs: 0, cacheScope: "private" } as const

// Each handler is one module-level `Effect.fnUntraced` generator: a generator function created
// per request (an inline `Effect.gen`) costs more than the rest of a trivial call, and one made
// per session costs memory in every session.

// Layer building's own bookkeeping means nothing to a handler, and the services of the request
// being served are that request's: a registration made inside a handler must not carry them.
const notOverlaid: ReadonlySet<string> = new Set([
  "effect/Layer/CurrentMemoMap",
  CurrentRequest.CurrentRequest.key,
  ServerRequest.key,
  CurrentEntry.key
])

/**
 * The registrant's services, listed on a registration's first request rather
 * than on every one; items registered together share their context, so they
 * share the list.
 */
const overlays = new WeakMap<Registered<unknown>["context"], RequestScope.Overlay>()
const overlayOf = (registered: Registered<unknown>): RequestScope.Overlay => {
  let services = overlays.get(registered.context)
  if (services === undefined) {
    services = [...registered.context.mapUnsafe].filter(([key]) => !notOverlaid.has(key))
    overlays.set(registered.context, services)
  }
  return services
}

/** Runs registered user code for the request; `onDone` sees what became of it. */
const runUserCode = <A, B, E>(
  ctx: Context,
  info: Session.RequestInfo,
  params: unknown,
  registered: Registered<unknown>,
  body: Effect.Effect<A, unknown, unknown>,
  onDone: (done: RequestScope.Done<A>) => Effect.Effect<B, E>
) => RequestScope.run(ctx.env, info, params, body, overlayOf(registered), onDone)

const settled = <A>(done: RequestScope.Done<A>): Effect.Effect<RequestScope.Done<A>> => Effect.succeed(done)

export const callTool =
  (ctx: Context): Session.Handler =>
  (params, info) =>
    callToolWith(ctx, params, info)

/**
 * Whether a 2026-07-28 request carries input from earlier rounds (which must
 * be checked even when the handler asks nothing).
 */
const carriesRounds = (info: Session.RequestInfo, p: Obj): boolean =>
  info.revision.stateless && (p.inputResponses !== undefined || p.requestState !== undefined)

// Plain combinators rather than a generator: this is the path every tool call takes.
const callToolWith = (
  ctx: Context,
  params: unknown,
  info: Session.RequestInfo
): Effect.Effect<unknown, McpError.McpError, CurrentRequest.CurrentRequest> => {
  const p = paramsOf(params)
  const name = String(p.name)
  const entry = ctx.server.tools.get(name)
  if (entry === undefined) {
    return Effect.fail(new McpError.InvalidParams({ message: `Unknown tool: ${echo(name)}` }))
  }
  const registered = entry
  const tool = entry.item
  const input = tool.decode(p.arguments)
  if (input._tag === "Failure") {
    const message = `Invalid arguments for tool ${name}: ${input.failure}`
    if (argumentErrors[info.revision.version] === "protocol")
      return Effect.fail(new McpError.InvalidParams({ message }))
    return Effect.succeed(ctx.finish(info, Results.toolError(message)))
  }
  // Most calls never run as tasks: two property reads decide it.
  const taskMode = tool.taskSupport === undefined && p.task === undefined ? "sync" : Tasking.modeOf(info, p, tool)
  if (taskMode !== "sync" && taskMode !== "task") return Effect.fail(taskMode)
  let effect: Effect.Effect<unknown, unknown, unknown>
  try {
    effect = tool.handler(input.success)
  } catch (defect) {
    // A throw while building the effect is a defect of the handler.
    effect = Effect.die(defect)
  }
  if (taskMode === "task" && tool.taskCreation !== "handler") {
    return Effect.withFiber((fiber) =>
      startTask(ctx, info, tool, effect, overlaid(fiber.context as Services.Context<never>, overlayOf(registered)))
    )
  }
  // A handler whose effect is already an outcome (`Effect.succeed`, `Effect.fail`) has nothing to
  // run: it can neither log, report progress, ask the client nor be interrupted, so its result is
  // made here, with no request scope and no fiber work.
  if (Exit.isExit(effect) && !carriesRounds(info, p)) {
    if (effect._tag === "Success") return toolResponse(ctx, info, tool, { _tag: "Ok", value: effect.value })
    const failed = Outcome.fromCause(effect.cause)
    return failed === undefined ? (effect as Exit.Exit<never>) : toolResponse(ctx, info, tool, failed)
  }
  return runUserCode(ctx, info, params, registered, effect, (done) =>
    done._tag === "InputRequired" ? Effect.succeed(done.result) : toolResponse(ctx, info, tool, done.value)
  )
}

const overlaid = (context: Services.Context<never>, services: RequestScope.Overlay): Services.Context<never> => {
  let merged = context
  for (const [key, service] of services) merged = Services.addUnsafe(merged, key, service)
  return merged
}

/**
 * Starts `work` (a tool handler's effect) as a task of the request and
 * answers with the task; its outcome becomes the task's result as it would
 * have been the call's.
 */
const startTask = (
  ctx: Context,
  info: Session.RequestInfo,
  tool: Tool.Tool<unknown>,
  work: Effect.Effect<unknown, unknown, unknown>,
  context: Services.Context<never>
): Effect.Effect<unknown, McpError.McpError> => {
  const outcome = Effect.matchCauseEffect(work as Effect.Effect<unknown, unknown>, {
    onSuccess: (value) => toolResponse(ctx, info, tool, { _tag: "Ok", value }, true),
    onFailure: (cause) => {
      const failed = Outcome.fromCause(cause)
      return failed === undefined
        ? Effect.failCause(cause as Cause.Cause<never>)
        : toolResponse(ctx, info, tool, failed, true)
    }
  }) as Effect.Effect<object, McpError.McpError>
  // The inlined result is the call's own result: on 2026-07-28 it carries `resultType` as the call's would.
  const result = info.revision.stateless
    ? Effect.map(outcome, (value) => ("resultType" in value ? value : { ...value, resultType: "complete" }))
    : outcome
  return Effect.map(Tasking.start(ctx.server, ctx.env.session, info, context, result), (answer) =>
    ctx.finish(info, answer)
  )
}

/** The answer to a tool call whose handler came to `done`. */
const toolResponse = (
  ctx: Context,
  info: Session.RequestInfo,
  tool: Tool.Tool<unknown>,
  done: Outcome.Caught<unknown>,
  inTask = false
): Effect.Effect<unknown, McpError.McpError> => {
  if (done._tag !== "Ok") return toolFailure(ctx, info, tool, done, inTask)
  const result = tool.toResult(done.value)
  if (result._tag === "Failure") {
    return Effect.succeed(ctx.finish(info, Results.toolError(`Tool ${tool.name} failed: ${result.failure}`)))
  }
  return Effect.succeed(
    ctx.finish(info, Shape.callToolResult(info.revision.version, result.success, tool.definition.outputSchema))
  )
}

/**
 * A failed tool's answer: its protocol error; the `isError` result of a
 * failure its failure Schema encodes (its `structuredContent` dropped when
 * the tool has an output schema, which an error does not match: the JSON text
 * carries it); its tag and message; or, for a defect, a correlation id.
 */
const toolFailure = (
  ctx: Context,
  info: Session.RequestInfo,
  tool: Tool.Tool<unknown>,
  done: Exclude<Outcome.Caught<unknown>, { readonly _tag: "Ok" }>,
  inTask: boolean
): Effect.Effect<unknown, McpError.McpError> => {
  if (done._tag === "Failed" && done.error instanceof Task.Background) {
    // `Task.background`: a task where the request can take one, else the work runs here.
    const { work, context } = done.error
    if (!inTask && Tasking.modeOf(info, paramsOf(info.request.params), tool) === "task") {
      return startTask(ctx, info, tool, work, context)
    }
    return Effect.matchCauseEffect(Effect.provideContext(work, context), {
      onSuccess: (value) => toolResponse(ctx, info, tool, { _tag: "Ok", value }, inTask),
      onFailure: (cause) => {
        const failed = Outcome.fromCause(cause)
        return failed === undefined
          ? Effect.failCause(cause as Cause.Cause<never>)
          : toolResponse(ctx, info, tool, failed, inTask)
      }
    })
  }
  if (done._tag === "Died") {
    return Effect.map(Defect.report(done.cause, "tools/call"), (id) =>
      ctx.finish(info, Results.toolError(Defect.messageFor(id)))
    )
  }
  const protocol = Outcome.protocolError(info.revision, done.error)
  if (protocol !== undefined) return Effect.fail(protocol)
  const typed = tool.failureResult(done.error)
  if (typed !== undefined) {
    const outputSchema = tool.definition.outputSchema
    const { structuredContent, ...plain } = typed
    const shaped = outputSchema === undefined ? Shape.callToolResult(info.revision.version, typed, undefined) : plain
    return Effect.succeed(ctx.finish(info, shaped))
  }
  return Effect.succeed(
    ctx.finish(info, Results.toolError(`Tool ${tool.name} failed: ${Outcome.messageOf(done.error)}`))
  )
}

const findTemplate = (ctx: Context, uri: string) => {
  for (const entry of ctx.server.templates.sorted()) {
    const variables = entry.item.match(uri)
    if (variables !== undefined) return { registered: entry, template: entry.item, variables }
  }
  return undefined
}

export const readResource =
  (ctx: Context): Session.Handler =>
  (params, info) =>
    readResourceWith(ctx, params, info)

const readResourceWith = Effect.fnUntraced(function* (ctx: Context, params: unknown, info: Session.RequestInfo) {
  const uri = String(paramsOf(params).uri)
  const version = info.revision.version
  const fixed = ctx.server.resources.get(uri) ?? ctx.server.skillFiles.get(uri)
  let run: Effect.Effect<Resource.Contents, unknown, unknown>
  let registered: Registered<unknown>
  let mimeType: string | undefined
  let cache: Resource.Cache | undefined
  if (fixed !== undefined) {
    const resource = fixed.item
    registered = fixed
    run = Effect.suspend(() => resource.read(uri))
    mimeType = resource.definition.mimeType
    cache = resource.cache
  } else {
    const found = findTemplate(ctx, uri)
    if (found === undefined) {
      return yield* Results.notFound(uri)
    }
    registered = found.registered
    run = Effect.suspend(() => found.template.read(found.variables, uri))
    mimeType = found.template.definition.mimeType
    cache = found.template.cache
  }
  const outcome = yield* runUserCode(ctx, info, params, registered, run, settled)
  if (outcome._tag === "InputRequired") return outcome.result
  const done = outcome.value
  if (done._tag !== "Ok") return yield* Outcome.asProtocolError(info.revision, "resources/read", done)
  const contents = Results.toContents(uri, mimeType, done.value).map((c) => Shape.resourceContents(version, c))
  const hints = cache ?? ctx.server.options.cache?.read ?? conservative
  return ctx.finish(info, Shape.withCacheHints(version, { contents }, hints))
})

export const getPrompt =
  (ctx: Context): Session.Handler =>
  (params, info) =>
    getPromptWith(ctx, params, info)

const getPromptWith = Effect.fnUntraced(function* (ctx: Context, params: unknown, info: Session.RequestInfo) {
  const p = paramsOf(params)
  const name = String(p.name)
  const entry = ctx.server.prompts.get(name)
  if (entry === undefined) {
    return yield* new McpError.InvalidParams({ message: `Unknown prompt: ${echo(name)}` })
  }
  const prompt = entry.item
  const given = (Predicate.isObject(p.arguments) ? p.arguments : {}) as { readonly [key: string]: string }
  const missing = Object.entries(prompt.arguments)
    .filter(([key, spec]) => spec.required === true && typeof given[key] !== "string")
    .map(([key]) => key)
  if (missing.length > 0) {
    return yield* new McpError.InvalidParams({
      message: `Missing required argument(s) for prompt ${name}: ${missing.join(", ")}`,
      data: { missing }
    })
  }
  const values: Record<string, string | undefined> = {}
  for (const key of Object.keys(prompt.arguments)) values[key] = given[key]
  const outcome = yield* runUserCode(
    ctx,
    info,
    params,
    entry,
    Effect.suspend(() => prompt.handler(values)),
    settled
  )
  if (outcome._tag === "InputRequired") return outcome.result
  const done = outcome.value
  if (done._tag !== "Ok") return yield* Outcome.asProtocolError(info.revision, "prompts/get", done)
  const result = Results.promptResult(done.value, prompt.definition.description)
  return ctx.finish(info, {
    ...result,
    messages: result.messages.map((m) => Shape.promptMessage(info.revision.version, m))
  })
})

export const complete =
  (ctx: Context): Session.Handler =>
  (params, info) =>
    completeWith(ctx, params, info)

const completeWith = Effect.fnUntraced(function* (ctx: Context, params: unknown, info: Session.RequestInfo) {
  const p = paramsOf(params)
  const ref = paramsOf(p.ref)
  const argument = paramsOf(p.argument)
  const argumentName = String(argument.name)
  let completer: ResourceTemplate.Completer<Tool.Provided> | undefined
  let registered: Registered<unknown> | undefined
  if (ref.type === "ref/prompt") {
    const entry = ctx.server.prompts.get(String(ref.name))
    if (entry === undefined) {
      return yield* new McpError.InvalidParams({ message: `Unknown prompt: ${echo(String(ref.name))}` })
    }
    registered = entry
    completer = entry.item.arguments[argumentName]?.complete as typeof completer
  } else {
    const uri = String(ref.uri)
    const entry = ctx.server.templates.get(uri)
    const found = entry === undefined ? findTemplate(ctx, uri) : { registered: entry, template: entry.item }
    if (found === undefined) {
      return yield* new McpError.InvalidParams({ message: `Unknown resource template: ${echo(uri)}` })
    }
    registered = found.registered
    completer = found.template.complete[argumentName] as typeof completer
  }
  if (completer === undefined) return ctx.finish(info, { completion: Completion.fromMatches([]) })
  const context = paramsOf(p.context)
  const chosen = (Predicate.isObject(context.arguments) ? context.arguments : {}) as {
    readonly [key: string]: string
  }
  const complete = completer
  const run = Effect.suspend(() => complete(String(argument.value ?? ""), { arguments: chosen }))
  const outcome = yield* runUserCode(ctx, info, params, registered, run, settled)
  if (outcome._tag === "InputRequired") return outcome.result
  const done = outcome.value
  if (done._tag !== "Ok") return yield* Outcome.asProtocolError(info.revision, "completion/complete", done)
  return ctx.finish(info, { completion: Completion.fromMatches(done.value) })
})
