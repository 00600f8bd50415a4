/**
 * The Skills extension (SEP-2640, `io.modelcontextprotocol/skills`): a server
 * serves Agent Skills (a folder with a `SKILL.md` and supporting files) as
 * resources, usually under `skill://<skill-path>/`, and lists them with
 * `skills/list` / `skills/get`. Each entry names the skill's `SKILL.md`, its
 * frontmatter as JSON, and every file with its SHA-256 digest and size (or
 * `"dynamic"`), so a host can verify what `resources/read` returns before it
 * loads anything. A server may also answer `resources/directory/read`
 * (declared as `directoryRead: true`).
 *
 * The extension is negotiated in `capabilities.extensions`; a server that
 * declares it also declares `resources`. Its results carry the 2026-07-28
 * cache hints (`ttlMs`, `cacheScope`) there, as `resources/read` does.
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { CacheScope, TtlMs } from "./CacheHints.ts"
import { resourceFields } from "./Content.ts"
import * as Frontmatter from "./internal/frontmatter.ts"
import { type OpenObject, openStruct } from "./internal/open.ts"
import { resultStruct } from "./internal/result.ts"
import type { WireRequest } from "./internal/wireTable.ts"
import { Meta, RequestMeta } from "./Meta.ts"
import { Cursor, PaginatedParams, paginatedResultFields } from "./Pagination.ts"

/** The identifier a server declares under `capabilities.extensions`. */
export const extensionId = "io.modelcontextprotocol/skills"
/** Lists the skills a server serves (paginated). */
export const listMethod = "skills/list"
/** One skill's entry by the URI of its `SKILL.md`, listed or not. */
export const getMethod = "skills/get"
/** The direct children of a directory resource (only with `directoryRead: true`). */
export const directoryReadMethod = "resources/directory/read"
/** The `mimeType` of a directory resource. */
export const directoryMimeType = "inode/directory"
/** The `mimeType` a `SKILL.md` resource should have. */
export const skillMdMimeType = "text/markdown"
/** The name of a skill's manifest file. */
export const skillMd = "SKILL.md"
/** Per-skill limits: hosts accept skills up to these; servers should not publish beyond them. */
export const limits = { files: 512, bytes: 16 * 1024 * 1024 } as const
/** `sha256:` and 64 lowercase hex digits. */
export const digestPattern = /^sha256:[0-9a-f]{64}$/
/** A skill name (the final `<skill-path>` segment): 1-64 of a-z, 0-9 and single inner hyphens. */
export const namePattern = /^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$/

/** One file of a skill and what verifies it. */
export const SkillResourceEntry = openStruct({
  uri: Schema.String,
  digest: Schema.String.check(Schema.isPattern(digestPattern)),
  size: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
}).annotate({ identifier: "SkillResourceEntry" })
export type SkillResourceEntry = typeof SkillResourceEntry.Type

/** A `SKILL.md`'s YAML frontmatter as JSON, verbatim (`name` and `description` always present). */
export const SkillFrontmatter = openStruct({
  name: Schema.String,
  description: Schema.String
}).annotate({ identifier: "SkillFrontmatter" })
export type SkillFrontmatter = typeof SkillFrontmatter.Type

/** A skill entry of `skills/list` and `skills/get`. */
export const Skill = openStruct({
  /** The URI of the skill's `SKILL.md`. */
  uri: Schema.String,
  frontmatter: SkillFrontmatter,
  /** Every file of the skill, `SKILL.md` included, or `"dynamic"` (no manifest: nothing to verify against). */
  resources: Schema.Union([Schema.Array(SkillResourceEntry), Schema.Literal("dynamic")]),
  _meta: Schema.optionalKey(Meta)
}).annotate({ identifier: "Skill" })
export type Skill = typeof Skill.Type

const cacheFields = { ttlMs: Schema.optionalKey(TtlMs), cacheScope: Schema.optionalKey(CacheScope) }

/** Params of `skills/list`. */
export const ListSkillsParams = PaginatedParams
export type ListSkillsParams = typeof ListSkillsParams.Type

/** Result of `skills/list` (cache hints required on 2026-07-28). */
export const ListSkillsResult = resultStruct({
  ...paginatedResultFields,
  ...cacheFields,
  skills: Schema.Array(Skill)
}).annotate({ identifier: "ListSkillsResult" })
export type ListSkillsResult = typeof ListSkillsResult.Type

/** Params of `skills/get`. */
export const GetSkillParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  uri: Schema.String
}).annotate({ identifier: "GetSkillParams" })
export type GetSkillParams = typeof GetSkillParams.Type

/** Result of `skills/get`: one entry, never a cursor. */
export const GetSkillResult = resultStruct({ ...cacheFields, skill: Skill }).annotate({
  identifier: "GetSkillResult"
})
export type GetSkillResult = typeof GetSkillResult.Type

/** Params of `resources/directory/read`. */
export const ReadDirectoryParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  uri: Schema.String,
  cursor: Schema.optionalKey(Cursor)
}).annotate({ identifier: "ReadDirectoryParams" })
export type ReadDirectoryParams = typeof ReadDirectoryParams.Type

/** A child of a directory: a resource (`mimeType: "inode/directory"` for a subdirectory). */
export const DirectoryResource = Schema.Struct(resourceFields).annotate({ identifier: "DirectoryResource" })
export type DirectoryResource = typeof DirectoryResource.Type

/** Result of `resources/directory/read`. */
export const ReadDirectoryResult = resultStruct({
  ...paginatedResultFields,
  ...cacheFields,
  resources: Schema.Array(DirectoryResource)
}).annotate({ identifier: "ReadDirectoryResult" })
export type ReadDirectoryResult = typeof ReadDirectoryResult.Type

/** What a server declares at `capabilities.extensions["io.modelcontextprotocol/skills"]`. */
export interface SkillsCapability {
  /** The server answers `resources/directory/read`. */
  readonly directoryRead?: boolean | undefined
  readonly [key: string]: unknown
}

/** The Skills declaration in a peer's capabilities; undefined when absent or not an object. */
export const capabilityOf = (capabilities: unknown): SkillsCapability | undefined => {
  if (!Predicate.isObject(capabilities)) return undefined
  const extensions = (capabilities as { readonly extensions?: unknown }).extensions
  if (!Predicate.isObject(extensions)) return undefined
  const value = (extensions as { readonly [key: string]: unknown })[extensionId]
  return Predicate.isObject(value) && !Array.isArray(value) ? (value as SkillsCapability) : undefined
}

/**
 * The request methods of the extension, as the revision registry takes them:
 * they exist in every revision, gated by the server's declaration.
 */
export const wireRequests: ReadonlyArray<WireRequest> = [
  {
    method: listMethod,
    sender: "client",
    paramsRequired: false,
    params: () => ListSkillsParams,
    result: () => ListSkillsResult
  },
  {
    method: getMethod,
    sender: "client",
    paramsRequired: true,
    params: () => GetSkillParams,
    result: () => GetSkillResult
  },
  {
    method: directoryReadMethod,
    sender: "client",
    paramsRequired: true,
    params: () => ReadDirectoryParams,
    result: () => ReadDirectoryResult
  }
]

/** A `SKILL.md` read apart: its frontmatter as JSON and the markdown after it. */
export interface SkillMarkdown {
  readonly frontmatter: { readonly [key: string]: unknown }
  readonly body: string
}

/**
 * Reads a `SKILL.md`: the leading `---` block as YAML (the plain mappings
 * skills use; anything else is refused) and the body. Fails with a message
 * when there is no frontmatter, it cannot be read, or it lacks a non-empty
 * `name` or `description`.
 */
export const parseSkillMarkdown = (text: string): Result.Result<SkillMarkdown, string> => {
  const parts = Frontmatter.split(text)
  if (parts === undefined) return Result.fail("SKILL.md does not begin with a --- delimited YAML frontmatter block")
  let frontmatter: { readonly [key: string]: unknown }
  try {
    frontmatter = Frontmatter.parse(parts.yaml)
  } catch (error) {
    return Result.fail(
      `SKILL.md frontmatter: ${error instanceof Frontmatter.FrontmatterError ? error.message : String(error)}`
    )
  }
  for (const field of ["name", "description"]) {
    const value = frontmatter[field]
    if (typeof value !== "string" || value.length === 0) {
      return Result.fail(`SKILL.md frontmatter has no non-empty ${field}`)
    }
  }
  return Result.succeed({ frontmatter, body: parts.body })
}

/** The fields on which two frontmatter objects differ, one line each (empty when equal in content). */
export const frontmatterDifferences = (
  a: { readonly [key: string]: unknown },
  b: { readonly [key: string]: unknown }
): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (!jsonEqual(a[key] ?? null, b[key] ?? null)) {
      out.push(`${key}: file=${JSON.stringify(a[key] ?? null)} entry=${JSON.stringify(b[key] ?? null)}`)
    }
  }
  return out
}

const jsonEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]))
  if (Predicate.isObject(a) && Predicate.isObject(b) && !Array.isArray(b)) {
    const ka = Object.keys(a)
    const kb = Object.keys(b)
    return (
      ka.length === kb.length &&
      ka.every((k) => Object.hasOwn(b, k) && jsonEqual((a as OpenObject)[k], (b as OpenObject)[k]))
    )
  }
  return false
}

interface Subtle {
  readonly digest: (algorithm: string, data: Uint8Array) => Promise<ArrayBuffer>
}

/** `sha256:<hex>` of `bytes`, with the platform's WebCrypto. */
export const digest = (bytes: Uint8Array): Effect.Effect<string> =>
  Effect.promise(() =>
    (globalThis as unknown as { readonly crypto: { readonly subtle: Subtle } }).crypto.subtle.digest("SHA-256", bytes)
  ).pipe(
    Effect.map((buffer) => {
      let hex = ""
      for (const byte of new Uint8Array(buffer)) hex += byte.toString(16).padStart(2, "0")
      return `sha256:${hex}`
    })
  )

/** The skill directory of a `SKILL.md` URI (`skill://a/b/SKILL.md` -> `skill://a/b`); undefined for other URIs. */
export const directoryOf = (uri: string): string | undefined =>
  uri.endsWith(`/${skillMd}`) && uri.indexOf("://") >= 0 ? uri.slice(0, -(skillMd.length + 1)) : undefined

/** The skill name a `SKILL.md` URI ends with (its final `<skill-path>` segment). */
export const nameOf = (uri: string): string | undefined => {
  const directory = directoryOf(uri)
  if (directory === undefined) return undefined
  const segments = directory.slice(directory.indexOf("://") + 3).split("/")
  const last = segments.at(-1)
  return last === undefined || last === "" ? undefined : last
}
