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
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Logging from "@effect-mcp/protocol/Logging"
import type * as Prompts from "@effect-mcp/protocol/Prompts"
import type * as Resources from "@effect-mcp/protocol/Resources"
import type * as Tools from "@effect-mcp/protocol/Tools"
import type * as Prompt from "@effect-mcp/server/Prompt"
import type * as Resource from "@effect-mcp/server/Resource"
import * as ResourceTemplate from "@effect-mcp/server/ResourceTemplate"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import type * as Tool from "@effect-mcp/server/Tool"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as CircuitBreaker from "../CircuitBreaker.ts"
import type * as Policy from "../Policy.ts"
import type * as Callers from "./callers.ts"
import type * as CatalogIndex from "./catalogIndex.ts"
import type * as PerCaller from "./perCaller.ts"
import type * as ReadCache from "./readCache.ts"
import * as Rounds from "./rounds.ts"

/** What the items' handlers route through. */
export interface Routes {
  readonly host: McpHost.McpHostShape
  readonly callers: Callers.Callers
  /** The level the upstreams are asked to log at. */
  readonly logLevel: Logging.LoggingLevel
  /** The upstream connections told `logLevel` already. */
  readonly leveled: WeakSet<McpClient.McpClientShape>
  /** Who sees what (none: everyone everything). */
  readonly policy: Policy.Policy | undefined
  /** The circuit per upstream (none: no breaker). */
  readonly breaker: CircuitBreaker.CircuitBreaker | undefined
  /** The upstream of each item now, by kind and name (URI for resources, URI template for templates). */
  readonly index: { readonly [K in Policy.Item["kind"]]: Map<string, string> }
  /** Upstream reads kept by their cache hints (none: every read goes upstream). */
  readonly reads: ReadCache.ReadCache | undefined
  /**
   * The cache hints of the upstream's answer to each downstream read (or of the cached answer served
   * instead, with the time it has left), by its `CurrentRequest`, for the guard that passes them on.
   */
  readonly readHints: WeakMap<object, Resource.Cache>
  /** The upstream each downstream request was routed to, by its `CurrentRequest` (for the audit). */
  readonly routed: WeakMap<object, string>
  /** The connections per caller of upstreams that act for their caller (token exchange; none: no such upstream). */
  readonly perCaller: PerCaller.PerCaller | undefined
  /** Discovery mode's index of the catalog's tools (none: the tools are listed). */
  readonly discovery: CatalogIndex.Current | undefined
}

/** At most this much of a value the client sent, as an error repeats it (as the server's own errors do). */
export const echo = (value: string): string =>
  value.length <= 256 ? value : `${value.slice(0, 256)}... (${value.length} characters)`

/** What a request for an item hidden from its caller answers: the answer for an item that does not exist. */
const hidden = (item: Policy.Item, uri?: string): McpError.McpError => {
  switch (item.kind) {
    case "tool":
      return new McpError.InvalidParams({ message: `Unknown tool: ${item.name}` })
    case "prompt":
      return new McpError.InvalidParams({ message: `Unknown prompt: ${item.name}` })
    default:
      return new McpError.ResourceNotFound({ message: "Resource not found", data: { uri: echo(uri ?? item.name) } })
  }
}

/** Whether the current request's principal may see `item`. */
const allowed = (routes: Routes, item: Policy.Item) =>
  routes.policy === undefined
    ? Effect.succeed(true)
    : // A completion outside any request (none in practice) has no principal to hide from.
      Effect.map(
        Effect.serviceOption(CurrentRequest.CurrentRequest),
        (current) => current._tag === "None" || routes.policy!(item, current.value.principal)
      )

/**
 * Relays the upstream's log messages to the caller while its request runs,
 * when it is the one session waiting on that upstream (as asks are
 * attributed; an ambiguous message is dropped rather than shown to another
 * client). The relay is subscribed before the request is sent: the upstream
 * logs before it answers, so what it logged is relayed before the answer.
 */
/**
 * The connection the current call of `server` goes on, when there is one now: the caller's own (an upstream acting
 * for its caller; the call would fail as this does), else the host's when it is connected (the call itself waits,
 * within its timeout, for one that is not).
 */
const connectionOf = (routes: Routes, server: string) =>
  Effect.gen(function* () {
    if (!perCaller(routes, server)) {
      const status = yield* Effect.result(routes.host.status(server))
      if (status._tag === "Failure" || status.success._tag !== "Ready") return undefined
    }
    const client = yield* Effect.result(
      perCaller(routes, server) ? ownClient(routes, server) : routes.host.client(server)
    )
    return client._tag === "Failure" ? undefined : client.success
  })

const relayLogs = (routes: Routes, server: string, caller: Callers.Caller): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const client = yield* connectionOf(routes, server)
    if (client === undefined) return
    // An upstream logs at its own default level until told one (on 2026-07-28, where the level travels with each
    // request, not at all): each connection is told once; the caller's own level filters what is relayed.
    if (client.serverCapabilities.logging !== undefined && !routes.leveled.has(client)) {
      routes.leveled.add(client)
      yield* Effect.ignore(client.setLoggingLevel(routes.logLevel))
    }
    const subscribed = yield* Deferred.make<void>()
    yield* client.logMessages.pipe(
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

/**
 * Runs `f` with the current downstream request counted among the upstream's callers, its logs relayed to it,
 * through the upstream's circuit; a request for an item its caller may not see is refused as for one that does not exist.
 */
const asCaller = <A, E, R>(
  routes: Routes,
  item: Policy.Item,
  f: (request: ServerRequest.ServerRequestShape, current: CurrentRequest.CurrentRequestShape) => Effect.Effect<A, E, R>,
  uri?: string,
  cached?: (current: CurrentRequest.CurrentRequestShape) => Effect.Effect<A | undefined>
) =>
  Effect.gen(function* () {
    const server = item.upstream
    const request = yield* ServerRequest.ServerRequest
    const current = yield* CurrentRequest.CurrentRequest
    if (routes.policy !== undefined && !routes.policy(item, current.principal)) return yield* hidden(item, uri)
    // A fresh cached answer needs no upstream (and counts for nothing in its circuit).
    const hit = cached === undefined ? undefined : yield* cached(current)
    if (hit !== undefined) return hit
    routes.routed.set(current, server)
    // Requests of one session are one caller; a request without a session is a caller of its own.
    const key = current.sessionId ?? request
    const caller: Callers.Caller = { key, request, context: yield* Effect.context<never>() }
    const work = Effect.scoped(
      routes.callers.track(
        server,
        caller,
        Effect.andThen(relayLogs(routes, server, caller), () =>
          // The relay, woken by a log the upstream sent just before its answer, gets its turn before the answer goes.
          Effect.tap(f(request, current), () => Effect.yieldNow)
        )
      )
    )
    const guarded = routes.breaker === undefined ? work : routes.breaker.run(server, work)
    // The caller's own connection, made (or found) once for the call and held by it (the relay and the call share
    // it), outside the circuit: a caller whose token cannot be exchanged says nothing of the upstream's health.
    return yield* perCaller(routes, server)
      ? Effect.scoped(Effect.andThen(ownClient(routes, server), guarded))
      : guarded
  })

/** Whether `server` acts for its caller: its requests go through the caller's own connection. */
const perCaller = (routes: Routes, server: string) => routes.perCaller?.has(server) === true

/** The caller's own connection to `server`, held for the scope. */
const ownClient = (routes: Routes, server: string) =>
  Effect.flatMap(CurrentRequest.principal, (principal) => routes.perCaller!.client(server, principal))

/** `shared` (through the host), or `own` on the caller's connection when `server` acts for its caller. */
const via = <A, E, E2>(
  routes: Routes,
  server: string,
  shared: Effect.Effect<A, E>,
  own: (client: McpClient.McpClientShape) => Effect.Effect<A, E2>
) => (perCaller(routes, server) ? Effect.scoped(Effect.flatMap(ownClient(routes, server), own)) : shared)

const completer =
  (routes: Routes, item: Policy.Item, ref: Completion.CompletionReference, name: string) =>
  (value: string, context: { readonly arguments: { readonly [name: string]: string } }) =>
    Effect.flatMap(allowed(routes, item), (ok) =>
      // A hidden prompt's or template's arguments complete to nothing.
      !ok
        ? Effect.succeed([])
        : Effect.scoped(
            Effect.flatMap(
              perCaller(routes, item.upstream) ? ownClient(routes, item.upstream) : routes.host.client(item.upstream),
              (client) =>
                Effect.map(
                  client.complete(ref, { name, value }, { arguments: context.arguments }),
                  (result) => result.completion.values
                )
            )
          )
    )

/** A catalog entry as a policy sees it. */
export const itemOf = (kind: Policy.Item["kind"], name: string, entry: Catalog.Entry<object>): Policy.Item => ({
  kind,
  name,
  upstream: entry.server,
  definition: entry.item
})

/** A catalog tool as a policy sees it: its definition as the gateway lists it (`execution` dropped, see `tool`). */
export const toolItem = (entry: Catalog.Entry<Tools.Tool>): Policy.Item => {
  const { execution: _, ...definition } = Catalog.toolAsListed(entry)
  return { kind: "tool", name: entry.name, upstream: entry.server, definition }
}

/**
 * The tool as the gateway serves it. Its arguments go to the upstream as
 * sent (the upstream checks them); a tool its upstream runs only as a task is
 * served as a plain call (the host runs the task), so `execution` is dropped.
 */
export const tool = (routes: Routes, entry: Catalog.Entry<Tools.Tool>): Tool.Tool => {
  const item = toolItem(entry)
  const definition = item.definition as Tools.Tool
  return {
    name: entry.name,
    definition,
    decode: (args) => Result.succeed(args ?? {}),
    // An upstream's input round ends the request once the call is over (rounds.ts).
    handler: (input) =>
      Effect.flatMap(
        asCaller(routes, item, (request, current) => {
          const args = input as { readonly [key: string]: unknown }
          // A stateless client: the upstream's input rounds pass through when it is stateless too (rounds.ts).
          if (request.stateless) {
            return stateless(routes, "tool", entry, args, request, current, (client, options) =>
              plainCall(request, current, client.callTool(entry.item.name, args, options), () =>
                client.callToolWithProgress(entry.item.name, args, options)
              )
            )
          }
          return plainCall(
            request,
            current,
            via(routes, entry.server, routes.host.callTool(entry.name, args), (client) =>
              client.callTool(entry.item.name, args)
            ),
            () =>
              perCaller(routes, entry.server)
                ? Stream.unwrap(
                    Effect.map(ownClient(routes, entry.server), (client) =>
                      client.callToolWithProgress(entry.item.name, args)
                    )
                  )
                : routes.host.callToolWithProgress(entry.name, args)
          )
        }),
        Rounds.finish
      ),
    toResult: (value) => Result.succeed(value as Tools.CallToolResult),
    failureResult: () => undefined
  }
}

/** A tool call (`call`), or with progress asked for downstream, asked for upstream (`events`) and relayed. */
const plainCall = <E, E2>(
  request: ServerRequest.ServerRequestShape,
  current: CurrentRequest.CurrentRequestShape,
  call: Effect.Effect<Tools.CallToolResult, E>,
  events: () => Stream.Stream<McpClient.ProgressEvent<Tools.CallToolResult>, E2>
): Effect.Effect<Tools.CallToolResult, E | E2> => {
  if (current.progressToken === undefined) return call
  let result: Tools.CallToolResult | undefined
  return events().pipe(
    Stream.runForEach((event) => {
      if (event._tag === "Progress") return request.progress(event.update)
      result = event.value
      return Effect.void
    }),
    Effect.flatMap(() =>
      result === undefined ? Effect.die("the call ended without a result") : Effect.succeed(result)
    )
  )
}

/**
 * A stateless client's call of the tool or prompt `entry`, on the connection it goes on (the caller's own for an
 * upstream acting for its caller, else the host's, routed as the host's calls are): passed through when the
 * upstream is stateless too (rounds.ts), else `plain`.
 */
const stateless = <A>(
  routes: Routes,
  kind: "tool" | "prompt",
  entry: Catalog.Entry<Tools.Tool | Prompts.Prompt>,
  args: { readonly [key: string]: unknown },
  request: ServerRequest.ServerRequestShape,
  current: CurrentRequest.CurrentRequestShape,
  plain: (client: McpClient.McpClientShape, options: McpClient.RequestOptions | undefined) => Effect.Effect<A, unknown>
): Effect.Effect<A | Rounds.Round, unknown> => {
  const f = (
    client: McpClient.McpClientShape,
    options: McpClient.RequestOptions | undefined
  ): Effect.Effect<A | Rounds.Round, unknown> =>
    Rounds.passes(request, client)
      ? (Rounds.send(
          request,
          current,
          client,
          kind === "tool" ? "tools/call" : "prompts/get",
          { name: entry.item.name, arguments: args },
          options
        ) as Effect.Effect<A | Rounds.Round, unknown>)
      : plain(client, options)
  return perCaller(routes, entry.server)
    ? Effect.scoped(Effect.flatMap(ownClient(routes, entry.server), (client) => f(client, undefined)))
    : routes.host.route(
        kind,
        entry.name,
        args,
        (client, _, options) => f(client, options) as Effect.Effect<A | Rounds.Round, McpClient.CallError>
      )
}

/** The prompt as the gateway serves it; its arguments complete from the upstream. */
export const prompt = (routes: Routes, entry: Catalog.Entry<Prompts.Prompt>): Prompt.Prompt => {
  const ref: Completion.CompletionReference = { type: "ref/prompt", name: entry.item.name }
  const item = itemOf("prompt", entry.name, { ...entry, item: { ...entry.item, name: entry.name } })
  const args: { [name: string]: Prompt.Argument<Tool.Provided> } = {}
  for (const a of entry.item.arguments ?? []) {
    args[a.name] = {
      ...(a.required === undefined ? {} : { required: a.required }),
      complete: completer(routes, item, ref, a.name)
    }
  }
  return {
    name: entry.name,
    definition: { ...entry.item, name: entry.name },
    arguments: args,
    handler: (values) =>
      Effect.flatMap(
        asCaller(routes, item, (request, current) => {
          const defined: { [name: string]: string } = {}
          for (const [k, v] of Object.entries(values)) if (v !== undefined) defined[k] = v
          if (request.stateless) {
            return stateless(routes, "prompt", entry, defined, request, current, (client, options) =>
              client.getPrompt(entry.item.name, defined, options)
            )
          }
          return via(routes, entry.server, routes.host.getPrompt(entry.name, defined), (client) =>
            client.getPrompt(entry.item.name, defined)
          )
        }),
        Rounds.finish
      )
  }
}

const read = (routes: Routes, item: Policy.Item, uri: string) => {
  const reads = routes.reads
  return asCaller(
    routes,
    item,
    (_, current) =>
      Effect.flatMap(
        via(routes, item.upstream, routes.host.readResource(uri, { server: item.upstream }), (client) =>
          client.readResource(uri)
        ),
        (result) => {
          // The upstream's hints, for the guard that passes them on (an upstream before 2026-07-28 gives none).
          if (result.ttlMs !== undefined || result.cacheScope !== undefined) {
            routes.readHints.set(current, { ttlMs: result.ttlMs ?? 0, cacheScope: result.cacheScope ?? "private" })
          }
          return reads === undefined
            ? Effect.succeed(result.contents)
            : Effect.map(Clock.currentTimeMillis, (now) => {
                reads.put(item.upstream, uri, current.principal?.owner, result, now)
                return result.contents
              })
        }
      ),
    uri,
    reads === undefined
      ? undefined
      : (current) =>
          Effect.map(Clock.currentTimeMillis, (now) => {
            const hit = reads.get(item.upstream, uri, current.principal?.owner, now)
            if (hit === undefined) return undefined
            // What is left of the upstream's ttl, never the whole of it again.
            routes.readHints.set(current, { ttlMs: hit.ttlMs, cacheScope: hit.cacheScope })
            return hit.contents
          })
  )
}

/** The resource as the gateway serves it, read from the upstream that listed it. */
export const resource = (routes: Routes, entry: Catalog.Entry<Resources.Resource>): Resource.Resource => ({
  uri: entry.item.uri,
  definition: entry.item,
  read: (uri) => read(routes, itemOf("resource", entry.item.uri, entry), uri),
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
  const item = itemOf("template", entry.item.uriTemplate, entry)
  const complete: { [name: string]: ResourceTemplate.Completer } = {}
  for (const name of variablesOf(entry.item.uriTemplate)) complete[name] = completer(routes, item, ref, name)
  try {
    const made = ResourceTemplate.make({
      ...entry.item,
      complete,
      read: (_variables, uri) => read(routes, item, uri)
    })
    return { ...made, definition: entry.item }
  } catch {
    return undefined
  }
}
