/**
 * Who is waiting on each upstream: the downstream requests the gateway has
 * routed to it and that are still in flight. An upstream's sampling,
 * elicitation or roots request is asked of one of them, never of anyone else.
 *
 * MCP does not say which of its calls a server's request belongs to (no
 * message carries the call's id), so the gateway attributes it by elimination:
 * to the downstream session that has calls in flight on that upstream, when
 * exactly one has. When several have, the request is ambiguous and refused
 * rather than guessed: a form shown to the wrong user is worse than a tool
 * that fails. Requests of one session are grouped by its session id; a
 * request without one (stdio, stateless HTTP) is a caller of its own.
 */
import type * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

/** One downstream request in flight on an upstream. */
export interface Caller {
  /** The downstream session it belongs to (its id), or, for a request without a session, the request itself. */
  readonly key: unknown
  /** The request, to ask its client. */
  readonly request: ServerRequest.ServerRequestShape
  /**
   * The request's context: an ask is made in it, as the server finds the
   * request's session in the context of the fiber asking.
   */
  readonly context: Context.Context<never>
  /**
   * Asking its client failed during the call (asks.ts): how the call ends then says nothing of the upstream's
   * health, and its circuit does not count it.
   */
  askFailed?: boolean
}

/** Why no caller could be chosen: nobody waits on the upstream, or several do. */
export type Miss = { readonly _tag: "None" } | { readonly _tag: "Ambiguous"; readonly sessions: number }

/** The registry; one per gateway. */
export interface Callers {
  /** Runs `effect` with `caller` counted among those waiting on `server`. */
  readonly track: <A, E, R>(server: string, caller: Caller, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * The caller to ask for `server` (any upstream when undefined): the latest
   * request of the one session waiting on it.
   */
  readonly pick: (server: string | undefined) => Caller | Miss
}

export const make = (): Callers => {
  // Per upstream, the callers in flight, in the order they started.
  const waiting = new Map<string, Set<Caller>>()
  const add = (server: string, caller: Caller) => {
    let set = waiting.get(server)
    if (set === undefined) {
      set = new Set()
      waiting.set(server, set)
    }
    set.add(caller)
  }
  const remove = (server: string, caller: Caller) => {
    const set = waiting.get(server)
    set?.delete(caller)
    if (set?.size === 0) waiting.delete(server)
  }
  return {
    track: (server, caller, effect) =>
      Effect.acquireUseRelease(
        Effect.sync(() => add(server, caller)),
        () => effect,
        () => Effect.sync(() => remove(server, caller))
      ),
    pick: (server) => {
      const sets = server === undefined ? [...waiting.values()] : [waiting.get(server) ?? new Set<Caller>()]
      let latest: Caller | undefined
      const sessions = new Set<unknown>()
      for (const set of sets) {
        for (const caller of set) {
          sessions.add(caller.key)
          latest = caller
        }
      }
      if (latest === undefined) return { _tag: "None" }
      return sessions.size === 1 ? latest : { _tag: "Ambiguous", sessions: sessions.size }
    }
  }
}

/**
 * The caller whose work is running, where the work itself answers the upstream's asks (a task's work following
 * an upstream task of the Tasks extension answers its input in its own fiber): asked without elimination, so the
 * calls other sessions have in flight on the upstream (their tasks' work, say) do not make the ask ambiguous.
 */
export const Pinned: Context.Reference<{ readonly server: string; readonly caller: Caller } | undefined> =
  Context.Reference<{ readonly server: string; readonly caller: Caller } | undefined>(
    "@effect-mcp/gateway/internal/callers/Pinned",
    { defaultValue: () => undefined }
  )

/** Whether `pick` found a caller. */
export const isCaller = (found: Caller | Miss): found is Caller => !("_tag" in found)
