/**
 * Cursor-based pagination of the list methods.
 *
 * | shape            | 2024-11-05 .. 2025-06-18 | 2025-11-25                | 2026-07-28                   |
 * |------------------|--------------------------|---------------------------|------------------------------|
 * | request `params` | optional, `{ cursor? }`  | optional, `_meta?` added  | required (`_meta` required)  |
 * | result           | `nextCursor?`            | `nextCursor?`             | `nextCursor?` + `resultType` |
 */
import * as Schema from "effect/Schema"
import { resultStruct } from "./internal/result.ts"
import { RequestMeta } from "./Meta.ts"

/** An opaque position in a paginated list. */
export const Cursor = Schema.String.annotate({ identifier: "Cursor" })
export type Cursor = typeof Cursor.Type

/** Params of a list request: an optional cursor. */
export const PaginatedParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  cursor: Schema.optionalKey(Cursor)
}).annotate({ identifier: "PaginatedParams" })
/** Decoded `PaginatedParams`. */
export type PaginatedParams = typeof PaginatedParams.Type

/** The field a paginated result adds (spread into each list result). */
export const paginatedResultFields = { nextCursor: Schema.optionalKey(Cursor) }

/** A page of a list result (each list result adds its items to these fields). */
export const PaginatedResult = resultStruct(paginatedResultFields).annotate({ identifier: "PaginatedResult" })
export type PaginatedResult = typeof PaginatedResult.Type
