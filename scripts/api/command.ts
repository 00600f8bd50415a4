/**
 * The command (`node scripts/apiReport.ts [--check | --release | --baseline]`): no mode writes the reports,
 * `--check` checks them and the changeset rule, `--release` writes the reports and the baseline, `--baseline`
 * the same without the guard against pending changesets. The declarations come from `tsc -b` of the
 * published projects, run first under the build lock (nothing to do when `npm run typecheck` or
 * `npm run build` just ran).
 */
import { execFile } from "node:child_process"
import * as path from "node:path"
import { promisify } from "node:util"
import { publishable, root } from "../build.ts"
import { withBuildLock } from "../buildLock.ts"
import { changesetProblems, type Problem } from "./changesets.ts"
import type { PackageApi } from "./packageApi.ts"
import {
  readBaseline,
  readChangesets,
  readPackageApi,
  staleReports,
  writeBaseline,
  writeReports
} from "./repository.ts"

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
