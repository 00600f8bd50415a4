/**
 * Asking the client for its roots from inside a handler (`roots/list`), the
 * same code on every revision.
 */
import * as Roots from "@effect-mcp/protocol/Roots"
import * as Effect from "effect/Effect"
import { type ClientRequestError, decodeAnswer, ServerRequest } from "./ServerRequest.ts"

const decode = decodeAnswer("roots/list", Roots.ListRootsResult)

/** Asks the client for its roots (`roots/list`; an input request on 2026-07-28). */
export const list: Effect.Effect<ReadonlyArray<Roots.Root>, ClientRequestError, ServerRequest> = ServerRequest.use(
  (request) =>
    request.ask("roots/list", {}).pipe(
      Effect.flatMap(decode),
      Effect.map((result) => result.roots)
    )
)
