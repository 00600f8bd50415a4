/**
 * The client's roots: asking for them from inside a handler (`roots/list`,
 * the same code on every revision), and hearing when they change
 * (`notifications/roots/list_changed`, which stateful clients that declare
 * `roots.listChanged` send).
 */
import * as Roots from "@effect-mcp/protocol/Roots"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { McpServer, type RootsChange } from "./McpServer.ts"
import { type AskOptions, type ClientRequestError, decodeAnswer, ServerRequest } from "./ServerRequest.ts"

const decode = decodeAnswer("roots/list", Roots.ListRootsResult)

/** Asks the client for its roots with options (an input-request key, a timeout, a progress handler). */
export const listWith = (
  options: AskOptions
): Effect.Effect<ReadonlyArray<Roots.Root>, ClientRequestError, ServerRequest> =>
  ServerRequest.use((request) =>
    request.ask("roots/list", {}, options).pipe(
      Effect.flatMap(decode),
      Effect.map((result) => result.roots)
    )
  )

/** Asks the client for its roots (`roots/list`; an input request on 2026-07-28). */
export const list: Effect.Effect<ReadonlyArray<Roots.Root>, ClientRequestError, ServerRequest> = listWith({})

/**
 * Runs `hook` each time a client says its roots changed, for as long as the
 * current scope lasts. The hook runs with the services of the code that
 * registered it, in a fiber of its own (a slow hook holds up no session);
 * `change.list` asks that client for its new roots.
 *
 * @example
 * ```ts
 * import * as Roots from "@effect-mcp/server/Roots"
 * import * as Effect from "effect/Effect"
 *
 * export const WatchRoots = Roots.layerOnListChanged((change) =>
 *   change.list.pipe(
 *     Effect.flatMap((roots) => Effect.log(`${change.clientInfo?.name} now has ${roots.length} roots`)),
 *     Effect.ignore
 *   )
 * )
 * ```
 */
export const onListChanged = <R>(
  hook: (change: RootsChange) => Effect.Effect<void, never, R>
): Effect.Effect<void, never, McpServer | R | Scope.Scope> =>
  Effect.gen(function* () {
    const server = yield* McpServer
    const context = yield* Effect.context<R>()
    yield* server.onRootsListChanged((change) => Effect.provideContext(hook(change), context))
  })

/** A Layer running `hook` on every roots change for as long as it lives (see `onListChanged`). */
export const layerOnListChanged = <R>(
  hook: (change: RootsChange) => Effect.Effect<void, never, R>
): Layer.Layer<never, never, McpServer | R> => Layer.effectDiscard(onListChanged(hook))
