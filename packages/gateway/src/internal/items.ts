/**
 * The host's catalog entries as the gateway server's items: each tool,
 * prompt, resource and resource template under its catalog name, its handler
 * routing to the upstream that listed it (upstream.ts: the request counted
 * among that upstream's callers, so its asks and log messages reach it),
 * progress relayed when the downstream client asked for it, reads cached by
 * their hints, and completions asked of the upstream.
 */
import type * as McpClient from "@effect-mcp/client/McpClient"
import type * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as Catalog from "@effect-mcp/host/Catalog"
import type * as McpHost from "@effect-mcp/host/McpHost"
import type * as Completion from "@effect-mcp/protocol/Completion"
import type * as Logging from "@effect-mcp/protocol/Logging"
import * as Meta from "@effect-mcp/protocol/Meta"
import type * as Prompts from "@effect-mcp/protocol/Prompts"
import type * as Resources from "@effect-mcp/protocol/Resources"
import type * as Tools from "@effect-mcp/protocol/Tools"
import type * as Prompt from "@effect-mcp/server/Prompt"
import type * as Resource from "@effect-mcp/server/Resource"
import * as ResourceTemplate from "@effect-mcp/server/ResourceTemplate"
import type * as ServerRequest from "@effect-mcp/server/ServerRequest"
import type * as Task from "@effect-mcp/server/Task"
import type * as Tool from "@effect-mcp/server/Tool"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import type * as CircuitBreaker from "../CircuitBreaker.ts"
import type * as Policy from "../Policy.ts"
import type * as Callers from "./callers.ts"
import type * as CatalogIndex from "./catalogIndex.ts"
import type * as PerCaller from "./perCaller.ts"
import type * as ReadCache from "./readCache.ts"
import * as Rounds from "./rounds.ts"
import * as Tasks from "./tasks.ts"
import { allowed, asCaller, ownClient, passedTool, perCaller, stateless, via } from "./upstream.ts"

export { echo } from "./upstream.ts"

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
  /** Each file of the skills served now (the `SKILL.md` of each among them), by URI, as its upstream's resource (skills.ts). */
  readonly skillFiles: Map<string, Catalog.Entry<Resources.Resource>>
  /** Upstream reads kept by their cache hints (none: every read goes upstream). */
  readonly reads: ReadCache.ReadCache | undefined
  /**
   * The cache hints of the upstream's answer to each downstream read (or of the cached answer served
   * instead, with the time it has left), by its `CurrentRequest`, for the guard that passes them on.
   */
  readonly readHints: WeakMap<object, Resource.Cache>
  /** The upstream each downstream request was routed to, by its `CurrentRequest` (for the audit). */
  readonly routed: WeakMap<object, string>
  /** The downstream `tools/call` requests asking for a task, by their `CurrentRequest` (tasks.ts). */
  readonly tasked: WeakSet<object>
  /** The upstreams whose connection serves the Tasks extension now (kept by the mirror; tasks.ts). */
  readonly extensionTasks: Set<string>
  /** The connections per caller of upstreams that act for their caller (token exchange; none: no such upstream). */
  readonly perCaller: PerCaller.PerCaller | undefined
  /** Discovery mode's index of the catalog's tools (none: the tools are listed). */
  readonly discovery: CatalogIndex.Current | undefined
}

const completer =
  (routes: Routes, item: Policy.Item, ref: Completion.CompletionReference, name: string) =>
  (value: string, context: { readonly arguments: { readonly [name: string]: string } }) =>
    Effect.flatMap(allowed(routes, item), (ok) =>
      // A hidden prompt or template is refused before this (guards.ts `visibility`) but for a URI that a visible
      // template matches too: what the hidden one would complete is never asked.
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

/** A catalog prompt as a policy sees it: under its catalog name, as the gateway lists it. */
export const promptItem = (entry: Catalog.Entry<Prompts.Prompt>): Policy.Item =>
  itemOf("prompt", entry.name, { ...entry, item: { ...entry.item, name: entry.name } })

/** A catalog resource template as a policy sees it. */
export const templateItem = (entry: Catalog.Entry<Resources.ResourceTemplate>): Policy.Item =>
  itemOf("template", entry.item.uriTemplate, entry)

/**
 * A catalog tool as a policy sees it: its definition as the gateway lists it (`execution` only where the
 * upstream runs the tool as a task, see `tool`).
 */
export const toolItem = (entry: Catalog.Entry<Tools.Tool>, support?: Task.TaskSupport | undefined): Policy.Item => {
  const { execution: _, ...definition } = Catalog.toolAsListed(entry)
  return {
    kind: "tool",
    name: entry.name,
    upstream: entry.server,
    definition:
      support === undefined || support === "forbidden"
        ? definition
        : { ...definition, execution: { taskSupport: support } }
  }
}

/**
 * An upstream's tool or prompt result as the gateway's own answer: without what the upstream's envelope said
 * of the upstream. Its `serverInfo` names the software producing the response, which to the downstream client
 * is the gateway (its server writes its own); its `resultType` belongs to the upstream's revision (the
 * gateway's server writes one where the client's revision has it). The rest of `_meta` is the result's.
 */
const relayedResult = <A extends object>(result: A): A => {
  const {
    _meta: meta,
    resultType: _,
    ...rest
  } = result as {
    readonly resultType?: unknown
    readonly _meta?: Meta.Meta
  }
  if (meta === undefined) return rest as A
  const { [Meta.serverInfoKey]: _info, ...kept } = meta
  return (Object.keys(kept).length === 0 ? rest : { ...rest, _meta: kept }) as A
}

/**
 * The options of a tool call relayed upstream: progress restarts its timeout. The call is the downstream
 * client's, which bounds and cancels it itself; an upstream still reporting progress is working, not stuck,
 * and cutting it at the host's timeout would end every long call through the gateway. An upstream that
 * falls silent for the whole timeout still ends the call. (The host has no total bound of its own to keep.)
 */
const relayed: McpHost.CallOptions = { resetTimeoutOnProgress: true }

/**
 * The tool as the gateway serves it. Its arguments go to the upstream as
 * sent (the upstream checks them). A tool its upstream runs as a task takes
 * tasks as the upstream's does (its `taskSupport`): a downstream task is the
 * gateway's, its work the upstream call made as a task (tasks.ts); where the
 * client's revision has no tasks, a plain call (the host follows the task).
 */
export const tool = (routes: Routes, entry: Catalog.Entry<Tools.Tool>): Tool.Tool => {
  const taskSupport = Tasks.supportOf(routes, entry)
  const item = toolItem(entry, taskSupport)
  const definition = item.definition as Tools.Tool
  return {
    name: entry.name,
    definition,
    // The handler decides in the request (refusals before any task is made), the task runs the rest.
    ...(taskSupport === undefined ? {} : { taskSupport, taskCreation: "handler" as const }),
    decode: (args) => Result.succeed(args ?? {}),
    // An upstream's input round ends the request once the call is over (rounds.ts).
    handler: (input) => {
      const args = input as { readonly [key: string]: unknown }
      const call = Effect.flatMap(
        asCaller(routes, item, (request, current) => {
          // A stateless client: the upstream's input rounds pass through when it is stateless too (rounds.ts).
          if (request.stateless) {
            const passed = passedTool(entry, args)
            return stateless(
              routes,
              passed,
              request,
              current,
              (client, options) =>
                plainCall(request, current, client.callTool(entry.item.name, args, options), () =>
                  client.callToolWithProgress(entry.item.name, args, options)
                ),
              relayed
            )
          }
          return plainCall(
            request,
            current,
            via(routes, entry.server, routes.host.callTool(entry.name, args, relayed), (client) =>
              client.callTool(entry.item.name, args, relayed)
            ),
            () =>
              perCaller(routes, entry.server)
                ? Stream.unwrap(
                    Effect.map(ownClient(routes, entry.server), (client) =>
                      client.callToolWithProgress(entry.item.name, args, relayed)
                    )
                  )
                : routes.host.callToolWithProgress(entry.name, args, relayed)
          )
        }),
        Rounds.finish
      )
      if (taskSupport === undefined) return call
      // A downstream task: the upstream call made as a task, through the same gate (tasks.ts).
      const plain = via(routes, entry.server, routes.host.callTool(entry.name, args), (client) =>
        client.callTool(entry.item.name, args)
      )
      return Tasks.handle(routes, item, entry, args, call, plain)
    },
    toResult: (value) => Result.succeed(relayedResult(value as Tools.CallToolResult)),
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

/** The prompt as the gateway serves it; its arguments complete from the upstream. */
export const prompt = (routes: Routes, entry: Catalog.Entry<Prompts.Prompt>): Prompt.Prompt => {
  const ref: Completion.CompletionReference = { type: "ref/prompt", name: entry.item.name }
  const item = promptItem(entry)
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
            const passed = {
              kind: "prompt",
              server: entry.server,
              name: entry.name,
              args: defined,
              params: { name: entry.item.name, arguments: defined }
            } as const
            return stateless(routes, passed, request, current, (client, options) =>
              client.getPrompt(entry.item.name, defined, options)
            )
          }
          return via(routes, entry.server, routes.host.getPrompt(entry.name, defined), (client) =>
            client.getPrompt(entry.item.name, defined)
          )
        }),
        (answer) => Effect.map(Rounds.finish(answer), relayedResult)
      )
  }
}

/** A read from the upstream that listed the item (passed through for a stateless client), the cache consulted first. */
const read = (routes: Routes, item: Policy.Item, uri: string) => {
  const reads = routes.reads
  const upstream = (request: ServerRequest.ServerRequestShape, current: CurrentRequest.CurrentRequestShape) => {
    if (!request.stateless) {
      return via(routes, item.upstream, routes.host.readResource(uri, { server: item.upstream }), (client) =>
        client.readResource(uri)
      )
    }
    const passed = { kind: "resource", server: item.upstream, name: uri, args: undefined, params: { uri } } as const
    return stateless(routes, passed, request, current, (client, options) => client.readResource(uri, options))
  }
  return Effect.flatMap(
    asCaller(
      routes,
      item,
      (request, current) =>
        Effect.flatMap(upstream(request, current), (answer): Effect.Effect<Resource.Contents | Rounds.Round> => {
          if (answer instanceof Rounds.Round) return Effect.succeed(answer)
          const result = answer as Resources.ReadResourceResult
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
        }),
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
    ),
    Rounds.finish
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
  const item = templateItem(entry)
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
