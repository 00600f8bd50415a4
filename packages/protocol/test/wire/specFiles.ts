/**
 * Test fixtures for the wire acceptance tests: where the normative spec data
 * lives in the repository (packages/protocol/spec, see its README), and the
 * generated wire modules keyed by revision.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { ProtocolVersion } from "@effect-mcp/protocol/ProtocolVersion"
import * as v2024_11_05 from "../../src/internal/wire/v2024_11_05.ts"
import * as v2025_03_26 from "../../src/internal/wire/v2025_03_26.ts"
import * as v2025_06_18 from "../../src/internal/wire/v2025_06_18.ts"
import * as v2025_11_25 from "../../src/internal/wire/v2025_11_25.ts"
import * as v2026_07_28 from "../../src/internal/wire/v2026_07_28.ts"

export const specDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../spec")
/** The JSON-RPC messages quoted in the seed spec texts, with revision and origin. */
export const seedExamplesFile = path.join(specDir, "seed-examples.json")

/** JSON Schema as found in schema.json (only the keywords the MCP schemas use). */
export interface JsonSchema {
  readonly $ref?: string
  readonly type?: string | ReadonlyArray<string>
  readonly properties?: Readonly<Record<string, JsonSchema>>
  readonly required?: ReadonlyArray<string>
  readonly additionalProperties?: JsonSchema | boolean
  readonly items?: JsonSchema
  readonly anyOf?: ReadonlyArray<JsonSchema>
  readonly oneOf?: ReadonlyArray<JsonSchema>
  readonly allOf?: ReadonlyArray<JsonSchema>
  readonly const?: unknown
  readonly enum?: ReadonlyArray<unknown>
  readonly description?: string
}

export const readDefinitions = (version: ProtocolVersion): Readonly<Record<string, JsonSchema>> => {
  const raw = JSON.parse(fs.readFileSync(path.join(specDir, version, "schema.json"), "utf8"))
  return raw.$defs ?? raw.definitions
}

/** Every export of each generated wire module (definitions and method tables). */
export const wire: { readonly [V in ProtocolVersion]: Readonly<Record<string, unknown>> } = {
  "2024-11-05": v2024_11_05.definitions(),
  "2025-03-26": v2025_03_26.definitions(),
  "2025-06-18": v2025_06_18.definitions(),
  "2025-11-25": v2025_11_25.definitions(),
  "2026-07-28": v2026_07_28.definitions()
}
