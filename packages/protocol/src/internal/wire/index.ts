/**
 * The generated per-revision wire modules, keyed by revision, and the shape of
 * their method tables (read by Registry.ts). A table holds thunks: a schema is
 * built when a message of its method first needs it.
 */
import type { ProtocolVersion } from "../../ProtocolVersion.ts"
import type { AnyCodec, Sender } from "../../Revision.ts"
import * as v2024_11_05 from "./v2024_11_05.ts"
import * as v2025_03_26 from "./v2025_03_26.ts"
import * as v2025_06_18 from "./v2025_06_18.ts"
import * as v2025_11_25 from "./v2025_11_25.ts"
import * as v2026_07_28 from "./v2026_07_28.ts"

export interface WireNotification {
  readonly method: string
  readonly sender: Sender
  readonly params: () => AnyCodec
  readonly paramsRequired: boolean
}

export interface WireRequest extends WireNotification {
  readonly result: () => AnyCodec
}

export interface WireModule {
  readonly requests: ReadonlyArray<WireRequest>
  readonly notifications: ReadonlyArray<WireNotification>
  readonly inputRequests: ReadonlyArray<WireRequest>
}

export const modules: { readonly [V in ProtocolVersion]: WireModule } = {
  "2024-11-05": v2024_11_05,
  "2025-03-26": v2025_03_26,
  "2025-06-18": v2025_06_18,
  "2025-11-25": v2025_11_25,
  "2026-07-28": v2026_07_28
}
