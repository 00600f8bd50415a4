/**
 * The packages as a user gets them, for W2's cold start: every effect-mcp
 * package built and packed, the tarballs installed with npm into a temporary
 * project outside the workspace next to the official SDK, zod and the SDK's
 * reference everything server (the versions this package pins), and the
 * plain-JavaScript servers of `installed/` (two echo servers, two floors) copied in. Nothing there is
 * TypeScript: Node loads the built `dist` as published. Each echo server is also
 * shipped the way docs/shipping.md tells a user to ship theirs: bundled by the
 * recipe of `examples/shipping/` (its rolldown config, run by the rolldown
 * command line in the project) and started by that recipe's launcher.
 */
import { execFile } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import { packAll } from "../../../scripts/pack.ts"

export interface Installed {
  /** The temporary project (its `node_modules` holds the installed packages). */
  readonly dir: string
  /** The effect-mcp echo server (`effectEcho.mjs`). */
  readonly effectEcho: string
  /** The SDK's echo server (`sdkEcho.mjs`). */
  readonly sdkEcho: string
  /** The launcher of effectEcho.mjs bundled by the `examples/shipping/` recipe. */
  readonly effectEchoShipped: string
  /** The launcher of sdkEcho.mjs bundled by the same recipe. */
  readonly sdkEchoShipped: string
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
  /** The `--import` hook that times module loading for a profiled start (see `installed/profileStart.mjs`). */
  readonly profileStart: string
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

const shippingRecipe = Path.join(repoRoot, "examples", "shipping")
const rolldownCli = Path.join(
  Path.dirname(createRequire(import.meta.url).resolve("rolldown/package.json")),
  "bin",
  "cli.mjs"
)

/**
 * Ships `server` (a file of the project) as the recipe says: the recipe's files and the server (as the
 * recipe's `server.mjs`) in a folder of the project, `rolldown -c rolldown.config.mjs` run there (imports
 * resolve to the project's installed packages); returns the launcher, `bin/server.mjs`.
 */
const ship = async (project: string, server: string, name: string): Promise<string> => {
  const dir = Path.join(project, name)
  await Fs.cp(shippingRecipe, dir, { recursive: true, filter: (file) => !file.endsWith(".md") })
  await Fs.copyFile(Path.join(project, server), Path.join(dir, "server.mjs"))
  await run(process.execPath, [rolldownCli, "-c", "rolldown.config.mjs"], dir)
  return Path.join(dir, "bin", "server.mjs")
}

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
    const files = [
      "effectEcho.mjs",
      "sdkEcho.mjs",
      "nodeFloor.mjs",
      "effectFloor.mjs",
      "countModules.mjs",
      "profileStart.mjs"
    ]
    for (const file of files) {
      await Fs.copyFile(Path.join(benchDir, "installed", file), Path.join(dir, file))
    }
    const [effectEchoShipped, sdkEchoShipped] = await Promise.all([
      ship(dir, "effectEcho.mjs", "effect-echo-shipped"),
      ship(dir, "sdkEcho.mjs", "sdk-echo-shipped")
    ])
    const modules = Path.join(dir, "node_modules")
    const sdkEverythingPackage = Path.join(modules, "@modelcontextprotocol", "server-everything")
    const sdkEverythingJson = await readJson(Path.join(sdkEverythingPackage, "package.json"))
    const sdkEverythingBin = sdkEverythingJson.bin as Record<string, string>
    return {
      dir,
      effectEcho: Path.join(dir, "effectEcho.mjs"),
      sdkEcho: Path.join(dir, "sdkEcho.mjs"),
      effectEchoShipped,
      sdkEchoShipped,
      nodeFloor: Path.join(dir, "nodeFloor.mjs"),
      effectFloor: Path.join(dir, "effectFloor.mjs"),
      effectEverything: await Fs.realpath(Path.join(modules, ".bin", "mcp-everything-server")),
      sdkEverything: Path.join(sdkEverythingPackage, sdkEverythingBin["mcp-server-everything"]!),
      countModules: Path.join(dir, "countModules.mjs"),
      profileStart: Path.join(dir, "profileStart.mjs"),
      versions: { sdkEverything: String(sdkEverythingJson.version) },
      remove: () => Fs.rm(dir, { recursive: true, force: true })
    }
  } catch (error) {
    await Fs.rm(dir, { recursive: true, force: true })
    throw error
  }
}
