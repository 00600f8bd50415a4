/**
 * A downstream request on its upstream: refused as for an item that does not
 * exist when its caller may not see it; else counted among the upstream's
 * callers while it runs (so the upstream's asks and log messages reach it),
 * through the upstream's circuit, on the connection it goes on (the caller's
 * own for an upstream acting for its caller, else the host's); a stateless
 * client's request passed through to a stateless upstream (rounds.ts).
 */
import type * as McpClient from "@effect-mcp/client/McpClient"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Policy from "../Policy.ts"
import type * as Callers from "./callers.ts"
import type { Routes } from "./items.ts"
import * as Rounds from "./rounds.ts"

/** At most this much of a value the client sent, as an error repeats it (as the server's own errors do). */
export const echo = (value: string): string =>
  value.length <= 256 ? value : `${value.slice(0, 256)}... (${value.length} characters)`

/** What a request for an item hidden from its caller answers: the answer for an item that does not exist. */
export const hidden = (item: Policy.Item, uri?: string): McpError.McpError => {
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
export const allowed = (routes: Routes, item: Policy.Item) =>
  routes.policy === undefined
    ? Effect.succeed(true)
    : // A completion outside any request (none in practice) has no principal to hide from.
      Effect.map(
        Effect.serviceOption(CurrentRequest.CurrentRequest),
        (current) => current._tag === "None" || routes.policy!(item, current.value.principal)
      )

/**
 * The connection the current call of `server` goes on, when there is one now: the caller's own (an upstream acting
 * for its caller; the call would fail as this does), else the host's when it is connected (the call itself waits,
 * within its timeout, for one that is not). This and the other per-call steps below are generators made once
 * (`Effect.fnUntraced`): a generator function made per call costs its own generator prototype and map.
 */
const connectionOf = Effect.fnUntraced(function* (routes: Routes, server: string) {
  if (!perCaller(routes, server)) {
    const status = yield* Effect.result(routes.host.status(server))
    if (status._tag === "Failure" || status.success._tag !== "Ready") return undefined
  }
  const client = yield* Effect.result(
    perCaller(routes, server) ? ownClient(routes, server) : routes.host.client(server)
  )
  return client._tag === "Failure" ? undefined : client.success
})

/**
 * Relays the upstream's log messages to the caller while its request runs,
 * when it is the one session waiting on that upstream (as asks are
 * attributed; an ambiguous message is dropped rather than shown to another
 * client). The relay is subscribed before the request is sent: the upstream
 * logs before it answers, so what it logged is relayed before the answer.
 */
const relayLogs = Effect.fnUntraced(function* (
  routes: Routes,
  server: string,
  caller: Callers.Caller
): Effect.fn.Return<void, never, Scope.Scope> {
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
      return found === caller ? caller.request.log(message.level, message.data, message.logger ?? server) : Effect.void
    }),
    Effect.forkScoped
  )
  yield* Deferred.await(subscribed)
})

/**
 * Runs `f` with the current downstream request counted among the upstream's callers, its logs relayed to it,
 * through the upstream's circuit; a request for an item its caller may not see is refused as for one that does not exist.
 */
export const asCaller = Effect.fnUntraced(function* <A, E, R>(
  routes: Routes,
  item: Policy.Item,
  f: (request: ServerRequest.ServerRequestShape, current: CurrentRequest.CurrentRequestShape) => Effect.Effect<A, E, R>,
  uri?: string,
  cached?: (current: CurrentRequest.CurrentRequestShape) => Effect.Effect<A | undefined>
) {
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
  // A call that failed after asking its client failed (the client cannot be asked, did not answer) failed for the
  // client's sake: the upstream answered as it should, and its circuit does not count it.
  const guarded =
    routes.breaker === undefined ? work : routes.breaker.run(server, work, { excused: () => caller.askFailed === true })
  // The caller's own connection, made (or found) once for the call and held by it (the relay and the call share
  // it), outside the circuit: a caller whose token cannot be exchanged says nothing of the upstream's health.
  return yield* perCaller(routes, server) ? Effect.scoped(Effect.andThen(ownClient(routes, server), guarded)) : guarded
})

/** Whether `server` acts for its caller: its requests go through the caller's own connection. */
export const perCaller = (routes: Routes, server: string) => routes.perCaller?.has(server) === true

/** The caller's own connection to `server`, held for the scope. */
export const ownClient = (routes: Routes, server: string) =>
  Effect.flatMap(CurrentRequest.principal, (principal) => routes.perCaller!.client(server, principal))

/** `shared` (through the host), or `own` on the caller's connection when `server` acts for its caller. */
export const via = <A, E, E2>(
  routes: Routes,
  server: string,
  shared: Effect.Effect<A, E>,
  own: (client: McpClient.McpClientShape) => Effect.Effect<A, E2>
) => (perCaller(routes, server) ? Effect.scoped(Effect.flatMap(ownClient(routes, server), own)) : shared)

/** A request of a stateless client: the item it is about (a catalog name, or a URI), and what the upstream is sent. */
export interface Passed {
  readonly kind: "tool" | "prompt" | "resource"
  readonly server: string
  readonly name: string
  readonly args: { readonly [key: string]: unknown } | undefined
  readonly params: { readonly [key: string]: unknown }
}

/** A stateless client's call of the catalog tool `entry` (its name upstream in what is sent). */
export const passedTool = (
  entry: { readonly server: string; readonly name: string; readonly item: { readonly name: string } },
  args: { readonly [key: string]: unknown }
): Passed => ({
  kind: "tool",
  server: entry.server,
  name: entry.name,
  args,
  params: { name: entry.item.name, arguments: args }
})

const methods = { tool: "tools/call", prompt: "prompts/get", resource: "resources/read" } as const

/**
 * A stateless client's request, on the connection it goes on (the caller's own for an upstream acting for its
 * caller, else the host's, routed as the host's requests are): passed through when the upstream is stateless too
 * (rounds.ts: its answer, or its round), else `plain`; `options` are the request's (the host adds its timeout).
 */
export const stateless = <A>(
  routes: Routes,
  passed: Passed,
  request: ServerRequest.ServerRequestShape,
  current: CurrentRequest.CurrentRequestShape,
  plain: (client: McpClient.McpClientShape, options: McpClient.RequestOptions | undefined) => Effect.Effect<A, unknown>,
  options?: McpClient.RequestOptions | undefined
): Effect.Effect<A | Rounds.Round, unknown> => {
  const f = (
    client: McpClient.McpClientShape,
    options: McpClient.RequestOptions | undefined
  ): Effect.Effect<A | Rounds.Round, unknown> =>
    Rounds.passes(request, client)
      ? (Rounds.send(request, current, client, methods[passed.kind], passed.params, options) as Effect.Effect<
          A | Rounds.Round,
          unknown
        >)
      : plain(client, options)
  return perCaller(routes, passed.server)
    ? Effect.scoped(Effect.flatMap(ownClient(routes, passed.server), (client) => f(client, options)))
    : routes.host.route(
        passed.kind,
        passed.name,
        passed.args,
        (client, _, routed) => f(client, routed) as Effect.Effect<A | Rounds.Round, McpClient.CallError>,
        { ...options, server: passed.server }
      )
}
