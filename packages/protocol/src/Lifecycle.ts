/**
 * Who the peers are and what they can do: implementation info, capabilities,
 * the `initialize` handshake (2024-11-05 .. 2025-11-25) and the stateless
 * `server/discover` of 2026-07-28.
 *
 * | field                                   | 2024-11-05 | 2025-03-26 | 2025-06-18 | 2025-11-25 | 2026-07-28 |
 * |-----------------------------------------|------------|------------|------------|------------|------------|
 * | Implementation `title`                  | -          | -          | yes        | yes        | yes        |
 * | Implementation `description`, `icons`,  | -          | -          | -          | yes        | yes        |
 * |   `websiteUrl`                          |            |            |            |            |            |
 * | client `roots.listChanged`              | yes        | yes        | yes        | yes        | - (`{}`)   |
 * | client `sampling`                       | open {}    | open {}    | open {}    | {context?, | {context?, |
 * |                                         |            |            |            |  tools?}   |  tools?}   |
 * | client `elicitation`                    | -          | -          | open {}    | {form?,    | {form?,    |
 * |                                         |            |            |            |  url?}     |  url?}     |
 * | client/server `tasks`                   | -          | -          | -          | yes        | -          |
 * | client/server `extensions`              | open (1)   | open (1)   | open (1)   | open (1)   | yes        |
 * | server `completions`                    | -          | yes        | yes        | yes        | yes        |
 * | `initialize` / `notifications/initialized` / `ping` | yes | yes | yes        | yes        | -          |
 * | `server/discover`                       | -          | -          | -          | -          | yes        |
 *
 * (1) Not named in the revision's schema, but capabilities are open objects there
 * and extensions (SEP-2133, MCP Apps) are declared under `extensions` whatever
 * the revision: a client's declaration is kept when its `initialize` is decoded.
 *
 * 2026-07-28 has no handshake: each request carries protocol version, client
 * capabilities and client info in `_meta` (see `Meta.ts`), each result may
 * carry server info there, and `server/discover` answers what `initialize`
 * used to (supported versions, capabilities, instructions) with cache hints.
 */
import * as Schema from "effect/Schema"
import { CacheHints } from "./CacheHints.ts"
import { CapabilityMap, ClientCapabilities, Implementation } from "./internal/metaValues.ts"
import { OpenObject } from "./internal/open.ts"
import { resultStruct } from "./internal/result.ts"
import { NotificationParams, RequestMeta, RequestParams } from "./Meta.ts"

export { CapabilityMap, ClientCapabilities, Implementation }

const ListChanged = Schema.Struct({ listChanged: Schema.optionalKey(Schema.Boolean) })

/** What a server declares it supports. */
export const ServerCapabilities = Schema.Struct({
  experimental: Schema.optionalKey(CapabilityMap),
  extensions: Schema.optionalKey(CapabilityMap),
  logging: Schema.optionalKey(OpenObject),
  completions: Schema.optionalKey(OpenObject),
  prompts: Schema.optionalKey(ListChanged),
  resources: Schema.optionalKey(
    Schema.Struct({
      subscribe: Schema.optionalKey(Schema.Boolean),
      listChanged: Schema.optionalKey(Schema.Boolean)
    })
  ),
  tools: Schema.optionalKey(ListChanged),
  tasks: Schema.optionalKey(
    Schema.Struct({
      list: Schema.optionalKey(OpenObject),
      cancel: Schema.optionalKey(OpenObject),
      requests: Schema.optionalKey(
        Schema.Struct({
          tools: Schema.optionalKey(Schema.Struct({ call: Schema.optionalKey(OpenObject) }))
        })
      )
    })
  )
}).annotate({ identifier: "ServerCapabilities" })
/** Decoded `ServerCapabilities`. */
export type ServerCapabilities = typeof ServerCapabilities.Type

/** Params of `initialize` (client to server, 2024-11-05 .. 2025-11-25). */
export const InitializeParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  /** The latest revision the client supports; the server answers with the one it picked. */
  protocolVersion: Schema.String,
  capabilities: ClientCapabilities,
  clientInfo: Implementation
}).annotate({ identifier: "InitializeParams" })
export type InitializeParams = typeof InitializeParams.Type

/** The result of `initialize`: the revision, the server's capabilities and info, and instructions. */
export const InitializeResult = resultStruct({
  protocolVersion: Schema.String,
  capabilities: ServerCapabilities,
  serverInfo: Implementation,
  /** How to use the server; clients may put it into the model's system prompt. */
  instructions: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "InitializeResult" })
/** Decoded `InitializeResult`. */
export type InitializeResult = typeof InitializeResult.Type

/** Params of `notifications/initialized`. */
export const InitializedParams = NotificationParams
export type InitializedParams = NotificationParams

/** Params of `ping` (either side, 2024-11-05 .. 2025-11-25); the result is `Result.EmptyResult`. */
export const PingParams = RequestParams
export type PingParams = RequestParams

/** Params of `server/discover` (2026-07-28). */
export const DiscoverParams = RequestParams
export type DiscoverParams = RequestParams

/** Result of `server/discover` (2026-07-28); server info travels in `_meta`. */
export const DiscoverResult = resultStruct({
  supportedVersions: Schema.Array(Schema.String),
  capabilities: ServerCapabilities,
  instructions: Schema.optionalKey(Schema.String),
  ...CacheHints.fields
}).annotate({ identifier: "DiscoverResult" })
export type DiscoverResult = typeof DiscoverResult.Type
