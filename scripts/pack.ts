/**
 * Builds every publishable package and packs it with `npm pack`, as npm would
 * publish it: `node scripts/pack.ts [outDir]` (default `dist-pack/`), or
 * `packAll(outDir)` from a program (the cold-start bench).
 *
 * Each package is packed from a staged copy whose manifest has the workspace's
 * `@effect-mcp/source` condition removed: an installed package resolves only to
 * its built `dist/`, whatever conditions the consumer's Node runs with. The
 * staging ({@link withStaged}) is shared with `scripts/publish.ts`, so what is
 * packed is what is published.
 *
 * Runs on Node 24 (type stripping).
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { buildLocked, publishable, root } from "./build.ts"
import { withBuildLock } from "./buildLock.ts"

const run = promisify(execFile)

/** The export condition that points the workspace at the `.ts` sources. */
export const sourceCondition = "@effect-mcp/source"

/** One packed package: its name and the absolute path of its tarball. */
export interface Packed {
  readonly name: string
  readonly tarball: string
}

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

/** `exports` / `imports` without the source condition (a condition object left empty is dropped with it). */
export const withoutSourceCondition = (value: Json): Json => {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value
  const out: Record<string, Json> = {}
  for (const [key, inner] of Object.entries(value as { readonly [key: string]: Json })) {
    if (key === sourceCondition) continue
    out[key] = withoutSourceCondition(inner)
  }
  return out
}

/**
 * The Node versions the built JavaScript runs on. Only the published manifests declare it: in the workspace
 * (which runs on the pinned Node 24 whatever Node installed it) an `engines` field only makes `npm ci` on
 * another Node print an EBADENGINE block per package. 22.19 is the floor of what the packages run on:
 * `@effect/platform-node` 4.1 and undici 8 declare it, and on an older 22 effect's HTTP server answers every
 * POST with an empty reply (and `node:sqlite` needs a flag before 22.13).
 */
export const publishedEngines = { node: ">=22.19.0" } as const

/** The manifest as published: no source condition, no scripts or devDependencies of the workspace; `engines` added. */
export const publishedManifest = (manifest: { readonly [key: string]: Json }): { readonly [key: string]: Json } => {
  const { scripts: _scripts, devDependencies: _devDependencies, ...rest } = manifest
  const out: Record<string, Json> = { ...rest, engines: publishedEngines }
  if (out.exports !== undefined) out.exports = withoutSourceCondition(out.exports)
  if (out.imports !== undefined) out.imports = withoutSourceCondition(out.imports)
  return out
}

const emitted = /\.(?:d\.ts|js)(?:\.map)?$/

// A file of `dist/` is shipped only while its source exists: a module deleted or renamed since an
// earlier build leaves its old output behind, which `tsc -b` does not remove.
const hasSource = async (from: string, file: string): Promise<boolean> => {
  const relative = path.relative(path.join(from, "dist"), file)
  if (relative.startsWith("..") || !emitted.test(relative)) return true
  const source = path.join(from, "src", relative.replace(emitted, ".ts"))
  return fs.stat(source).then(
    () => true,
    () => false
  )
}

// Copies what `files` names (and the manifest, rewritten) into `stage`; npm applies `files` again when packing.
const stagePackage = async (dir: string, stage: string): Promise<void> => {
  const from = path.join(root, dir)
  const manifest = JSON.parse(await fs.readFile(path.join(from, "package.json"), "utf8"))
  await fs.mkdir(stage, { recursive: true })
  for (const entry of (manifest.files ?? []) as ReadonlyArray<string>) {
    if (entry.startsWith("!")) continue
    const source = path.join(from, entry)
    const exists = await fs.stat(source).then(
      () => true,
      () => false
    )
    if (exists)
      await fs.cp(source, path.join(stage, entry), { recursive: true, filter: (file) => hasSource(from, file) })
  }
  await fs.writeFile(path.join(stage, "package.json"), `${JSON.stringify(publishedManifest(manifest), null, 2)}\n`)
}

/** One publishable package staged as it is published: its workspace folder and the staged copy. */
export interface Staged {
  /** The package's folder in the workspace, relative to the root (`packages/server`). */
  readonly dir: string
  /** The absolute path of the staged copy: the folder `npm pack` / `npm publish` is given. */
  readonly stage: string
}

/**
 * Builds the repository (`tsc -b` and plain declarations), stages every publishable package in a fresh folder
 * under `parent`, runs `use` on the stages (in dependency order) and removes them again, whatever `use` did.
 */
export const withStaged = async <A>(parent: string, use: (staged: ReadonlyArray<Staged>) => Promise<A>): Promise<A> => {
  await fs.mkdir(parent, { recursive: true })
  const stageRoot = await fs.mkdtemp(path.join(parent, ".stage-"))
  try {
    const staged = publishable.map((dir) => ({ dir, stage: path.join(stageRoot, dir.replaceAll("/", "-")) }))
    // Built and copied under the build lock: no other build rewrites dist/ while it is staged.
    await withBuildLock(async () => {
      await buildLocked()
      for (const { dir, stage } of staged) await stagePackage(dir, stage)
    })
    return await use(staged)
  } finally {
    await fs.rm(stageRoot, { recursive: true, force: true })
  }
}

/**
 * Builds the repository, then packs every publishable package into `outDir`
 * (created if missing). Returns one entry per package, in dependency order.
 */
export const packAll = async (outDir: string): Promise<ReadonlyArray<Packed>> => {
  const destination = path.resolve(outDir)
  return withStaged(destination, async (staged) => {
    const stages = staged.map(({ stage }) => stage)
    const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", destination, ...stages], {
      cwd: path.dirname(stages[0]!),
      maxBuffer: 64 * 1024 * 1024
    })
    const packed = JSON.parse(stdout) as ReadonlyArray<{ readonly name: string; readonly filename: string }>
    return packed.map(({ name, filename }) => ({ name, tarball: path.join(destination, filename) }))
  })
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = process.argv[2] ?? path.join(root, "dist-pack")
  for (const { name, tarball } of await packAll(outDir)) console.log(`${name}\t${tarball}`)
}
