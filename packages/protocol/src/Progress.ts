/**
 * Progress of a long-running request (`notifications/progress`), sent by the
 * receiver of a request whose params carried `_meta.progressToken`.
 *
 * | field     | 2024-11-05 | 2025-03-26 | 2025-06-18 | 2025-11-25 | 2026-07-28 |
 * |-----------|------------|------------|------------|------------|------------|
 * | `message` | -          | yes        | yes        | yes        | yes        |
 * | `_meta`   | -          | -          | -          | yes        | yes        |
 *
 * `progress` must increase with each notification; `total` may be unknown.
 */
import * as Schema from "effect/Schema"
import { NotificationMeta, ProgressToken } from "./Meta.ts"

/** Params of `notifications/progress`. */
export const ProgressParams = Schema.Struct({
  _meta: Schema.optionalKey(NotificationMeta),
  progressToken: ProgressToken,
  progress: Schema.Number,
  total: Schema.optionalKey(Schema.Number),
  message: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "ProgressParams" })
/** Decoded `ProgressParams`. */
export type ProgressParams = typeof ProgressParams.Type
