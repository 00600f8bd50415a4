/**
 * The public API report of each published package, and the changeset rule.
 *
 * - `npm run api` (`node scripts/apiReport.ts`) writes `<package>/api.md` for every package of
 *   `publishable` (`scripts/build.ts`): every entry its package.json `exports` opens (`"."`, `"./*"` less
 *   `"./internal/*"`), each with its declarations as `tsc` emits them into `dist/**\/*.d.ts`, then the
 *   declarations of internal modules that those use, and what these use in turn (their types are part of
 *   the API even though the modules cannot be imported; the rest of an internal module is not). Every
 *   comment is left out (a doc edit is not an API change; a union member a comment moved to a line of its
 *   own goes back to `} | {`); `.ts` specifiers read `.js` (as `npm run build` leaves them); blank lines
 *   and trailing blanks are dropped; an entry's statements are sorted: imports, then re-exports, then
 *   declarations by name (overloads keep their order), so moving a declaration changes nothing. API
 *   Extractor would do this with a full type analysis, but with one entry point per configuration (these
 *   packages have 4 to 31 each), and on TypeScript 5's compiler API (TypeScript 7, the repository's,
 *   ships another).
 * - `npm run api:check` (`--check`, run by `npm test`) fails, listing the packages, when (1) a committed
 *   report differs from the generated one ("stale: run npm run api"), or (2) a package's API differs
 *   from its API at its last release and no pending changeset (`.changeset/*.md`) gives that package
 *   a `major`, `minor` or `patch` bump. It also refuses a changeset naming a package that is not
 *   published.
 * - `npm run version` runs `changeset version` (which consumes the changesets: versions, CHANGELOG.md),
 *   then this script with `--release`: the reports again, and the new release baseline.
 *
 * "The API at the last release" is `.changeset/api-baseline.json`: per package, the version it was
 * released at and a hash of each section of its report then. It is written only by `--release` (which
 * refuses while changesets are pending, so it runs after `changeset version` consumed them) and
 * committed with the release. A plain file in the tree rather than history read from git: it works on a
 * fresh or shallow clone, before any release was made (the first baseline is the state this rule
 * started from), and in tests on a directory of files. Hashes rather than a copy of each released
 * report: the report itself is in the tree and in review, and the hashes name the entries that
 * changed. A change of this script's output format (not of the API) rewrites the baseline by hand with
 * `--baseline`, in the same commit, and says so.
 *
 * The declarations come from `tsc -b` of the published projects (run first, under the build lock:
 * nothing to do when `npm run typecheck` or `npm run build` just ran). A `.d.ts` whose source file is
 * gone (a module deleted since the last build) is not part of the API.
 *
 * Runs on Node 24 (type stripping): `node scripts/apiReport.ts [--check | --release | --baseline]`.
 */
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { plainSpecifiers, publishable, root } from "./build.ts"
import { withBuildLock } from "./buildLock.ts"

// ---------------------------------------------------------------------------------------------------------
// Declarations: from the text of a `.d.ts` to its normalised statements
// ---------------------------------------------------------------------------------------------------------

// The end of the string literal (or template literal) that starts at `start`, past its closing quote.
const endOfString = (text: string, start: number): number => {
  const quote = text[start]
  let i = start + 1
  while (i < text.length) {
    const c = text[i]
    if (c === "\\") i += 2
    else if (c === quote) return i + 1
    else if (c === "\n" && quote !== "`") return i
    else i++
  }
  return i
}

/** `text` without its comments (`/* *\/`, `/** *\/`, `//`); string and template literals kept as they are. */
export const stripComments = (text: string): string => {
  const parts: Array<string> = []
  let from = 0
  let i = 0
  while (i < text.length) {
    const c = text[i]
    if (c === '"' || c === "'" || c === "`") i = endOfString(text, i)
    else if (c === "/" && text[i + 1] === "*") {
      parts.push(text.slice(from, i))
      const before = text[i - 1]
      const end = text.indexOf("*/", i + 2)
      i = from = end < 0 ? text.length : end + 2
      // `(/** doc */ a: A)` reads `(a: A)`: the blanks after a comment that follows a blank or a bracket go too.
      if (before === undefined || /[\s([{<,]/.test(before)) {
        while (text[i] === " " || text[i] === "\t") i++
        from = i
      }
    } else if (c === "/" && text[i + 1] === "/") {
      parts.push(text.slice(from, i))
      const end = text.indexOf("\n", i + 2)
      i = from = end < 0 ? text.length : end
    } else i++
  }
  parts.push(text.slice(from))
  return parts.join("")
}

// How much deeper in brackets the line ends than it starts (strings skipped).
const depthChange = (line: string): number => {
  let depth = 0
  let i = 0
  while (i < line.length) {
    const c = line[i]
    if (c === '"' || c === "'" || c === "`") {
      i = endOfString(line, i)
      continue
    }
    if (c === "{" || c === "(" || c === "[") depth++
    else if (c === "}" || c === ")" || c === "]") depth--
    i++
  }
  return depth
}

// A line that goes on with the type before it: tsc prints a union member after a comment on a line of its own.
const continuation = /^\s*(?:\||&|\?|:|=>|\.|\[|extends\b)/

/**
 * The top-level statements of declarations without comments: a statement ends on a line that closes
 * every bracket it opened and ends with `;`, or with `}` when the next line does not go on with it (a
 * `| {` union member, say). Blank lines and trailing blanks are dropped, a statement's first line
 * starts at its first character, and a union member that a comment moved to a line of its own goes back
 * where tsc prints it without the comment (`} | {`).
 */
export const splitStatements = (text: string): ReadonlyArray<string> => {
  const lines = text
    .split("\n")
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "")
  const statements: Array<string> = []
  let current: Array<string> = []
  let depth = 0
  lines.forEach((line, index) => {
    // tsc prints `} | {` on one line, and a `| {` after a comment on a line of its own: one form for both.
    if (current.length > 0 && /^\s*[|&]\s/.test(line)) current[current.length - 1] += ` ${line.trim()}`
    else current.push(current.length === 0 ? line.trimStart() : line)
    depth += depthChange(line)
    if (depth > 0) return
    const next = lines[index + 1]
    if (line.endsWith(";") || (line.endsWith("}") && (next === undefined || !continuation.test(next)))) {
      statements.push(current.join("\n"))
      current = []
      depth = 0
    }
  })
  if (current.length > 0) statements.push(current.join("\n"))
  return statements
}

const declaration =
  /^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:(?:const\s+enum|const|let|var|function|class|interface|type|namespace|module|enum)\s+([\w$]+)|(global)\b)/

// Where a statement sorts: imports, then re-exports and export lists, then declarations by name.
const sortKey = (statement: string): readonly [number, string] => {
  if (statement.startsWith("import ")) return [0, statement]
  const named = declaration.exec(statement)
  if (named !== null) return [2, named[1] ?? named[2]!]
  if (statement.startsWith("export ")) return [1, statement]
  return [3, statement]
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * The declarations of one `.d.ts` as the report shows them: no comments, `.js` specifiers, no blank
 * lines, no `export {};` marker, statements sorted (stably: overloads keep their order).
 */
export const normalizedStatements = (dts: string): ReadonlyArray<string> => {
  const statements = splitStatements(plainSpecifiers(stripComments(dts))).filter((s) => s !== "export {};")
  const keyed = statements.map((statement) => ({ statement, key: sortKey(statement) }))
  keyed.sort((a, b) => a.key[0] - b.key[0] || compare(a.key[1], b.key[1]))
  return keyed.map(({ statement }) => statement)
}

/** {@link normalizedStatements}, one text. */
export const normalizeDeclarations = (dts: string): string => normalizedStatements(dts).join("\n")

// ---------------------------------------------------------------------------------------------------------
// What declarations refer to in other modules
// ---------------------------------------------------------------------------------------------------------

/** Names a module's declarations take from another module (`"all"`: `export * from`). */
interface Reference {
  readonly specifier: string
  readonly names: ReadonlyArray<string> | "all"
}

// The names a type refers to: identifiers outside string literals, less property, parameter and method
// names (`name:`, `name?:`, `name(`: tsc prints no space there, and one before a conditional type's `:`).
const identifiers = (text: string): ReadonlySet<string> =>
  new Set(
    text
      .replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/g, "")
      .replace(/[A-Za-z_$][\w$]*\??[:(]/g, "")
      .match(/[A-Za-z_$][\w$]*/g) ?? []
  )

const bindings = (list: string): ReadonlyArray<{ readonly imported: string; readonly local: string }> =>
  list
    .split(",")
    .map((binding) => binding.trim().replace(/^type\s+/, ""))
    .filter((binding) => binding !== "")
    .map((binding) => {
      const [imported, local] = binding.split(/\s+as\s+/)
      return { imported: imported!, local: local ?? imported! }
    })

const namespaceImport = /^import\s+(?:type\s+)?\*\s+as\s+([\w$]+)\s+from\s+"([^"]+)";$/
const namedImport = /^import\s+(?:type\s+)?(?:([\w$]+)\s*,\s*)?\{([^}]*)\}\s*from\s+"([^"]+)";$/
const defaultImport = /^import\s+(?:type\s+)?([\w$]+)\s+from\s+"([^"]+)";$/
const starExport = /^export\s+(?:type\s+)?\*\s+(?:as\s+[\w$]+\s+)?from\s+"([^"]+)";$/
const namedExport = /^export\s+(?:type\s+)?\{([^}]*)\}\s*from\s+"([^"]+)";$/
const importType = /\bimport\(\s*"([^"]+)"\s*\)(?:\.([\w$]+))?/g

/**
 * What `statements` (one module's, normalised) take from other modules, given the statements kept
 * (`kept`): re-exports and `import("...")` types of the kept ones, and the imports whose bindings they use.
 * Returns the references and the import statements used.
 */
const referencesOf = (
  statements: ReadonlyArray<string>,
  kept: ReadonlyArray<string>
): { readonly references: ReadonlyArray<Reference>; readonly imports: ReadonlySet<string> } => {
  const body = kept.filter((statement) => !statement.startsWith("import ")).join("\n")
  const used = identifiers(body)
  const references: Array<Reference> = []
  const imports = new Set<string>()
  // An import is kept when the kept statements use one of its bindings.
  const take = (statement: string, specifier: string, names: ReadonlyArray<string>) => {
    if (names.length === 0) return
    imports.add(statement)
    references.push({ specifier, names })
  }
  for (const statement of statements) {
    const namespace = namespaceImport.exec(statement)
    const named = namedImport.exec(statement)
    const byDefault = defaultImport.exec(statement)
    if (namespace !== null) {
      const member = new RegExp(`\\b${namespace[1]!.replace(/\$/g, "\\$")}\\.([\\w$]+)`, "g")
      take(statement, namespace[2]!, [...new Set(Array.from(body.matchAll(member), (m) => m[1]!))])
    } else if (named !== null) {
      const names = bindings(named[2]!)
        .filter((b) => used.has(b.local))
        .map((b) => b.imported)
      take(statement, named[3]!, named[1] !== undefined && used.has(named[1]) ? [...names, "default"] : names)
    } else if (byDefault !== null) {
      take(statement, byDefault[2]!, used.has(byDefault[1]!) ? ["default"] : [])
    }
  }
  for (const statement of kept) {
    const star = starExport.exec(statement)
    const named = namedExport.exec(statement)
    if (star !== null) references.push({ specifier: star[1]!, names: "all" })
    else if (named !== null) {
      references.push({ specifier: named[2]!, names: bindings(named[1]!).map((b) => b.imported) })
    }
    for (const m of statement.matchAll(importType)) {
      references.push({ specifier: m[1]!, names: m[2] === undefined ? "all" : [m[2]] })
    }
  }
  return { references, imports }
}

/**
 * The statements of a module (normalised) that declare `wanted` names, with the declarations of the
 * same module they use (transitively) and the imports those use; all of them for `"all"`.
 */
export const keptStatements = (
  statements: ReadonlyArray<string>,
  wanted: ReadonlySet<string> | "all"
): ReadonlyArray<string> => {
  if (wanted === "all") return statements
  const declared = new Map<string, Array<number>>()
  statements.forEach((statement, index) => {
    const key = sortKey(statement)
    if (key[0] !== 2) return
    const indexes = declared.get(key[1]) ?? []
    indexes.push(index)
    declared.set(key[1], indexes)
  })
  const names = new Set<string>()
  const kept = new Set<number>()
  const want = (name: string) => {
    if (names.has(name)) return
    names.add(name)
    for (const index of declared.get(name) ?? []) {
      kept.add(index)
      for (const used of identifiers(statements[index]!)) if (declared.has(used)) want(used)
    }
  }
  for (const name of wanted) want(name)
  // Export lists naming a wanted name: local (`export { a as b };`, keeping `a`) or from another module
  // (`export { b } from "./x.js";`); `export * from` whenever a wanted name is not declared here.
  const undeclared = [...wanted].some((name) => !declared.has(name))
  statements.forEach((statement, index) => {
    if (undeclared && starExport.test(statement)) kept.add(index)
    const list = /^export\s+(?:type\s+)?\{([^}]*)\}(\s*from\s+"[^"]+")?;$/.exec(statement)
    if (list === null) return
    for (const binding of bindings(list[1]!)) {
      if (!wanted.has(binding.local)) continue
      kept.add(index)
      if (list[2] === undefined) want(binding.imported)
    }
  })
  const body = statements.filter((_, index) => kept.has(index))
  const { imports } = referencesOf(statements, body)
  return statements.filter((statement, index) => kept.has(index) || imports.has(statement))
}

// ---------------------------------------------------------------------------------------------------------
// A package's API: its entries, from `exports`, and the internal modules their types reach
// ---------------------------------------------------------------------------------------------------------

/**
 * One section of a report: a public entry (`@scope/p/Module`; the subpaths that reach one file,
 * comma-separated), or the declarations the entries use from an internal module (`dist/internal/x.d.ts`).
 */
export interface Section {
  readonly title: string
  readonly internal: boolean
  readonly declarations: string
}

/** The API of one package. */
export interface PackageApi {
  readonly dir: string
  readonly name: string
  readonly version: string
  readonly bin: ReadonlyArray<string>
  readonly sections: ReadonlyArray<Section>
  /** Odd things seen on the way (a reference that cannot be resolved, another package's internal module). */
  readonly warnings: ReadonlyArray<string>
}

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

interface Manifest {
  readonly name: string
  readonly version: string
  readonly exports?: Json
  readonly bin?: string | { readonly [name: string]: string }
}

// The `types` file a target of `exports` names (a condition object's `types`, or the `.d.ts` beside a `.js`).
const typesTarget = (target: Json): string | null | undefined => {
  if (target === null) return null
  if (typeof target === "string") return target.endsWith(".js") ? `${target.slice(0, -3)}.d.ts` : undefined
  if (typeof target !== "object" || Array.isArray(target)) return undefined
  const conditions = target as { readonly [key: string]: Json }
  if (typeof conditions.types === "string") return conditions.types
  return conditions.default === undefined ? undefined : typesTarget(conditions.default)
}

// Node's order of `exports` keys for a subpath: an exact key, else the pattern with the longest prefix.
const matchKey = (keys: ReadonlyArray<string>, subpath: string): { key: string; star: string } | undefined => {
  if (keys.includes(subpath)) return { key: subpath, star: "" }
  let best: { key: string; star: string } | undefined
  for (const key of keys) {
    const star = key.indexOf("*")
    if (star < 0) continue
    const prefix = key.slice(0, star)
    const suffix = key.slice(star + 1)
    if (!subpath.startsWith(prefix) || !subpath.endsWith(suffix) || subpath.length < key.length - 1) continue
    if (best === undefined || prefix.length > best.key.indexOf("*")) {
      best = { key, star: subpath.slice(prefix.length, subpath.length - suffix.length) }
    }
  }
  return best
}

/**
 * The public entries of a package: for every declaration file (`files`, relative paths) an `exports`
 * subpath resolves to, that file and the subpaths that reach it (`"."` and `"./index"` may both reach
 * `dist/index.d.ts`), sorted. A subpath a `null` target blocks (`"./internal/*"`) is not public.
 */
export const publicEntries = (
  exportsField: Json | undefined,
  files: ReadonlyArray<string>
): ReadonlyArray<{ readonly subpaths: ReadonlyArray<string>; readonly file: string }> => {
  if (exportsField === undefined || exportsField === null || typeof exportsField !== "object") return []
  const map = exportsField as { readonly [key: string]: Json }
  const keys = Object.keys(map).filter((key) => key.startsWith("."))
  const byFile = new Map<string, Set<string>>()
  const add = (subpath: string, file: string) => {
    const found = matchKey(keys, subpath)
    const target = found === undefined ? undefined : typesTarget(map[found.key]!)
    if (found === undefined || typeof target !== "string") return
    if (path.posix.normalize(target.replace("*", found.star)) !== path.posix.normalize(`./${file}`)) return
    const subpaths = byFile.get(file) ?? new Set<string>()
    subpaths.add(subpath)
    byFile.set(file, subpaths)
  }
  for (const key of keys) {
    const target = typesTarget(map[key]!)
    if (typeof target !== "string") continue
    const star = target.indexOf("*")
    if (star < 0 || !key.includes("*")) {
      if (files.includes(path.posix.normalize(target))) add(key, path.posix.normalize(target))
      continue
    }
    const prefix = path.posix.normalize(target.slice(0, star))
    const suffix = target.slice(star + 1)
    for (const file of files) {
      if (!file.startsWith(prefix) || !file.endsWith(suffix)) continue
      add(key.replace("*", file.slice(prefix.length, file.length - suffix.length)), file)
    }
  }
  // "." first, then by subpath; a file's shortest subpath names it.
  const order = (a: string, b: string): number => (a === "." ? -1 : b === "." ? 1 : compare(a, b))
  return [...byFile]
    .map(([file, subpaths]) => ({ file, subpaths: [...subpaths].sort(order) }))
    .sort((a, b) => order(a.subpaths[0]!, b.subpaths[0]!))
}

const entryTitle = (name: string, subpath: string): string => (subpath === "." ? name : `${name}/${subpath.slice(2)}`)

/**
 * The API of a package from its manifest and declaration files (relative path -> text): every public
 * entry, then every internal module they reach (transitively), each normalised.
 */
export const packageApi = (
  dir: string,
  manifest: Manifest,
  declarationFiles: ReadonlyMap<string, string>
): PackageApi => {
  const files = [...declarationFiles.keys()]
  const entries = publicEntries(manifest.exports, files)
  const publicFiles = new Set(entries.map((entry) => entry.file))
  const normalised = new Map<string, ReadonlyArray<string>>()
  const statementsOf = (file: string): ReadonlyArray<string> => {
    let statements = normalised.get(file)
    if (statements === undefined) {
      statements = normalizedStatements(declarationFiles.get(file) ?? "")
      normalised.set(file, statements)
    }
    return statements
  }
  const warnings = new Set<string>()
  // The internal modules the public declarations use, and which of their names, to a fixed point.
  const wanted = new Map<string, Set<string> | "all">()
  const follow = (file: string, kept: ReadonlyArray<string>): boolean => {
    let changed = false
    for (const statement of kept) {
      for (const m of statement.matchAll(/(?:\bfrom\s*|\bimport\(\s*)"(@effect-mcp\/[^/"]+\/internal\/[^"]*)"/g)) {
        warnings.add(`${file} refers to ${m[1]}, which its package does not export`)
      }
    }
    for (const { specifier, names } of referencesOf(statementsOf(file), kept).references) {
      if (!specifier.startsWith("./") && !specifier.startsWith("../")) continue
      const target = path.posix.join(path.posix.dirname(file), specifier).replace(/\.(?:js|ts)$/, ".d.ts")
      if (publicFiles.has(target)) continue
      if (!declarationFiles.has(target)) {
        warnings.add(`${file} refers to ${specifier}, which has no declarations`)
        continue
      }
      const before = wanted.get(target)
      if (before === "all") continue
      if (names === "all") {
        wanted.set(target, "all")
        changed = true
        continue
      }
      const set = before ?? new Set<string>()
      for (const name of names) {
        if (!set.has(name)) {
          set.add(name)
          changed = true
        }
      }
      wanted.set(target, set)
    }
    return changed
  }
  for (const file of publicFiles) follow(file, statementsOf(file))
  let changed = true
  while (changed) {
    changed = false
    for (const [file, names] of [...wanted]) {
      changed = follow(file, keptStatements(statementsOf(file), names)) || changed
    }
  }
  const sections: Array<Section> = entries.map(({ subpaths, file }) => ({
    title: subpaths.map((subpath) => entryTitle(manifest.name, subpath)).join(", "),
    internal: false,
    declarations: statementsOf(file).join("\n")
  }))
  for (const file of [...wanted.keys()].sort(compare)) {
    const kept = keptStatements(statementsOf(file), wanted.get(file)!)
    sections.push({ title: file, internal: true, declarations: kept.join("\n") })
  }
  const bin =
    manifest.bin === undefined
      ? []
      : typeof manifest.bin === "string"
        ? [manifest.name.replace(/^@[^/]+\//, "")]
        : Object.keys(manifest.bin)
  return {
    dir,
    name: manifest.name,
    version: manifest.version,
    bin: bin.sort(compare),
    sections,
    warnings: [...warnings]
  }
}

/** The report of a package, as committed in `<package>/api.md`. */
export const renderReport = (api: PackageApi): string => {
  const publicCount = api.sections.filter((s) => !s.internal).length
  const internalCount = api.sections.length - publicCount
  const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`
  const lines = [
    `# ${api.name}: public API`,
    "",
    "<!-- Generated by `npm run api` (scripts/apiReport.ts) from the emitted .d.ts, without comments. Do not edit. -->",
    "",
    `${count(publicCount, "entry", "entries")} (package.json \`exports\`)` +
      (internalCount === 0
        ? "."
        : `, then the declarations they use from ${count(internalCount, "internal module", "internal modules")}.`)
  ]
  if (api.bin.length > 0) {
    lines.push(
      "",
      `Commands (\`bin\`): ${api.bin.map((b) => `\`${b}\``).join(", ")}; their command line is not in this report.`
    )
  }
  for (const section of api.sections) {
    lines.push("", `## ${section.internal ? `internal: ${section.title}` : section.title}`, "", "```ts")
    if (section.declarations !== "") lines.push(section.declarations)
    lines.push("```")
  }
  return `${lines.join("\n")}\n`
}

// ---------------------------------------------------------------------------------------------------------
// The release baseline and the changesets
// ---------------------------------------------------------------------------------------------------------

/** Per package, the version of its last release and a hash of each section of its report then. */
export interface Baseline {
  readonly [name: string]: { readonly version: string; readonly sections: { readonly [title: string]: string } }
}

const hash = (text: string): string => createHash("sha256").update(text).digest("hex").slice(0, 16)

const sectionKey = (section: Section): string => (section.internal ? `internal: ${section.title}` : section.title)

/** The baseline entry of a package as it is now. */
export const baselineOf = (api: PackageApi): Baseline[string] => ({
  version: api.version,
  sections: Object.fromEntries(api.sections.map((s) => [sectionKey(s), hash(s.declarations)]))
})

/** The sections of a package whose API differs from the baseline: changed, added or removed (sorted). */
export const changedSections = (api: PackageApi, baseline: Baseline): ReadonlyArray<string> => {
  const released = baseline[api.name]?.sections ?? {}
  const now = baselineOf(api).sections
  const titles = new Set([...Object.keys(released), ...Object.keys(now)])
  return [...titles].filter((title) => released[title] !== now[title]).sort(compare)
}

/** One pending changeset: its file name and the bump it gives each package. */
export interface Changeset {
  readonly file: string
  readonly releases: ReadonlyArray<{ readonly name: string; readonly type: string }>
}

/**
 * The releases a changeset's front matter names (`"@scope/p": minor`, one a line, as `@changesets/parse`
 * reads them). Throws on a file without front matter or with a line it cannot read.
 */
export const parseChangeset = (file: string, text: string): Changeset => {
  const match = /^\s*---\r?\n([\s\S]*?)\r?\n\s*---(?:\s*\n|\s*$)/.exec(text)
  if (match === null) throw new Error(`${file}: a changeset starts with front matter between --- lines`)
  const releases: Array<{ name: string; type: string }> = []
  for (const line of match[1]!.split(/\r?\n/)) {
    if (line.trim() === "") continue
    const release = /^\s*(?:"([^"]+)"|'([^']+)'|([^\s:'"]+))\s*:\s*(\S+)\s*$/.exec(line)
    if (release === null) throw new Error(`${file}: cannot read the front matter line ${JSON.stringify(line)}`)
    releases.push({ name: release[1] ?? release[2] ?? release[3]!, type: release[4]! })
  }
  return { file, releases }
}

const bumps = new Set(["major", "minor", "patch"])

/** What is wrong, package by package: the check fails when this is not empty. */
export interface Problem {
  readonly name: string
  readonly message: string
}

/**
 * The changeset rule: each package whose API differs from the baseline is bumped (major, minor or patch)
 * by a pending changeset; every package a changeset names is published; every bump is a known one.
 */
export const changesetProblems = (
  apis: ReadonlyArray<PackageApi>,
  baseline: Baseline,
  changesets: ReadonlyArray<Changeset>
): ReadonlyArray<Problem> => {
  const problems: Array<Problem> = []
  const names = new Set(apis.map((api) => api.name))
  const bumped = new Set<string>()
  for (const changeset of changesets) {
    for (const { name, type } of changeset.releases) {
      if (!names.has(name)) problems.push({ name, message: `${changeset.file} names ${name}, which is not published` })
      else if (type === "none") continue
      else if (!bumps.has(type)) problems.push({ name, message: `${changeset.file} gives ${name} the bump "${type}"` })
      else bumped.add(name)
    }
  }
  for (const api of apis) {
    const changed = changedSections(api, baseline)
    if (changed.length === 0 || bumped.has(api.name)) continue
    const since = baseline[api.name] === undefined ? "never released" : `since ${baseline[api.name]!.version}`
    problems.push({
      name: api.name,
      message:
        `its API changed (${since}: ${changed.join(", ")}) and no pending changeset bumps it: ` +
        "`npx changeset` (major, minor or patch; a breaking change is minor while the version is 0.x)"
    })
  }
  return problems
}

// ---------------------------------------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------------------------------------

/** Where a package's report is committed. */
export const reportFile = (dir: string): string => path.join(dir, "api.md")

/** Where the release baseline is committed. */
export const baselineFile = (repo: string): string => path.join(repo, ".changeset", "api-baseline.json")

const readIfExists = (file: string): Promise<string | undefined> =>
  fs.readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined
    throw error
  })

/** Reads a package's API from its `package.json` and `dist/**\/*.d.ts` (those whose `src/` module exists). */
export const readPackageApi = async (repo: string, dir: string): Promise<PackageApi> => {
  const packageDir = path.join(repo, dir)
  const manifest = JSON.parse(await fs.readFile(path.join(packageDir, "package.json"), "utf8")) as Manifest
  const dist = path.join(packageDir, "dist")
  const found = await fs.readdir(dist, { recursive: true, withFileTypes: true }).catch(() => [])
  const files = new Map<string, string>()
  await Promise.all(
    found
      .filter((entry) => entry.isFile() && entry.name.endsWith(".d.ts"))
      .map(async (entry) => {
        const inDist = path.relative(dist, path.join(entry.parentPath, entry.name)).split(path.sep).join("/")
        const source = path.join(packageDir, "src", inDist.replace(/\.d\.ts$/, ".ts"))
        if ((await readIfExists(source)) === undefined) return
        files.set(`dist/${inDist}`, await fs.readFile(path.join(dist, inDist), "utf8"))
      })
  )
  return packageApi(dir, manifest, files)
}

/** The pending changesets in `<repo>/.changeset` (every `.md` but README.md, as changesets reads them). */
export const readChangesets = async (repo: string): Promise<ReadonlyArray<Changeset>> => {
  const dir = path.join(repo, ".changeset")
  const names = await fs.readdir(dir).catch(() => [] as Array<string>)
  const markdown = names
    .filter((n) => n.endsWith(".md") && !n.startsWith(".") && !/^(?:README|AGENTS|CLAUDE|GEMINI)\.md$/i.test(n))
    .sort(compare)
  return Promise.all(markdown.map(async (n) => parseChangeset(n, await fs.readFile(path.join(dir, n), "utf8"))))
}

/** The committed baseline (empty before the first one is written). */
export const readBaseline = async (repo: string): Promise<Baseline> => {
  const text = await readIfExists(baselineFile(repo))
  if (text === undefined) return {}
  const { $comment: _comment, ...baseline } = JSON.parse(text) as Baseline & { readonly $comment?: unknown }
  return baseline as Baseline
}

const baselineComment =
  "The API of each package at its last release (a hash per section of its api.md), written by `npm run version` " +
  "(scripts/apiReport.ts --release). npm run api:check asks for a changeset for a package whose API differs."

/** Writes the baseline from the packages' APIs now. */
export const writeBaseline = async (repo: string, apis: ReadonlyArray<PackageApi>): Promise<void> => {
  const baseline = Object.fromEntries(apis.map((api) => [api.name, baselineOf(api)]))
  await fs.writeFile(baselineFile(repo), `${JSON.stringify({ $comment: baselineComment, ...baseline }, null, 2)}\n`)
}

/** Writes every package's report; returns the directories of those whose report changed. */
export const writeReports = async (repo: string, apis: ReadonlyArray<PackageApi>): Promise<ReadonlyArray<string>> => {
  const changed: Array<string> = []
  for (const api of apis) {
    const file = reportFile(path.join(repo, api.dir))
    const report = renderReport(api)
    if ((await readIfExists(file)) === report) continue
    await fs.writeFile(file, report)
    changed.push(api.dir)
  }
  return changed
}

/** The directories whose committed report differs from the generated one (missing included). */
export const staleReports = async (repo: string, apis: ReadonlyArray<PackageApi>): Promise<ReadonlyArray<string>> => {
  const stale: Array<string> = []
  for (const api of apis) {
    if ((await readIfExists(reportFile(path.join(repo, api.dir)))) !== renderReport(api)) stale.push(api.dir)
  }
  return stale
}

/**
 * `npm run api:check`: the problems of the repository at `repo` (stale reports, API changes without a
 * changeset), for the packages `dirs`; empty when it passes.
 */
export const check = async (
  repo: string,
  dirs: ReadonlyArray<string>
): Promise<{ readonly apis: ReadonlyArray<PackageApi>; readonly problems: ReadonlyArray<Problem> }> => {
  const apis = await Promise.all(dirs.map((dir) => readPackageApi(repo, dir)))
  const problems: Array<Problem> = (await staleReports(repo, apis)).map((dir) => ({
    name: apis.find((api) => api.dir === dir)!.name,
    message: `${dir}/api.md is stale: run \`npm run api\` and commit it`
  }))
  problems.push(...changesetProblems(apis, await readBaseline(repo), await readChangesets(repo)))
  return { apis, problems }
}

const run = promisify(execFile)

/** `tsc -b` of the published projects, under the build lock (nothing to do when they are up to date). */
export const emitDeclarations = (): Promise<void> =>
  withBuildLock(async () => {
    const tsc = path.join(root, "node_modules/typescript/bin/tsc")
    await run(process.execPath, [tsc, "-b", ...publishable], { cwd: root, maxBuffer: 64 * 1024 * 1024 }).catch(
      (error: { stdout?: string; stderr?: string; message: string }) => {
        throw new Error(`tsc -b failed:\n${error.stdout ?? ""}${error.stderr ?? ""}`.trimEnd() || error.message)
      }
    )
  })

/** Where {@link main} works, and how it speaks (the defaults: this repository, the console). */
export interface MainOptions {
  readonly repo: string
  /** The package directories, relative to `repo`. */
  readonly dirs: ReadonlyArray<string>
  /** Run `tsc -b` of the published projects first. */
  readonly emit: boolean
  readonly log: (line: string) => void
  readonly error: (line: string) => void
}

const defaults: MainOptions = {
  repo: root,
  dirs: publishable,
  emit: true,
  log: (line) => console.log(line),
  error: (line) => console.error(line)
}

/**
 * The command: no mode writes the reports, `--check` checks them and the changeset rule, `--release`
 * writes the reports and the baseline (refused while changesets are pending), `--baseline` the same
 * without that guard. Returns the exit code.
 */
export const main = async (mode: string | undefined, options: Partial<MainOptions> = {}): Promise<number> => {
  const { repo, dirs, emit, log, error } = { ...defaults, ...options }
  if (mode !== undefined && !["--check", "--release", "--baseline"].includes(mode)) {
    error("usage: node scripts/apiReport.ts [--check | --release | --baseline]")
    return 2
  }
  if (emit) await emitDeclarations()
  if (mode === "--check") {
    const { apis, problems } = await check(repo, dirs)
    for (const api of apis) for (const warning of api.warnings) error(`api: ${api.name}: ${warning}`)
    if (problems.length === 0) {
      log(`api: ${apis.length} reports up to date, every API change since the last release has a changeset`)
      return 0
    }
    const failing = [...new Set(problems.map((p) => p.name))]
    error(`api: ${failing.length} package(s) fail the API check: ${failing.join(", ")}`)
    for (const problem of problems) error(`  ${problem.name}: ${problem.message}`)
    return 1
  }
  const apis = await Promise.all(dirs.map((dir) => readPackageApi(repo, dir)))
  if (mode === "--release" || mode === "--baseline") {
    const pending = await readChangesets(repo)
    if (mode === "--release" && pending.length > 0) {
      error(
        `api: ${pending.length} changeset(s) pending: run \`changeset version\` first (\`npm run version\` does both)`
      )
      return 1
    }
    await writeBaseline(repo, apis)
  }
  const changed = await writeReports(repo, apis)
  log(`api: ${apis.length} reports, ${changed.length} rewritten${changed.length > 0 ? `: ${changed.join(", ")}` : ""}`)
  return 0
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv[2])
}
