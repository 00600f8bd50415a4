/**
 * A package's API (`scripts/apiReport.ts`): its public entries, from the `exports` of its package.json
 * (`"."`, `"./*"` less `"./internal/*"`), each with its declarations, then the declarations of internal
 * modules that those use, and what these use in turn (their types are part of the API even though the
 * modules cannot be imported; the rest of an internal module is not). API Extractor would do this with a
 * full type analysis, but with one entry point per configuration (these packages have 4 to 31 each), and on
 * TypeScript 5's compiler API (TypeScript 7, the repository's, ships another).
 */
import * as path from "node:path"
import { compare, normalizedStatements } from "./declarations.ts"
import { keptStatements, referencesOf } from "./references.ts"

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

/** A JSON value, as package.json holds. */
export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

/** What the report reads from a package.json. */
export interface Manifest {
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
