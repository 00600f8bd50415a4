/**
 * Answers the server's `roots/list`. `layer` keeps a list the application can
 * replace (`RootsList.set`); every change is announced with
 * `notifications/roots/list_changed` on revisions that have it. `layerFrom`
 * wraps any other source.
 */
import type * as McpError from "@effect-mcp/protocol/McpError"
import type * as Roots from "@effect-mcp/protocol/Roots"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Stream from "effect/Stream"

/** Where a client's roots come from. */
export interface RootsHandlerShape {
  readonly list: Effect.Effect<ReadonlyArray<Roots.Root>, McpError.McpError>
  /** Emits whenever the list changed; absent for sources that never change (no `listChanged` declared). */
  readonly changes: Stream.Stream<void> | undefined
}

/** The service a client looks for to answer `roots/list`; `layer` and `layerFrom` provide it. */
export class RootsHandler extends Context.Service<RootsHandler, RootsHandlerShape>()(
  "@effect-mcp/client/RootsHandler"
) {}

/** The in-memory list `layer` keeps: the application reads and replaces it here. */
export class RootsList extends Context.Service<
  RootsList,
  {
    readonly get: Effect.Effect<ReadonlyArray<Roots.Root>>
    /** Replaces the list; the server is told it changed. */
    readonly set: (roots: ReadonlyArray<Roots.Root>) => Effect.Effect<void>
  }
>()("@effect-mcp/client/RootsList") {}

/** A list of roots kept in memory, starting with `initial`, provided with the `RootsList` that edits it. */
export const layer = (initial: ReadonlyArray<Roots.Root>): Layer.Layer<RootsHandler | RootsList> =>
  Layer.effectContext(
    Effect.gen(function* () {
      let roots = initial
      const changed = yield* PubSub.unbounded<void>()
      const get = Effect.sync(() => roots)
      const handler = RootsHandler.of({ list: get, changes: Stream.fromPubSub(changed) })
      const list = RootsList.of({
        get,
        set: (next) =>
          Effect.suspend(() => {
            roots = next
            return PubSub.publish(changed, undefined)
          })
      })
      return Context.make(RootsHandler, handler).pipe(Context.add(RootsList, list))
    })
  )

/** Roots from another source; `changes` (if given) tells when to re-announce them. */
export const layerFrom = (source: {
  readonly list: Effect.Effect<ReadonlyArray<Roots.Root>, McpError.McpError>
  readonly changes?: Stream.Stream<void> | undefined
}): Layer.Layer<RootsHandler> =>
  Layer.succeed(RootsHandler, {
    list: source.list,
    changes: source.changes
  })
