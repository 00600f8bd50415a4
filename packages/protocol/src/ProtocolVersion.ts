import * as Schema from "effect/Schema"

/** Every MCP revision effect-mcp speaks, oldest first. */
export const all = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"] as const

export const ProtocolVersion = Schema.Literals(all)
export type ProtocolVersion = typeof ProtocolVersion.Type
