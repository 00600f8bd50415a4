/**
 * Roots: the directories/files (`file://` URIs) a client exposes to servers.
 *
 * | shape                              | 2024-11-05 .. 2025-03-26 | 2025-06-18 .. 2025-11-25 | 2026-07-28                |
 * |------------------------------------|--------------------------|--------------------------|---------------------------|
 * | `roots/list`                       | server-to-client request | server-to-client request | input request only (no id) |
 * | Root `_meta`                       | -                        | yes                      | yes                       |
 * | ListRootsResult                    | Result (`_meta?` + any)  | Result                   | `{ roots }` only          |
 * | `notifications/roots/list_changed` | yes                      | yes                      | -                         |
 * | client `roots.listChanged`         | yes                      | yes                      | - (`roots: {}`)           |
 */
import * as Schema from "effect/Schema"
import { resultStruct } from "./internal/result.ts"
import { Meta, NotificationParams, RequestParams } from "./Meta.ts"

/** A root: a directory or file the client exposes to the server. */
export const Root = Schema.Struct({
  /** A `file://` URI in current revisions. */
  uri: Schema.String,
  name: Schema.optionalKey(Schema.String),
  _meta: Schema.optionalKey(Meta)
}).annotate({ identifier: "Root" })
/** Decoded `Root`. */
export type Root = typeof Root.Type

/** Params of `roots/list` (only `_meta`). */
export const ListRootsParams = RequestParams
export type ListRootsParams = RequestParams

/** The result of `roots/list`. */
export const ListRootsResult = resultStruct({ roots: Schema.Array(Root) }).annotate({ identifier: "ListRootsResult" })
/** Decoded `ListRootsResult`. */
export type ListRootsResult = typeof ListRootsResult.Type

/** Params of `notifications/roots/list_changed`. */
export const RootsListChangedParams = NotificationParams
export type RootsListChangedParams = NotificationParams
