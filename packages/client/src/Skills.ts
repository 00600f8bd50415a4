/**
 * The host side of the Skills extension (SEP-2640): list a server's skills
 * (`skills/list`, every page), get one by the URI of its `SKILL.md`
 * (`skills/get`), list a skill folder (`resources/directory/read`), and read
 * a skill's files with `resources/read`, verified against the skill's entry
 * before anything is returned: the file must be listed, its size and SHA-256
 * digest must match, and a `SKILL.md`'s frontmatter must equal the entry's.
 * Content that fails a check is never handed out.
 *
 * Nothing is read ahead of need: listing reads no file, and `read` reads only
 * the file asked for. Approving and loading skills stays with the host.
 * Each function takes a connected client (the `McpClient` service, or one of
 * an `McpHost`'s clients).
 */
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Resources from "@effect-mcp/protocol/Resources"
import * as Skills from "@effect-mcp/protocol/Skills"
import * as Base64 from "effect/encoding/Base64"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { InvalidResult } from "./ClientError.ts"
import * as Decode from "./internal/decode.ts"
import * as Paging from "./internal/paging.ts"
import type * as McpClient from "./McpClient.ts"

export type { Skill } from "@effect-mcp/protocol/Skills"

/** A skill file failed verification against its entry; the host must not use it (for a `SKILL.md`: not load the skill). */
export class SkillVerificationError extends Schema.TaggedError<SkillVerificationError>()("SkillVerificationError", {
  /**
   * `unlisted`: the file is not in the entry's `resources` (refused before any request);
   * `size` / `digest`: the bytes read differ from the entry's; `frontmatter`: the
   * `SKILL.md` read has frontmatter that differs from the entry's (or none that can be read).
   */
  reason: Schema.Literals(["unlisted", "size", "digest", "frontmatter"]),
  uri: Schema.String,
  message: Schema.String,
  /** For `frontmatter`: one line per differing field. */
  differences: Schema.Array(Schema.String)
}) {}

/** A skill file as read and verified. */
export interface SkillFile {
  /** The URI read (the entry's spelling of it). */
  readonly uri: string
  readonly mimeType: string | undefined
  /** Exactly the bytes the digest covers. */
  readonly bytes: Uint8Array
  /** The text, when the server sent text. */
  readonly text: string | undefined
  /** Size and digest were checked (false only for `"dynamic"` skills, which publish no manifest). */
  readonly verified: boolean
  /** For the skill's own `SKILL.md`: its frontmatter (equal to the entry's) and the markdown after it. */
  readonly frontmatter?: { readonly [key: string]: unknown } | undefined
  readonly body?: string | undefined
}

/** What reading a skill file can fail with. */
export type ReadError = McpClient.CallError | SkillVerificationError

/**
 * What to merge into a client's `capabilities` to say it uses skills (the
 * extension's client side has no settings): servers may offer skills only to
 * clients that declare it, as extensions are negotiated both ways.
 */
export const capabilities: { readonly extensions: { readonly [Skills.extensionId]: {} } } = {
  extensions: { [Skills.extensionId]: {} }
}

/** The server declared the Skills extension. */
export const supported = (client: McpClient.McpClientShape): boolean =>
  Skills.capabilityOf(client.serverCapabilities) !== undefined

/** The server answers `resources/directory/read`. */
export const directoryRead = (client: McpClient.McpClientShape): boolean =>
  Skills.capabilityOf(client.serverCapabilities)?.directoryRead === true

const decodeList = Decode.decoder(Skills.listMethod, Skills.ListSkillsResult)
const decodeGet = Decode.decoder(Skills.getMethod, Skills.GetSkillResult)
const decodeDirectory = Decode.decoder(Skills.directoryReadMethod, Skills.ReadDirectoryResult)

/** One page of `skills/list` (pass the previous page's `nextCursor` for the next). */
export const listPage = (
  client: McpClient.McpClientShape,
  cursor?: string,
  options?: McpClient.RequestOptions
): Effect.Effect<Skills.ListSkillsResult, McpClient.CallError> =>
  Effect.flatMap(client.request(Skills.listMethod, cursor === undefined ? {} : { cursor }, options), decodeList)

const maxPages = 1000

/**
 * Every skill the server lists, over all pages (a repeated cursor or more
 * than 1000 pages fails with `PaginationError`). Empty when the server did
 * not declare the extension. Reads no skill file.
 *
 * @example
 * ```ts
 * import * as McpClient from "@effect-mcp/client/McpClient"
 * import * as Skills from "@effect-mcp/client/Skills"
 * import * as Effect from "effect/Effect"
 *
 * export const loadFirst = Effect.gen(function* () {
 *   const client = yield* McpClient.McpClient
 *   const [skill] = yield* Skills.list(client)
 *   if (skill === undefined) return undefined
 *   const manifest = yield* Skills.read(client, skill) // SKILL.md, verified
 *   return manifest.body
 * })
 * ```
 */
export const list = (
  client: McpClient.McpClientShape
): Effect.Effect<ReadonlyArray<Skills.Skill>, McpClient.ListError> =>
  supported(client)
    ? Stream.runCollect(
        Paging.stream({
          method: Skills.listMethod,
          maxPages,
          fetch: (cursor) =>
            Effect.map(listPage(client, cursor), (r) => ({ items: r.skills, nextCursor: r.nextCursor }))
        })
      )
    : Effect.succeed([])

/** One skill by the URI of its `SKILL.md`, listed or not; an entry for another URI fails with `InvalidResult`. */
export const get = (
  client: McpClient.McpClientShape,
  uri: string,
  options?: McpClient.RequestOptions
): Effect.Effect<Skills.Skill, McpClient.CallError> =>
  client.request(Skills.getMethod, { uri }, options).pipe(
    Effect.flatMap(decodeGet),
    Effect.flatMap((result) =>
      result.skill.uri === uri
        ? Effect.succeed(result.skill)
        : Effect.fail(
            new InvalidResult({
              method: Skills.getMethod,
              reason: "Malformed",
              message: `${Skills.getMethod}: asked for ${uri}, the server returned ${result.skill.uri}`
            })
          )
    )
  )

/** The direct children of a skill folder, every page (needs the server's `directoryRead`). */
export const readDirectory = (
  client: McpClient.McpClientShape,
  uri: string
): Effect.Effect<ReadonlyArray<Skills.DirectoryResource>, McpClient.ListError> =>
  Stream.runCollect(
    Paging.stream({
      method: Skills.directoryReadMethod,
      maxPages,
      fetch: (cursor) =>
        Effect.map(
          Effect.flatMap(
            client.request(Skills.directoryReadMethod, cursor === undefined ? { uri } : { uri, cursor }),
            decodeDirectory
          ),
          (r) => ({ items: r.resources, nextCursor: r.nextCursor })
        )
    })
  )

/** The file `ref` names in `skill`: its `SKILL.md` by default, a path relative to its folder, or an absolute URI. */
export const resolve = (skill: Skills.Skill, ref?: string): string => {
  const bare = ref === undefined ? undefined : ref.split("#")[0]!
  if (bare === undefined || bare === "") return skill.uri
  if (bare.includes("://")) return bare
  const folder = Skills.directoryOf(skill.uri) ?? skill.uri.slice(0, skill.uri.lastIndexOf("/"))
  return `${folder}/${bare.replace(/^\.?\//, "")}`
}

const sameUri = (a: string, b: string): boolean => {
  if (a === b) return true
  try {
    return decodeURI(a) === decodeURI(b)
  } catch {
    return false
  }
}

// The package builds without DOM or Node types: the platform's codecs, declared.
declare const TextEncoder: new () => { encode(input: string): Uint8Array }
declare const TextDecoder: new () => { decode(input: Uint8Array): string }
const utf8 = new TextEncoder()

const refuse = (
  reason: SkillVerificationError["reason"],
  uri: string,
  message: string,
  differences: ReadonlyArray<string> = []
) => new SkillVerificationError({ reason, uri, message, differences })

const contentsOf = (result: Resources.ReadResourceResult, uri: string) =>
  result.contents.find((c) => sameUri(c.uri, uri)) ?? result.contents[0]

/**
 * Reads one file of `skill` and verifies it before returning it: listed in
 * the entry (checked before any request), size and digest equal to the
 * entry's, and for the skill's `SKILL.md` a frontmatter equal to the
 * entry's. `"dynamic"` skills publish no manifest: their files are returned
 * with `verified: false` (the frontmatter is still compared).
 */
export const read = Effect.fnUntraced(function* (
  client: McpClient.McpClientShape,
  skill: Skills.Skill,
  ref?: string,
  options?: McpClient.RequestOptions
): Effect.fn.Return<SkillFile, ReadError> {
  const target = resolve(skill, ref)
  const manifest = skill.resources === "dynamic" ? undefined : skill.resources
  const listed = manifest?.find((entry) => sameUri(entry.uri, target))
  if (manifest !== undefined && listed === undefined) {
    return yield* refuse("unlisted", target, `${target} is not a file of skill ${skill.uri}`)
  }
  const uri = listed?.uri ?? target
  const result = yield* client.readResource(uri, options)
  const contents = contentsOf(result, uri)
  if (contents === undefined) {
    return yield* new McpError.InvalidParams({ message: `resources/read of ${uri} returned no contents` })
  }
  let text: string | undefined
  let bytes: Uint8Array
  if ("text" in contents && typeof contents.text === "string") {
    text = contents.text
    bytes = utf8.encode(text)
  } else {
    const decoded = Base64.decode(String((contents as { readonly blob?: unknown }).blob ?? ""))
    if (Result.isFailure(decoded)) return yield* refuse("digest", uri, `${uri}: the blob is not valid base64`)
    bytes = decoded.success
  }
  if (listed !== undefined) {
    if (bytes.byteLength !== listed.size) {
      return yield* refuse("size", uri, `${uri}: ${bytes.byteLength} bytes read, the entry says ${listed.size}`)
    }
    const digest = yield* Skills.digest(bytes)
    if (digest !== listed.digest) {
      return yield* refuse("digest", uri, `${uri}: digest ${digest} differs from the entry's ${listed.digest}`)
    }
  }
  const file = { uri, mimeType: contents.mimeType, bytes, text, verified: listed !== undefined }
  if (!sameUri(uri, skill.uri)) return file
  const parsed = Skills.parseSkillMarkdown(text ?? new TextDecoder().decode(bytes))
  if (Result.isFailure(parsed)) return yield* refuse("frontmatter", uri, `${uri}: ${parsed.failure}`)
  const differences = Skills.frontmatterDifferences(parsed.success.frontmatter, skill.frontmatter)
  if (differences.length > 0) {
    return yield* refuse("frontmatter", uri, `${uri}: the frontmatter differs from the entry's`, differences)
  }
  return { ...file, frontmatter: parsed.success.frontmatter, body: parsed.success.body }
})
