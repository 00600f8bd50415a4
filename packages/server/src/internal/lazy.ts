/**
 * The server's optional machinery, loaded on first use: asking the client
 * (`ask.ts`, with the sampling schemas), the 2026-07-28 input rounds
 * (`inputRounds.ts`) and the client's roots (`rootsList.ts`, with the roots
 * schemas). A server whose handlers never ask, served to clients that never
 * retry with input, loads none of them: they and the protocol modules they
 * pull in are a noticeable part of a start.
 *
 * Each is an Effect that imports its module once and then hands out the
 * loaded module without waiting; only the paths that ask go through them,
 * never a plain call.
 */
import * as Effect from "effect/Effect"
import type * as AskModule from "./ask.ts"
import type * as InputRoundsModule from "./inputRounds.ts"
import type * as RootsListModule from "./rootsList.ts"

/** The module `load` imports, loaded by the first run and handed out at once by every later one. */
const onFirstUse = <A>(load: () => Promise<A>): Effect.Effect<A> => {
  let loaded: A | undefined
  const loading = Effect.map(Effect.promise(load), (module) => (loaded = module))
  return Effect.suspend(() => (loaded === undefined ? loading : Effect.succeed(loaded)))
}

/** `ask.ts`: the params each revision gives an ask, the capability it needs, the stateful ask. */
export const ask: Effect.Effect<typeof AskModule> = onFirstUse(() => import("./ask.ts"))

/** `inputRounds.ts`: a 2026-07-28 handler run in rounds of input requests. */
export const inputRounds: Effect.Effect<typeof InputRoundsModule> = onFirstUse(() => import("./inputRounds.ts"))

/** `rootsList.ts`: the client's roots, asked for and checked. */
export const rootsList: Effect.Effect<typeof RootsListModule> = onFirstUse(() => import("./rootsList.ts"))
