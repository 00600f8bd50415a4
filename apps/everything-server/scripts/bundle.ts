/**
 * Bundles the built `mcp-everything-server` (`dist/main.js` and everything it
 * imports, effect included) with rolldown into `dist/bundle/main.mjs`, the file
 * the installed bin runs. A stdio server is a fresh process for every client
 * session, and loading one file instead of some 250 modules is most of its
 * start. The `--http` half stays a chunk of its own, loaded on first use.
 * Run by the repository's build (`scripts/build.ts`) after `tsc -b`, or alone:
 * `node apps/everything-server/scripts/bundle.ts`.
 *
 * Several builds may run at once (the install test and the bench each pack the
 * packages): one bundles at a time (a lock file), a bundle newer than every
 * built module it is made of is kept, and a new one replaces the old by rename.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "rolldown"

const packageDir = fileURLToPath(new URL("../", import.meta.url))
const repoRoot = path.resolve(packageDir, "../..")
const distDir = path.join(packageDir, "dist")

/** Where the bundle goes; the bin's `#main` import points at its `main.mjs`. */
export const bundleDir = path.join(distDir, "bundle")
const entry = path.join(bundleDir, "main.mjs")
// Beside `dist/`, not in it: nothing of a build in progress gets packed by another.
const lockFile = path.join(packageDir, ".bundle.lock")

const mtimeOf = (file: string): Promise<number> =>
  fs.stat(file).then(
    (s) => s.mtimeMs,
    () => 0
  )

/** The newest built module of the workspace packages and of this one (the bundle excluded). */
const newestInput = async (): Promise<number> => {
  const dists = [
    ...(await fs.readdir(path.join(repoRoot, "packages"))).map((p) => path.join(repoRoot, "packages", p, "dist")),
    distDir
  ]
  let newest = 0
  for (const dist of dists) {
    const entries = await fs.readdir(dist, { recursive: true, withFileTypes: true }).catch(() => [])
    for (const e of entries) {
      if (!e.isFile() || !e.name.endsWith(".js")) continue
      const file = path.join(e.parentPath, e.name)
      if (!file.startsWith(bundleDir + path.sep)) newest = Math.max(newest, await mtimeOf(file))
    }
  }
  return newest
}

/** Runs `f` holding the lock file; a lock older than a minute was left by a build that died. */
const withLock = async <A>(f: () => Promise<A>): Promise<A> => {
  for (let attempt = 0; ; attempt++) {
    const handle = await fs.open(lockFile, "wx").catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error
      return undefined
    })
    if (handle !== undefined) {
      await handle.close()
      break
    }
    if (Date.now() - (await mtimeOf(lockFile)) > 60_000) await fs.rm(lockFile, { force: true })
    else if (attempt > 1200) throw new Error(`${lockFile} held for too long`)
    else await new Promise((resolve) => setTimeout(resolve, 100))
  }
  try {
    return await f()
  } finally {
    await fs.rm(lockFile, { force: true })
  }
}

/** Bundles `dist/main.js` into `dist/bundle/` unless the bundle there is up to date; returns the entry's path. */
export const bundle = (): Promise<string> =>
  withLock(async () => {
    if ((await mtimeOf(entry)) > (await newestInput())) return entry
    const fresh = await fs.mkdtemp(path.join(packageDir, ".bundle-"))
    try {
      await build({
        input: path.join(distDir, "main.js"),
        platform: "node",
        logLevel: "warn",
        // ESM like the sources; `.mjs` so the files need no package.json around them to say so.
        output: { dir: fresh, format: "esm", entryFileNames: "main.mjs", chunkFileNames: "[name]-[hash].mjs" }
      })
      await fs.rm(bundleDir, { recursive: true, force: true })
      await fs.rename(fresh, bundleDir)
    } finally {
      await fs.rm(fresh, { recursive: true, force: true })
    }
    return entry
  })

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${await bundle()}\n`)
}
