/**
 * The server's optional machinery: asking the client (`ask.ts`, with the
 * sampling schemas), the 2026-07-28 input rounds (`inputRounds.ts`) and the
 * client's roots (`rootsList.ts`, with the roots schemas), reached only by the
 * paths that ask, never by a plain call.
 *
 * They are imported statically. Loading them on first use (a dynamic
 * `import()`) took ~3% off a stdio server's start, but made the first ask of a
 * process wait on real I/O: a test driving the server on the TestClock
 * (`McpTest.advanceUntilDone`) could run out its virtual steps before the
 * module arrived and hang. Deterministic tests come first; the Effects stay, so
 * a loader can come back behind this interface if it can be made synchronous.
 */
import * as Effect from "effect/Effect"
import * as AskModule from "./ask.ts"
import * as InputRoundsModule from "./inputRounds.ts"
import * as RootsListModule from "./rootsList.ts"

/** `ask.ts`: the params each revision gives an ask, the capability it needs, the stateful ask. */
export const ask: Effect.Effect<typeof AskModule> = Effect.succeed(AskModule)

/** `inputRounds.ts`: a 2026-07-28 handler run in rounds of input requests. */
export const inputRounds: Effect.Effect<typeof InputRoundsModule> = Effect.succeed(InputRoundsModule)

/** `rootsList.ts`: the client's roots, asked for and checked. */
export const rootsList: Effect.Effect<typeof RootsListModule> = Effect.succeed(RootsListModule)
