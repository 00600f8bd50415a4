/**
 * Agent Skills served by the Skills extension (SEP-2640,
 * `io.modelcontextprotocol/skills`). A skill is a folder: a `SKILL.md`
 * (YAML frontmatter with `name` and `description`, then instructions) and
 * supporting files. Registering one serves every file as a resource under
 * `skill://[<prefix>/]<name>/` (read with `resources/read`; only the
 * `SKILL.md` is listed by `resources/list`, with the frontmatter's name and
 * description: a host finds the other files in the skill's entry and reads
 * them when needed), adds its entry to `skills/list` and `skills/get` (each file
 * with its SHA-256 digest and size, so hosts can verify what they read),
 * answers `resources/directory/read` on its folders, and declares the
 * extension (with `directoryRead: true`) and `resources`.
 *
 * Skills are registered like tools: `Skill.layer(...)` for as long as the
 * Layer lives, `Skill.register(...)` for the current scope (skills added and
 * removed at run time; each change is one `notifications/resources/list_changed`).
 * The digests are computed when a skill is made, once.
 */
import * as Skills from "@effect-mcp/protocol/Skills"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import type * as PlatformError from "effect/PlatformError"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Registration from "./internal/registration.ts"
import type { McpServer } from "./McpServer.ts"
import * as Resource from "./Resource.ts"

/** A skill ready to register: its entry and the resources that serve its files. */
export interface Skill {
  /** The URI of its `SKILL.md` (the key of `skills/get`). */
  readonly uri: string
  /** What `skills/list` and `skills/get` say of it. */
  readonly entry: Skills.Skill
  /** One resource per file, the `SKILL.md` first. */
  readonly resources: ReadonlyArray<Resource.Resource>
}

/** What `make` takes: the skill's files by path inside the folder, `SKILL.md` among them. */
export interface Options {
  /** File contents by relative, `/`-separated path (`"SKILL.md"`, `"references/FORMS.md"`). */
  readonly files: { readonly [path: string]: string | Uint8Array }
  /** Segments before the skill's name: `"acme"` serves `skill://acme/<name>/...`. None by default. */
  readonly prefix?: string | undefined
  /** The MIME type of each path; by default from the extension (`.md` text/markdown, ...). */
  readonly mimeTypes?: { readonly [path: string]: string } | undefined
  /** 2026-07-28 cache hints of reads of its files. Default: the server's. */
  readonly cache?: Resource.Cache | undefined
  /** `_meta` of the entry (keys prefixed `io.modelcontextprotocol.skills/` where the extension defines them). */
  readonly _meta?: { readonly [key: string]: unknown } | undefined
}

/**
 * Why a skill could not be made: its `SKILL.md` is missing or unreadable,
 * its name breaks the Agent Skills naming rules, or a path is not a plain
 * relative path.
 */
export class SkillError extends Schema.TaggedError<SkillError>()("SkillError", {
  reason: Schema.Literals(["MissingSkillMd", "InvalidSkillMd", "InvalidName", "InvalidPath"]),
  message: Schema.String
}) {}

const extensionTypes: { readonly [ext: string]: string } = {
  md: "text/markdown",
  txt: "text/plain",
  json: "application/json",
  yaml: "application/yaml",
  yml: "application/yaml",
  py: "text/x-python",
  js: "text/javascript",
  ts: "text/x-typescript",
  sh: "text/x-shellscript",
  html: "text/html",
  csv: "text/csv",
  png: "image/png",
  svg: "image/svg+xml"
}

const mimeTypeOf = (path: string): string => {
  const dot = path.lastIndexOf(".")
  return (dot < 0 ? undefined : extensionTypes[path.slice(dot + 1).toLowerCase()]) ?? "application/octet-stream"
}

const validPath = (path: string): boolean =>
  path.length > 0 &&
  !path.startsWith("/") &&
  path.split("/").every((segment) => segment !== "" && segment !== "." && segment !== "..")

// The package builds without DOM or Node types: the platform's codecs, declared.
declare const TextEncoder: new () => { encode(input: string): Uint8Array }
declare const TextDecoder: new () => { decode(input: Uint8Array): string }
const encoder = new TextEncoder()

/**
 * Makes a skill from its files: reads the `SKILL.md` frontmatter (its
 * `name` is the folder's name in the URI), computes every file's digest and
 * size, and builds the resources that serve them.
 *
 * @example
 * ```ts
 * import * as Skill from "@effect-mcp/server/Skill"
 *
 * export const PdfSkill = Skill.layer({
 *   files: {
 *     "SKILL.md": "---\nname: pdf-processing\ndescription: Extract text from PDFs\n---\n\nUse FORMS.md for forms.\n",
 *     "references/FORMS.md": "# Forms\n"
 *   }
 * })
 * ```
 */
export const make = Effect.fnUntraced(function* (options: Options) {
  const manifest = options.files[Skills.skillMd]
  if (manifest === undefined) {
    return yield* new SkillError({ reason: "MissingSkillMd", message: "a skill needs a SKILL.md at its root" })
  }
  const text = typeof manifest === "string" ? manifest : new TextDecoder().decode(manifest)
  const parsed = Skills.parseSkillMarkdown(text)
  if (Result.isFailure(parsed)) return yield* new SkillError({ reason: "InvalidSkillMd", message: parsed.failure })
  const frontmatter = parsed.success.frontmatter as Skills.SkillFrontmatter
  const name = frontmatter.name
  if (!Skills.namePattern.test(name)) {
    return yield* new SkillError({
      reason: "InvalidName",
      message: `skill name ${JSON.stringify(name)} breaks the naming rules (1-64 of a-z, 0-9, inner single hyphens)`
    })
  }
  const prefix = options.prefix === undefined || options.prefix === "" ? "" : `${options.prefix.replace(/\/+$/, "")}/`
  if (prefix !== "" && !validPath(prefix.slice(0, -1))) {
    return yield* new SkillError({ reason: "InvalidPath", message: `invalid prefix ${JSON.stringify(options.prefix)}` })
  }
  const root = `skill://${prefix}${name}`
  const paths = Object.keys(options.files).sort((a, b) =>
    a === Skills.skillMd ? -1 : b === Skills.skillMd ? 1 : a < b ? -1 : a > b ? 1 : 0
  )
  const entries: Array<Skills.SkillResourceEntry> = []
  const resources: Array<Resource.Resource> = []
  for (const path of paths) {
    if (!validPath(path)) {
      return yield* new SkillError({ reason: "InvalidPath", message: `invalid file path ${JSON.stringify(path)}` })
    }
    const content = options.files[path]!
    const bytes = typeof content === "string" ? encoder.encode(content) : content
    const uri = `${root}/${path}`
    entries.push({ uri, digest: yield* Skills.digest(bytes), size: bytes.byteLength })
    const isManifest = path === Skills.skillMd
    const mimeType = options.mimeTypes?.[path] ?? (isManifest ? Skills.skillMdMimeType : mimeTypeOf(path))
    // Text goes out as text (the bytes the digest covers are its UTF-8), everything else as a blob.
    const read = typeof content === "string" ? { uri, mimeType, text: content } : content
    resources.push(
      Resource.make({
        uri,
        name: isManifest ? name : path,
        ...(isManifest ? { description: frontmatter.description } : {}),
        mimeType,
        size: bytes.byteLength,
        cache: options.cache,
        read: Effect.succeed(read)
      })
    )
  }
  const entry: Skills.Skill = {
    uri: `${root}/${Skills.skillMd}`,
    frontmatter,
    resources: entries,
    ...(options._meta === undefined ? {} : { _meta: options._meta })
  }
  return { uri: entry.uri, entry, resources } satisfies Skill
})

/**
 * Registers skills (their entries and their files) for as long as the current scope lasts: skills added and
 * removed at run time, as `Tool.register` does for tools (it is `McpServer.register("skill", skills, context)`).
 * Clients hear one `notifications/resources/list_changed` when they come and one when they go.
 */
export const register = (...skills: ReadonlyArray<Skill>): Effect.Effect<void, never, McpServer | Scope.Scope> =>
  Registration.register<never>("skill", skills)

/** A Layer making and registering skills for as long as it lives; fails when one cannot be made. */
export const layer = (...skills: ReadonlyArray<Options>): Layer.Layer<never, SkillError, McpServer> =>
  Layer.effectDiscard(makeAndRegister(skills))

const makeAndRegister = (skills: ReadonlyArray<Options>) =>
  Effect.flatMap(Effect.forEach(skills, make), (made) => register(...made))

/** Every file under `directory`, by `/`-separated path relative to `root`; links and special files are refused. */
const filesUnder = (
  fs: FileSystem.FileSystem,
  directory: string,
  relative: string,
  files: Record<string, Uint8Array>
): Effect.Effect<void, SkillError | PlatformError.PlatformError> =>
  Effect.flatMap(fs.readDirectoryEntries(directory), (entries) =>
    Effect.forEach(
      [...entries].sort((a, b) => (a.name < b.name ? -1 : 1)),
      (entry) => {
        const path = relative === "" ? entry.name : `${relative}/${entry.name}`
        const full = `${directory}/${entry.name}`
        if (entry.type === "Directory") return filesUnder(fs, full, path, files)
        if (entry.type === "File") {
          return Effect.map(fs.readFile(full), (bytes) => {
            files[path] = bytes
          })
        }
        return Effect.fail(
          new SkillError({ reason: "InvalidPath", message: `${full}: a ${entry.type} is not a file a skill may hold` })
        )
      },
      { discard: true }
    )
  )

/**
 * The skills stored under `root`: every folder holding a `SKILL.md` is a
 * skill (all the files under it are its files, read now); a folder without
 * one is an organisational prefix (`root/acme/pdf-processing/SKILL.md` is
 * served as `skill://acme/pdf-processing/SKILL.md`). Files are sent as
 * bytes, `SKILL.md` as text. Needs a `FileSystem` (`NodeFileSystem.layer`).
 */
export const fromDirectory = (
  root: string
): Effect.Effect<ReadonlyArray<Options>, SkillError | PlatformError.PlatformError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const found: Array<Options> = []
    const walk = (
      directory: string,
      prefix: ReadonlyArray<string>
    ): Effect.Effect<void, SkillError | PlatformError.PlatformError> =>
      Effect.gen(function* () {
        const entries = [...(yield* fs.readDirectoryEntries(directory))].sort((a, b) => (a.name < b.name ? -1 : 1))
        if (entries.some((e) => e.name === Skills.skillMd && e.type === "File")) {
          const files: Record<string, Uint8Array | string> = {}
          yield* filesUnder(fs, directory, "", files as Record<string, Uint8Array>)
          files[Skills.skillMd] = new TextDecoder().decode(files[Skills.skillMd] as Uint8Array)
          // The folder's own name gives way to the frontmatter's: the folders above it are the prefix.
          const above = prefix.slice(0, -1)
          found.push({ files, ...(above.length === 0 ? {} : { prefix: above.join("/") }) })
          return
        }
        for (const entry of entries) {
          if (entry.type === "Directory") yield* walk(`${directory}/${entry.name}`, [...prefix, entry.name])
        }
      })
    yield* walk(root.replace(/\/+$/, ""), [])
    return found
  })

/** A Layer serving the skills stored under `root` (see `fromDirectory`) for as long as it lives. */
export const layerDirectory = (
  root: string
): Layer.Layer<never, SkillError | PlatformError.PlatformError, McpServer | FileSystem.FileSystem> =>
  Layer.effectDiscard(Effect.flatMap(fromDirectory(root), makeAndRegister))
