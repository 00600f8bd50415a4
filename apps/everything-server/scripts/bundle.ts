/**
 * Bundles the built `mcp-everything-server` (`dist/main.js` and everything it
 * imports, effect included) with rolldown into `dist/bundle/main.mjs`, the file
 * the installed bin runs. A stdio server is a fresh process for every client
 * session, and loading one file instead of some 250 modules is most of its
 * start. The `--http` half stays a chunk of its own, loaded on first use.
 * Run by the repository's build (`scripts/build.ts`) after `tsc -b`, or alone:
 * `node apps/everything-server/scripts/bundle.ts`.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "rolldown"

const packageDir = fileURLToPath(new URL("../", import.meta.url))

/** Where the bundle goes; the bin's `#main` import points at its `main.mjs`. */
export const bundleDir = path.join(packageDir, "dist", "bundle")

/** Bundles `dist/main.js` into a fresh `dist/bundle/`; returns the entry's path. */
export const bundle = async (): Promise<string> => {
  await fs.rm(bundleDir, { recursive: true, force: true })
  await build({
    input: path.join(packageDir, "dist", "main.js"),
    platform: "node",
    logLevel: "warn",
    // ESM like the sources; `.mjs` so the files need no package.json around them to say so.
    output: { dir: bundleDir, format: "esm", entryFileNames: "main.mjs", chunkFileNames: "[name]-[hash].mjs" }
  })
  return path.join(bundleDir, "main.mjs")
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${await bundle()}\n`)
}
