/**
 * The repository's files (`scripts/apiReport.ts`): a package's manifest and emitted `dist/**\/*.d.ts` (those
 * whose `src/` module exists: a `.d.ts` whose source file is gone, a module deleted since the last build, is
 * not part of the API), the committed reports, the pending changesets and the release baseline.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { type Baseline, baselineOf, type Changeset, parseChangeset } from "./changesets.ts"
import { compare } from "./declarations.ts"
import { type Manifest, type PackageApi, packageApi } from "./packageApi.ts"
import { renderReport } from "./report.ts"

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
