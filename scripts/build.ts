/**
 * `npm run build`: type-checks and emits every published project (`tsc -b`), then makes the
 * emitted declarations plain: TypeScript rewrites the `.ts` of relative imports
 * to `.js` in the JavaScript it emits but keeps them in `.d.ts` files, and a
 * published package should name only files it ships.
 *
 * Runs on Node 24 (type stripping): `node scripts/build.ts`.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { bundle as bundleEverythingServer } from "../apps/everything-server/scripts/bundle.ts"
import { withBuildLock } from "./buildLock.ts"

const run = promisify(execFile)

/** The repository root. */
export const root = fileURLToPath(new URL("../", import.meta.url))

/** The packages that are published, in dependency order. */
export const publishable: ReadonlyArray<string> = [
  "packages/protocol",
  "packages/engine",
  "packages/http",
  "packages/server",
  "packages/client",
  "packages/auth",
  "packages/platform-node",
  "packages/host",
  "packages/gateway",
  "packages/sql",
  "packages/cluster",
  "packages/testing",
  "apps/everything-server",
  "apps/cli"
]

/** The folders whose `dist/` the build makes: the published packages, and the conformance client's bin. */
export const publishedDirs: ReadonlyArray<string> = [...publishable, "apps/conformance-client"]

// A relative specifier ending in `.ts` (not `.d.ts`), quoted, as in `from "./Tool.ts"` or `import("../x.ts")`.
const tsSpecifier = /(["'])(\.{1,2}\/[^"'\n]*?)(?<!\.d)\.ts\1/g

/** `source` with every relative `.ts` specifier ending in `.js` instead (same length: source maps stay valid). */
export const plainSpecifiers = (source: string): string => source.replace(tsSpecifier, "$1$2.js$1")

const declarationsUnder = async (dir: string): Promise<ReadonlyArray<string>> => {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => [])
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith(".d.ts"))
    .map((entry) => path.join(entry.parentPath, entry.name))
}

/** Rewrites the `.d.ts` files of every published `dist/`; returns how many changed. */
export const plainDeclarations = async (): Promise<number> => {
  let changed = 0
  for (const dir of publishedDirs) {
    for (const file of await declarationsUnder(path.join(root, dir, "dist"))) {
      const source = await fs.readFile(file, "utf8")
      const plain = plainSpecifiers(source)
      if (plain !== source) {
        // Write beside it, then rename: a reader (tsc of another project) never sees half a file.
        const temporary = `${file}.${process.pid}.tmp`
        await fs.writeFile(temporary, plain)
        await fs.rename(temporary, file)
        changed++
      }
    }
  }
  return changed
}

/** {@link build} without taking the lock, for a caller that already holds it. */
export const buildLocked = async (): Promise<void> => {
  const tsc = path.join(root, "node_modules/typescript/bin/tsc")
  // Only the published projects (and what they reference): the tests' type errors are `npm run typecheck`'s business.
  await run(process.execPath, [tsc, "-b", ...publishedDirs], { cwd: root, maxBuffer: 64 * 1024 * 1024 }).catch(
    (error: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`tsc -b failed:\n${error.stdout ?? ""}${error.stderr ?? ""}`.trimEnd() || error.message)
    }
  )
  await plainDeclarations()
  await bundleEverythingServer()
}

/**
 * `tsc -b` of the published projects with the repository's TypeScript, then {@link plainDeclarations}, then the
 * bundle the everything server's bin runs (`apps/everything-server/scripts/bundle.ts`); one build at a time.
 */
export const build = (): Promise<void> => withBuildLock(buildLocked)

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await build()
}
