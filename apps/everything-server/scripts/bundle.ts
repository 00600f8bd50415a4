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
 * packages): they take turns under the build lock, a bundle newer than every
 * built module it is made of is kept, and a new one replaces the old by rename.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "rolldown"
import { withBuildLock } from "../../../scripts/buildLock.ts"

const packageDir = fileURLToPath(new URL("../", import.meta.url))
const repoRoot = path.resolve(packageDir, "../..")
const distDir = path.join(packageDir, "dist")

/** Where the bundle goes; the bin's `#main` import points at its `main.mjs`. */
export const bundleDir = path.join(distDir, "bundle")
const entry = path.join(bundleDir, "main.mjs")

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
  // The bundle inlines the version it reads from package.json, which a release bumps without touching any `.js`.
  let newest = await mtimeOf(path.join(packageDir, "package.json"))
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

/**
 * Bundles `dist/main.js` into `dist/bundle/` unless the bundle there is up to date; returns the entry's path.
 * The caller holds the build lock (`scripts/buildLock.ts`).
 */
export const bundle = async (): Promise<string> => {
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
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${await withBuildLock(bundle)}\n`)
}
