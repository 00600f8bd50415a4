/**
 * Answers the server's `roots/list`. `layer` keeps a list the application can
 * replace (`RootsList.set`); every change is announced with
 * `notifications/roots/list_changed` on revisions that have it. `layerFrom`
 * wraps any other source.
 *
 * Every root is a `file://` URI (the spec says so from 2024-11-05 on): a root
 * that is not is an `InvalidRoot` where it is given (`RootsList.set`), and
 * the client checks every list it answers with (whatever its source):
 * an invalid list is never sent. The server then gets an `InternalError`
 * (stateful revisions); on 2026-07-28 the call that asked fails with the
 * `InvalidRoot`.
 */
import type * as McpError from "@effect-mcp/protocol/McpError"
import type * as Roots from "@effect-mcp/protocol/Roots"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

/** A root that is not a `file://` URI: roots must be, so the list is refused whole (and never sent). */
export class InvalidRoot extends Schema.TaggedError<InvalidRoot>()("InvalidRoot", {
  /** The offending root's `uri`. */
  uri: Schema.String
}) {
  override get message(): string {
    return `root ${JSON.stringify(this.uri)} is not a file:// URI (MCP roots must be file:// URIs)`
  }
}

/** `file://` (the scheme in any case: schemes are case-insensitive), then no space or control character. */
const isFileUri = (uri: string): boolean => {
  if (uri.slice(0, 7).toLowerCase() !== "file://") return false
  for (let i = 7; i < uri.length; i++) {
    const code = uri.charCodeAt(i)
    if (code <= 0x20 || code === 0x7f) return false
  }
  return true
}

/** Succeeds with `roots` when every root is a `file://` URI; fails with `InvalidRoot` naming the first that is not. */
export const validate = (roots: ReadonlyArray<Roots.Root>): Effect.Effect<ReadonlyArray<Roots.Root>, InvalidRoot> => {
  for (const root of roots) {
    if (typeof root.uri !== "string" || !isFileUri(root.uri))
      return Effect.fail(new InvalidRoot({ uri: String(root.uri) }))
  }
  return Effect.succeed(roots)
}

/** Where a client's roots come from. */
export interface RootsHandlerShape {
  /** The current roots; the client checks them (`validate`) before answering the server. */
  readonly list: Effect.Effect<ReadonlyArray<Roots.Root>, McpError.McpError | InvalidRoot>
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
    /** Replaces the list and tells the server it changed; a list with a root that is not `file://` is refused. */
    readonly set: (roots: ReadonlyArray<Roots.Root>) => Effect.Effect<void, InvalidRoot>
  }
>()("@effect-mcp/client/RootsList") {}

/**
 * A list of roots kept in memory, starting with `initial`, provided with the
 * `RootsList` that edits it. An `initial` list with a root that is not a
 * `file://` URI is never sent: the client refuses to answer with it (see the
 * module's header) until `set` replaces it.
 */
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
          Effect.flatMap(validate(next), (valid) => {
            roots = valid
            return PubSub.publish(changed, undefined)
          })
      })
      return Context.make(RootsHandler, handler).pipe(Context.add(RootsList, list))
    })
  )

/**
 * Roots from another source; `changes` (if given) tells when to re-announce
 * them. The client checks the list each time it answers: one with a root
 * that is not `file://` is not sent (see `validate`).
 */
export const layerFrom = (source: {
  readonly list: Effect.Effect<ReadonlyArray<Roots.Root>, McpError.McpError>
  readonly changes?: Stream.Stream<void> | undefined
}): Layer.Layer<RootsHandler> =>
  Layer.succeed(RootsHandler, {
    list: source.list,
    changes: source.changes
  })
