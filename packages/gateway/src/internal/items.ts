/**
 * The host's catalog entries as the gateway server's items: each tool,
 * prompt, resource and resource template under its catalog name, its handler
 * routing to the upstream that listed it, with the downstream request counted
 * among that upstream's callers while it runs (so the upstream's asks reach
 * it, and its log messages reach it), progress relayed when the downstream
 * client asked for it, and completions asked of the upstream.
 */
import type * as McpClient from "@effect-mcp/client/McpClient"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as Catalog from "@effect-mcp/host/Catalog"
import type * as McpHost from "@effect-mcp/host/McpHost"
import type * as Completion from "@effect-mcp/protocol/Completion"
import type * as Logging from "@effect-mcp/protocol/Logging"
import type * as Prompts from "@effect-mcp/protocol/Prompts"
import type * as Resources from "@effect-mcp/protocol/Resources"
import type * as Tools from "@effect-mcp/protocol/Tools"
import type * as Prompt from "@effect-mcp/server/Prompt"
import type * as Resource from "@effect-mcp/server/Resource"
import * as ResourceTemplate from "@effect-mcp/server/ResourceTemplate"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import type * as Tool from "@effect-mcp/server/Tool"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Callers from "./callers.ts"

/** What the items' handlers route through. */
export interface Routes {
  readonly host: McpHost.McpHostShape
  readonly callers: Callers.Callers
  /** The level the upstreams are asked to log at. */
  readonly logLevel: Logging.LoggingLevel
  /** The upstream connections told `logLevel` already. */
  readonly leveled: WeakSet<McpClient.McpClientShape>
}

/**
 * Relays the upstream's log messages to the caller while its request runs,
 * when it is the one session waiting on that upstream (as asks are
 * attributed; an ambiguous message is dropped rather than shown to another
 * client). The relay is subscribed before the request is sent: the upstream
 * logs before it answers, so what it logged is relayed before the answer.
 */
const relayLogs = (routes: Routes, server: string, caller: Callers.Caller): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    // Only a connected upstream has a client to follow; the call itself waits (within its timeout) for one that is not.
    const status = yield* Effect.result(routes.host.status(server))
    if (status._tag === "Failure" || status.success._tag !== "Ready") return
    const client = yield* Effect.result(routes.host.client(server))
    if (client._tag === "Failure") return
    // An upstream logs at its own default level until told one (on 2026-07-28, where the level travels with each
    // request, not at all): each connection is told once; the caller's own level filters what is relayed.
    if (client.success.serverCapabilities.logging !== undefined && !routes.leveled.has(client.success)) {
      routes.leveled.add(client.success)
      yield* Effect.ignore(client.success.setLoggingLevel(routes.logLevel))
    }
    const subscribed = yield* Deferred.make<void>()
    yield* client.success.logMessages.pipe(
      Stream.onStart(Deferred.succeed(subscribed, undefined)),
      Stream.runForEach((message) => {
        const found = routes.callers.pick(server)
        return found === caller
          ? caller.request.log(message.level, message.data, message.logger ?? server)
          : Effect.void
      }),
      Effect.forkScoped
    )
    yield* Deferred.await(subscribed)
  })

/** Runs `f` with the current downstream request counted among `server`'s callers, its logs relayed to it. */
const asCaller = <A, E, R>(
  routes: Routes,
  server: string,
  f: (request: ServerRequest.ServerRequestShape, current: CurrentRequest.CurrentRequestShape) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function* () {
    const request = yield* ServerRequest.ServerRequest
    const current = yield* CurrentRequest.CurrentRequest
    // Requests of one session are one caller; a request without a session is a caller of its own.
    const key = current.sessionId ?? request
    const caller: Callers.Caller = { key, request, context: yield* Effect.context<never>() }
    return yield* Effect.scoped(
      routes.callers.track(
        server,
        caller,
        Effect.andThen(relayLogs(routes, server, caller), () =>
          // The relay, woken by a log the upstream sent just before its answer, gets its turn before the answer goes.
          Effect.tap(f(request, current), () => Effect.yieldNow)
        )
      )
    )
  })

const completer =
  (routes: Routes, server: string, ref: Completion.CompletionReference, name: string) =>
  (value: string, context: { readonly arguments: { readonly [name: string]: string } }) =>
    Effect.flatMap(routes.host.client(server), (client) =>
      Effect.map(
        client.complete(ref, { name, value }, { arguments: context.arguments }),
        (result) => result.completion.values
      )
    )

/**
 * The tool as the gateway serves it. Its arguments go to the upstream as
 * sent (the upstream checks them); a tool its upstream runs only as a task is
 * served as a plain call (the host runs the task), so `execution` is dropped.
 */
export const tool = (routes: Routes, entry: Catalog.Entry<Tools.Tool>): Tool.Tool => {
  const { execution: _, ...definition } = Catalog.toolAsListed(entry)
  return {
    name: entry.name,
    definition,
    decode: (args) => Result.succeed(args ?? {}),
    handler: (input) =>
      asCaller(routes, entry.server, (request, current) => {
        const args = input as { readonly [key: string]: unknown }
        if (current.progressToken === undefined) return routes.host.callTool(entry.name, args)
        // Progress asked for downstream is asked for upstream, and each update relayed as it comes.
        let result: Tools.CallToolResult | undefined
        return routes.host.callToolWithProgress(entry.name, args).pipe(
          Stream.runForEach((event) => {
            if (event._tag === "Progress") return request.progress(event.update)
            result = event.value
            return Effect.void
          }),
          Effect.flatMap(() =>
            result === undefined ? Effect.die("the call ended without a result") : Effect.succeed(result)
          )
        )
      }),
    toResult: (value) => Result.succeed(value as Tools.CallToolResult),
    failureResult: () => undefined
  }
}

/** The prompt as the gateway serves it; its arguments complete from the upstream. */
export const prompt = (routes: Routes, entry: Catalog.Entry<Prompts.Prompt>): Prompt.Prompt => {
  const ref: Completion.CompletionReference = { type: "ref/prompt", name: entry.item.name }
  const args: { [name: string]: Prompt.Argument<Tool.Provided> } = {}
  for (const a of entry.item.arguments ?? []) {
    args[a.name] = {
      ...(a.required === undefined ? {} : { required: a.required }),
      complete: completer(routes, entry.server, ref, a.name)
    }
  }
  return {
    name: entry.name,
    definition: { ...entry.item, name: entry.name },
    arguments: args,
    handler: (values) =>
      asCaller(routes, entry.server, () => {
        const defined: { [name: string]: string } = {}
        for (const [k, v] of Object.entries(values)) if (v !== undefined) defined[k] = v
        return routes.host.getPrompt(entry.name, defined)
      })
  }
}

const read = (routes: Routes, server: string, uri: string) =>
  asCaller(routes, server, () => Effect.map(routes.host.readResource(uri, { server }), (result) => result.contents))

/** The resource as the gateway serves it, read from the upstream that listed it. */
export const resource = (routes: Routes, entry: Catalog.Entry<Resources.Resource>): Resource.Resource => ({
  uri: entry.item.uri,
  definition: entry.item,
  read: (uri) => read(routes, entry.server, uri),
  cache: undefined
})

// The variable names of an RFC 6570 template: `{a}`, `{+a}`, `{?a,b*}`, `{/a:3}`.
const variablesOf = (template: string): ReadonlyArray<string> =>
  [...template.matchAll(/\{[+#./;?&]?([^}]*)\}/g)].flatMap((m) =>
    m[1]!.split(",").map((v) => v.replace(/(\*|:\d+)$/, ""))
  )

/**
 * The resource template as the gateway serves it, or undefined when the
 * server cannot parse it (it is left out); its variables complete from the upstream.
 */
export const template = (
  routes: Routes,
  entry: Catalog.Entry<Resources.ResourceTemplate>
): ResourceTemplate.ResourceTemplate | undefined => {
  const ref: Completion.CompletionReference = { type: "ref/resource", uri: entry.item.uriTemplate }
  const complete: { [name: string]: ResourceTemplate.Completer } = {}
  for (const name of variablesOf(entry.item.uriTemplate)) complete[name] = completer(routes, entry.server, ref, name)
  try {
    const made = ResourceTemplate.make({
      ...entry.item,
      complete,
      read: (_variables, uri) => read(routes, entry.server, uri)
    })
    return { ...made, definition: entry.item }
  } catch {
    return undefined
  }
}
