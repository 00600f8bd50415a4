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

const run = promisify(execFile)

/** The repository root. */
export const root = fileURLToPath(new URL("../", import.meta.url))

/** The folders whose `dist/` is published. */
export const publishedDirs: ReadonlyArray<string> = [
  "packages/protocol",
  "packages/engine",
  "packages/server",
  "packages/client",
  "packages/platform-node",
  "packages/testing",
  "apps/everything-server",
  "apps/conformance-client"
]

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

// Beside the packages, not in a dist/: one build at a time in this work tree (the install test and the
// cold-start bench both pack under `npm test`, and two `tsc -b` writing the same outputs race).
const lockFile = path.join(root, ".build.lock")
const staleLockMs = 5 * 60_000

const lockAge = (): Promise<number> =>
  fs.stat(lockFile).then(
    (stat) => Date.now() - stat.mtimeMs,
    () => 0
  )

/** Runs `f` while holding the build lock (waiting for another build to finish; a lock older than 5 minutes is stale). */
export const withBuildLock = async <A>(f: () => Promise<A>): Promise<A> => {
  const deadline = Date.now() + 2 * staleLockMs
  for (;;) {
    const handle = await fs.open(lockFile, "wx").catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error
      return undefined
    })
    if (handle !== undefined) {
      await handle.close()
      break
    }
    if ((await lockAge()) > staleLockMs) await fs.rm(lockFile, { force: true })
    else if (Date.now() > deadline) throw new Error(`${lockFile} is held by another build for too long`)
    else await new Promise((resolve) => setTimeout(resolve, 100))
  }
  try {
    return await f()
  } finally {
    await fs.rm(lockFile, { force: true })
  }
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
