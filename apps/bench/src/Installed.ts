/**
 * The packages as a user gets them, for W2's cold start: every effect-mcp
 * package built and packed, the tarballs installed with npm into a temporary
 * project outside the workspace next to the official SDK, zod and the SDK's
 * reference everything server (the versions this package pins), and the
 * plain-JavaScript servers of `installed/` (two echo servers, two floors) copied in. Nothing there is
 * TypeScript: Node loads the built `dist` as published.
 */
import { execFile } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { packAll } from "../../../scripts/pack.ts"

export interface Installed {
  /** The temporary project (its `node_modules` holds the installed packages). */
  readonly dir: string
  /** The effect-mcp echo server (`effectEcho.mjs`). */
  readonly effectEcho: string
  /** The SDK's echo server (`sdkEcho.mjs`). */
  readonly sdkEcho: string
  /** Node alone answering `initialize` (`nodeFloor.mjs`). */
  readonly nodeFloor: string
  /** effect's Effect, Layer, Schema and Node runtime imported, then Node answering (`effectFloor.mjs`). */
  readonly effectFloor: string
  /** The installed `mcp-everything-server` launcher. */
  readonly effectEverything: string
  /** The installed `@modelcontextprotocol/server-everything` entry point (its bin). */
  readonly sdkEverything: string
  /** The `--import` hook that counts loaded modules (see `installed/countModules.mjs`). */
  readonly countModules: string
  /** The versions installed, for the table's notes. */
  readonly versions: { readonly sdkEverything: string }
  readonly remove: () => Promise<void>
}

const here = Path.dirname(fileURLToPath(import.meta.url))
const benchDir = Path.dirname(here)
const repoRoot = Path.resolve(benchDir, "../..")

const run = (command: string, args: ReadonlyArray<string>, cwd: string): Promise<string> =>
  new Promise((resolve, reject) => {
    execFile(command, args, { cwd, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error === null) resolve(stdout)
      else reject(new Error(`${command} ${args.join(" ")} failed: ${error.message}\n${stderr}`))
    })
  })

const readJson = async (file: string): Promise<Record<string, unknown>> =>
  JSON.parse(await Fs.readFile(file, "utf8")) as Record<string, unknown>

/** Packs, installs into a fresh temporary project and copies the echo servers in. */
export const make = async (): Promise<Installed> => {
  const dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "effect-mcp-bench-installed-"))
  try {
    const tarballs = (await packAll(Path.join(dir, "tarballs"))).map((packed) => packed.tarball)
    const bench = await readJson(Path.join(benchDir, "package.json"))
    const root = await readJson(Path.join(repoRoot, "package.json"))
    const pinned = {
      ...(root.dependencies as object),
      ...(bench.dependencies as object),
      ...(bench.devDependencies as object)
    } as Record<string, string>
    const pick = (name: string) => {
      const version = pinned[name]
      if (version === undefined) throw new Error(`no pinned version of ${name}`)
      return version
    }
    const project = {
      name: "effect-mcp-bench-installed",
      private: true,
      type: "module",
      dependencies: {
        effect: pick("effect"),
        "@effect/platform-node": pick("@effect/platform-node"),
        "@modelcontextprotocol/sdk": pick("@modelcontextprotocol/sdk"),
        "@modelcontextprotocol/server-everything": pick("@modelcontextprotocol/server-everything"),
        zod: pick("zod")
      }
    }
    await Fs.writeFile(Path.join(dir, "package.json"), JSON.stringify(project, null, 2))
    // The tarballs by path, next to the registry packages above (npm names each from its own package.json).
    await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...tarballs], dir)
    for (const file of ["effectEcho.mjs", "sdkEcho.mjs", "nodeFloor.mjs", "effectFloor.mjs", "countModules.mjs"]) {
      await Fs.copyFile(Path.join(benchDir, "installed", file), Path.join(dir, file))
    }
    const modules = Path.join(dir, "node_modules")
    const sdkEverythingPackage = Path.join(modules, "@modelcontextprotocol", "server-everything")
    const sdkEverythingJson = await readJson(Path.join(sdkEverythingPackage, "package.json"))
    const sdkEverythingBin = sdkEverythingJson.bin as Record<string, string>
    return {
      dir,
      effectEcho: Path.join(dir, "effectEcho.mjs"),
      sdkEcho: Path.join(dir, "sdkEcho.mjs"),
      nodeFloor: Path.join(dir, "nodeFloor.mjs"),
      effectFloor: Path.join(dir, "effectFloor.mjs"),
      effectEverything: await Fs.realpath(Path.join(modules, ".bin", "mcp-everything-server")),
      sdkEverything: Path.join(sdkEverythingPackage, sdkEverythingBin["mcp-server-everything"]!),
      countModules: Path.join(dir, "countModules.mjs"),
      versions: { sdkEverything: String(sdkEverythingJson.version) },
      remove: () => Fs.rm(dir, { recursive: true, force: true })
    }
  } catch (error) {
    await Fs.rm(dir, { recursive: true, force: true })
    throw error
  }
}
