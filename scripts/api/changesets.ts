/**
 * The release baseline and the changeset rule (`npm run api:check`, `scripts/apiReport.ts`).
 *
 * "The API at the last release" is `.changeset/api-baseline.json`: per package, the version it was
 * released at and a hash of each section of its report then. It is written only by `--release` (which
 * refuses while changesets are pending, so it runs after `changeset version` consumed them) and
 * committed with the release. A plain file in the tree rather than history read from git: it works on a
 * fresh or shallow clone, before any release was made (the first baseline is the state this rule
 * started from), and in tests on a directory of files. Hashes rather than a copy of each released
 * report: the report itself is in the tree and in review, and the hashes name the entries that
 * changed. A change of the report's format (not of the API) rewrites the baseline by hand with
 * `--baseline`, in the same commit, and says so.
 *
 * A package whose API differs from the baseline must be bumped (`major`, `minor` or `patch`) by a pending
 * changeset (`.changeset/*.md`); a changeset may name only published packages.
 */
import { createHash } from "node:crypto"
import { compare } from "./declarations.ts"
import type { PackageApi, Section } from "./packageApi.ts"

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
