/**
 * Listing a server: every page of each list it declared, with the 2026-07-28
 * cache hints its pages carried (the tightest of them: the shortest `ttlMs`,
 * `private` if any page was), counted from when the listing started, so the
 * catalog can say how long a list made of it may be kept. A list that fails
 * counts as empty (and is logged).
 */
import type * as McpClient from "@effect-mcp/client/McpClient"
import type * as CacheHints from "@effect-mcp/protocol/CacheHints"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Catalog from "../Catalog.ts"

/** Most pages read of one list, as the client's own list Streams read (`McpClient.Options.maxPages`). */
const maxPages = 1000

/** One page of a list as the client decodes it. */
type Page<A> = CacheHints.CacheHints & { readonly items: ReadonlyArray<A>; readonly nextCursor?: string | undefined }

/** A list and its hints. */
interface Listed<A> {
  readonly items: ReadonlyArray<A>
  readonly hints: Catalog.ListHints | undefined
}

const failedPages = (message: string) => Effect.fail(new Error(message))

/** Every page of one list (at most `maxPages`, a cursor never twice), and the tightest hints they carried. */
const pages = <A>(fetch: (cursor: string | undefined) => Effect.Effect<Page<A>, unknown>) =>
  Effect.gen(function* () {
    const listedAt = yield* Clock.currentTimeMillis
    const items: Array<A> = []
    const seen = new Set<string>()
    let hints: Catalog.ListHints | undefined
    let cursor: string | undefined
    for (let page = 0; ; page++) {
      if (page >= maxPages) return yield* failedPages(`more than ${maxPages} pages`)
      const got = yield* fetch(cursor)
      items.push(...got.items)
      if (got.ttlMs !== undefined || got.cacheScope !== undefined) {
        const ttlMs = got.ttlMs ?? 0
        const cacheScope = got.cacheScope ?? "private"
        hints = {
          ttlMs: hints === undefined ? ttlMs : Math.min(hints.ttlMs, ttlMs),
          cacheScope: hints?.cacheScope === "private" ? "private" : cacheScope,
          listedAt
        }
      }
      cursor = got.nextCursor
      if (cursor === undefined) return { items, hints } satisfies Listed<A>
      if (seen.has(cursor)) return yield* failedPages(`the cursor ${JSON.stringify(cursor)} came twice`)
      seen.add(cursor)
    }
  })

const none: Listed<never> = { items: [], hints: undefined }

const collect = <A>(
  declared: boolean,
  fetch: (cursor: string | undefined) => Effect.Effect<Page<A>, unknown>
): Effect.Effect<Listed<A>> =>
  declared
    ? pages(fetch).pipe(
        Effect.tapError((error) => Effect.logWarning("listing failed", error)),
        Effect.orElseSucceed((): Listed<A> => none)
      )
    : Effect.succeed(none)

/** The server's tools, and their hints. */
export const tools = (client: McpClient.McpClientShape, declared = true) =>
  collect(declared, (cursor) =>
    Effect.map(client.listTools(cursor), (r) => ({ ...r, items: r.tools }) as Page<(typeof r.tools)[number]>)
  )

/** The server's prompts, and their hints. */
export const prompts = (client: McpClient.McpClientShape, declared = true) =>
  collect(declared, (cursor) =>
    Effect.map(client.listPrompts(cursor), (r) => ({ ...r, items: r.prompts }) as Page<(typeof r.prompts)[number]>)
  )

/** The server's resources, and their hints. */
export const resources = (client: McpClient.McpClientShape, declared = true) =>
  collect(declared, (cursor) =>
    Effect.map(
      client.listResources(cursor),
      (r) => ({ ...r, items: r.resources }) as Page<(typeof r.resources)[number]>
    )
  )

/** The server's resource templates, and their hints. */
export const resourceTemplates = (client: McpClient.McpClientShape, declared = true) =>
  collect(declared, (cursor) =>
    Effect.map(
      client.listResourceTemplates(cursor),
      (r) => ({ ...r, items: r.resourceTemplates }) as Page<(typeof r.resourceTemplates)[number]>
    )
  )

/** Lists as (part of) a listing: each under its kind, its hints under the same kind in `hints`. */
export const asListing = (
  lists: {
    readonly [K in Catalog.ListKind]?: Listed<Catalog.Listing[K][number]>
  }
): Partial<Catalog.Listing> => {
  const part: Record<string, unknown> = {}
  const hints: { -readonly [K in Catalog.ListKind]?: Catalog.ListHints | undefined } = {}
  for (const kind of Object.keys(lists) as Array<Catalog.ListKind>) {
    part[kind] = lists[kind]!.items
    hints[kind] = lists[kind]!.hints
  }
  return { ...part, hints } as Partial<Catalog.Listing>
}

/** Lists everything the server declared. */
export const listAll = (client: McpClient.McpClientShape): Effect.Effect<Catalog.Listing> => {
  const caps = client.serverCapabilities
  return Effect.map(
    Effect.all(
      {
        tools: tools(client, caps.tools !== undefined),
        prompts: prompts(client, caps.prompts !== undefined),
        resources: resources(client, caps.resources !== undefined),
        resourceTemplates: resourceTemplates(client, caps.resources !== undefined)
      },
      { concurrency: "unbounded" }
    ),
    (lists) => asListing(lists) as Catalog.Listing
  )
}
