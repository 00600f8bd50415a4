/**
 * Static resources: one URI, its metadata, and how to read it (text, bytes,
 * or explicit contents). Reading returns a `resources/read` result; a
 * resource may carry its own 2026-07-28 cache hints.
 */
import type * as CacheHints from "@effect-mcp/protocol/CacheHints"
import type * as Content from "@effect-mcp/protocol/Content"
import type * as McpError from "@effect-mcp/protocol/McpError"
import type * as Meta from "@effect-mcp/protocol/Meta"
import type * as Resources from "@effect-mcp/protocol/Resources"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Registration from "./internal/registration.ts"
import * as Results from "./internal/results.ts"
import type { McpServer } from "./McpServer.ts"
import type { Provided } from "./Tool.ts"

/** What a read returns: text, bytes (sent base64 as a blob), or explicit contents. */
export type Contents = string | Uint8Array | Content.ResourceContents | ReadonlyArray<Content.ResourceContents>

/** 2026-07-28 cache hints of a read. */
export interface Cache {
  readonly ttlMs: number
  readonly cacheScope: CacheHints.CacheScope
}

/** A resource ready to register; `R` is what its read needs beyond the per-request services. */
export interface Resource<R = never> {
  readonly uri: string
  readonly definition: Resources.Resource
  /** Reads the contents. */
  readonly read: (uri: string) => Effect.Effect<Contents, unknown, R | Provided>
  readonly cache: Cache | undefined
  /**
   * Scopes a caller's access token must carry to read (or subscribe to) the resource (checked by a
   * protected HTTP server before the request reaches the handler, answered
   * 403 `insufficient_scope` otherwise; see docs/authorization.md). None by default.
   */
  readonly scopes?: ReadonlyArray<string> | undefined
}

/** What `make` takes: the URI, metadata, and the Effect that reads the contents. */
export interface Options<E, R> {
  readonly uri: string
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly mimeType?: string | undefined
  readonly size?: number | undefined
  readonly annotations?: Content.Annotations | undefined
  readonly icons?: Content.Icons | undefined
  readonly _meta?: Meta.Meta | undefined
  readonly cache?: Cache | undefined
  /**
   * Scopes a caller's access token must carry to read (or subscribe to) the resource (checked by a
   * protected HTTP server before the request reaches the handler, answered
   * 403 `insufficient_scope` otherwise; see docs/authorization.md). None by default.
   */
  readonly scopes?: ReadonlyArray<string> | undefined
  readonly read: Effect.Effect<Contents, E, R>
}

const metadataKeys = ["title", "description", "mimeType", "size", "annotations", "icons", "_meta"] as const

/** The optional metadata fields of `options` that are set. */
export const metadata = (options: { readonly [K in (typeof metadataKeys)[number]]?: unknown }): object => {
  const out: Record<string, unknown> = {}
  for (const key of metadataKeys) if (options[key] !== undefined) out[key] = options[key]
  return out
}

/**
 * Makes a resource: a fixed URI and the Effect that reads it (run on every `resources/read`).
 *
 * @example
 * ```ts
 * import * as Resource from "@effect-mcp/server/Resource"
 * import * as Effect from "effect/Effect"
 *
 * export const Readme = Resource.layer(
 *   Resource.make({
 *     uri: "docs://readme",
 *     name: "readme",
 *     mimeType: "text/markdown",
 *     read: Effect.succeed("# Hello") // a string, a Uint8Array (sent as a blob), or explicit contents
 *   })
 * )
 * ```
 */
export const make = <E, R>(options: Options<E, R>): Resource<Exclude<R, Provided>> => ({
  uri: options.uri,
  definition: { uri: options.uri, name: options.name, ...metadata(options) } as Resources.Resource,
  read: () => options.read as Effect.Effect<Contents, unknown, Exclude<R, Provided> | Provided>,
  cache: options.cache,
  ...(options.scopes === undefined ? {} : { scopes: options.scopes })
})

/**
 * The error a read fails with when its URI names nothing (a template's
 * variables that match no row, say): -32002 "Resource not found" up to
 * 2025-11-25, -32602 from 2026-07-28, with `data: { uri }` on both (a long URI
 * cut to a bounded prefix). Reading a URI no resource or template matches
 * answers the same.
 */
export const notFound: (uri: string) => McpError.ResourceNotFound = Results.notFound

/** Registers resources for as long as the current scope lasts. */
export const register = <R>(
  ...resources: ReadonlyArray<Resource<R>>
): Effect.Effect<void, never, McpServer | R | Scope.Scope> => Registration.register("resource", resources)

/** A Layer registering resources for as long as it lives. */
export const layer = <R>(...resources: ReadonlyArray<Resource<R>>): Layer.Layer<never, never, McpServer | R> =>
  Registration.layer("resource", resources)
