/**
 * What a client declared it can be asked: read on every retryable request of
 * a stateless revision (whether its handler may ask), so it lives apart from
 * the ask machinery in `ask.ts`, which loads on the first ask.
 */
import type * as Session from "@effect-mcp/engine/Session"
import * as Predicate from "effect/Predicate"

type Obj = { readonly [key: string]: unknown }

/** Whether `capabilities` declares the capability at `path` (each step present and not `false`/`null`). */
export const declared = (capabilities: Session.Capabilities, path: ReadonlyArray<string>): boolean => {
  let node: unknown = capabilities
  for (const key of path) {
    if (!Predicate.isObject(node)) return false
    const next = (node as Obj)[key]
    if (next === undefined || next === null || next === false) return false
    node = next
  }
  return true
}

/** Whether a client with `capabilities` can be asked anything at all (every ask needs one of these). */
export const mayAsk = (capabilities: Session.Capabilities): boolean =>
  declared(capabilities, ["sampling"]) || declared(capabilities, ["elicitation"]) || declared(capabilities, ["roots"])
