/**
 * The client's roots, asked for when it says they changed: loaded on the
 * first such notice (through `lazy.ts`), with the roots schemas, since most
 * servers have no roots hooks.
 */
import * as Roots from "@effect-mcp/protocol/Roots"
import type * as Session from "@effect-mcp/engine/Session"
import * as Effect from "effect/Effect"
import { type ClientRequestError, decodeAnswer } from "../ServerRequest.ts"
import * as Ask from "./ask.ts"

const decodeRoots = decodeAnswer("roots/list", Roots.ListRootsResult)

/** Asks the client of `session` for its roots (`roots/list`), checked against the schema. */
export const list = (session: Session.SessionShape): Effect.Effect<ReadonlyArray<Roots.Root>, ClientRequestError> =>
  Effect.map(Effect.flatMap(Ask.viaSession(session, undefined, "roots/list", {}), decodeRoots), (r) => r.roots)
