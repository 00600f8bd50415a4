/**
 * The generated per-revision wire modules, keyed by revision (read by
 * Registry.ts). A table holds thunks: a schema is built when a message of its
 * method first needs it; the tables' shape is `../wireTable.ts`.
 */
import type { ProtocolVersion } from "../../ProtocolVersion.ts"
import type { WireModule } from "../wireTable.ts"
import * as v2024_11_05 from "./v2024_11_05.ts"
import * as v2025_03_26 from "./v2025_03_26.ts"
import * as v2025_06_18 from "./v2025_06_18.ts"
import * as v2025_11_25 from "./v2025_11_25.ts"
import * as v2026_07_28 from "./v2026_07_28.ts"

export const modules: { readonly [V in ProtocolVersion]: WireModule } = {
  "2024-11-05": v2024_11_05,
  "2025-03-26": v2025_03_26,
  "2025-06-18": v2025_06_18,
  "2025-11-25": v2025_11_25,
  "2026-07-28": v2026_07_28
}
