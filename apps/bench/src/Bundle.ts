/**
 * Deployed builds of the stdio servers, for W2's second cold start: each
 * server (effect-mcp, SDK, floor) bundled the same way by rolldown, as a
 * stdio server shipped through a package registry usually is. Loading one
 * file instead of a few hundred modules is most of a stdio server's start,
 * so both ways of shipping are measured.
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { build } from "rolldown"
import { serverScript } from "./EffectMcp.ts"

export interface Bundles {
  readonly effect: string
  readonly sdk: string
  readonly floor: string
  readonly remove: () => Promise<void>
}

const bundleOne = async (root: string, name: string): Promise<string> => {
  const dir = Path.join(root, name)
  await build({
    input: serverScript(`${name}.ts`),
    platform: "node",
    logLevel: "silent",
    // .mjs throughout: a .js file outside a package.json saying "module" makes Node sniff its syntax.
    output: { dir, format: "esm", entryFileNames: "server.mjs", chunkFileNames: "[name]-[hash].mjs" }
  })
  // The same start as the `.ts` entry points: compile cache on before the bundle loads.
  const entry = Path.join(dir, "main.mjs")
  await Fs.writeFile(
    entry,
    'import * as Module from "node:module"\nModule.enableCompileCache()\nawait import("./server.mjs")\n'
  )
  return entry
}

/** Bundles the three stdio servers into a fresh temporary directory. */
export const make = async (): Promise<Bundles> => {
  const root = await Fs.mkdtemp(Path.join(Os.tmpdir(), "effect-mcp-bench-bundles-"))
  const [effect, sdk, floor] = await Promise.all([
    bundleOne(root, "effectStdioServer"),
    bundleOne(root, "sdkStdioServer"),
    bundleOne(root, "floorStdioServer")
  ])
  return { effect, sdk, floor, remove: () => Fs.rm(root, { recursive: true, force: true }) }
}
