import * as Order_ from "effect/Order"
import * as Schema from "effect/Schema"

/** Every MCP revision effect-mcp speaks, oldest first. */
export const all = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"] as const

/** The Schema of a revision effect-mcp speaks. */
export const ProtocolVersion = Schema.Literals(all)
/** A revision effect-mcp speaks. */
export type ProtocolVersion = typeof ProtocolVersion.Type

/** The newest revision effect-mcp speaks. */
export const latest: ProtocolVersion = "2026-07-28"

/** Whether `u` names a revision effect-mcp speaks. */
export const isSupported = (u: unknown): u is ProtocolVersion => (all as ReadonlyArray<unknown>).includes(u)

/** The newest of the given revisions (revision strings order by date), or undefined for none. */
export const newest = (versions: ReadonlyArray<ProtocolVersion>): ProtocolVersion | undefined => {
  let best: ProtocolVersion | undefined
  for (const v of versions) if (best === undefined || v > best) best = v
  return best
}

/** Revisions in release order (oldest first). */
export const Order: Order_.Order<ProtocolVersion> = Order_.mapInput(Order_.Number, (v: ProtocolVersion) =>
  all.indexOf(v)
)

/** Whether `version` is `since` or a later revision. */
export const isAtLeast = (version: ProtocolVersion, since: ProtocolVersion): boolean =>
  Order_.isGreaterThanOrEqualTo(Order)(version, since)
