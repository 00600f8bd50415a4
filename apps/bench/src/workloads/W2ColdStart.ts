/**
 * W2, cold start from the installed packages: what a user who installed
 * effect-mcp (or the SDK) from a registry sees when a client starts the
 * server. The echo servers (`installed/*.mjs`, plain JavaScript over the
 * installed `dist`), the same two shipped bundled by the recipe of
 * docs/shipping.md (`examples/shipping/`), and the two everything servers (effect-mcp's installed
 * `mcp-everything-server` bin, the SDK's reference
 * `@modelcontextprotocol/server-everything`) are each started in three ways:
 * as installed (no compile-cache setting: whatever the server does itself),
 * with Node's compile cache disabled (`NODE_DISABLE_COMPILE_CACHE=1`, which
 * also turns off a launcher's own `module.enableCompileCache()`), and with
 * `NODE_COMPILE_CACHE` pointing at a cache that a first start filled.
 * Cold start is spawn to `initialize` answered (see ColdStart.ts); the
 * modules a start loads are counted once, in a run of their own.
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as ColdStart from "../ColdStart.ts"
import * as Installed from "../Installed.ts"
import type { Measurement, Metric, RatioSpec, Table } from "../Table.ts"
import { type Candidate, rounds, type Settings } from "../Workload.ts"

interface Server extends Candidate {
  readonly server: (installed: Installed.Installed) => ColdStart.Server
}

const servers: ReadonlyArray<Server> = [
  { id: "effect-echo", label: "effect-mcp echo", server: (i) => ({ script: i.effectEcho }) },
  { id: "sdk-echo", label: "SDK echo", server: (i) => ({ script: i.sdkEcho }) },
  {
    id: "effect-echo-shipped",
    label: "effect-mcp echo, bundled by its user (examples/shipping)",
    server: (i) => ({ script: i.effectEchoShipped })
  },
  {
    id: "sdk-echo-shipped",
    label: "SDK echo, bundled the same way",
    server: (i) => ({ script: i.sdkEchoShipped })
  },
  {
    id: "effect-everything",
    label: "effect-mcp everything (mcp-everything-server)",
    server: (i) => ({ script: i.effectEverything, args: ["--stdio"] })
  },
  {
    id: "sdk-everything",
    label: "SDK everything (server-everything)",
    server: (i) => ({ script: i.sdkEverything, args: ["stdio"] })
  },
  {
    id: "effect-floor",
    label: "effect floor (effect imported, no MCP library)",
    server: (i) => ({ script: i.effectFloor })
  },
  { id: "node-floor", label: "Node floor (no library)", server: (i) => ({ script: i.nodeFloor }) }
]

/** How a start is made: the compile-cache settings of its environment. */
const modes = (cacheDir: string) =>
  [
    { key: "plain", set: {} },
    { key: "noCache", set: { NODE_DISABLE_COMPILE_CACHE: "1" } },
    { key: "cache", set: { NODE_COMPILE_CACHE: cacheDir } }
  ] as const

const environment = (set: Readonly<Record<string, string>>): NodeJS.ProcessEnv => {
  const env = { ...process.env }
  delete env.NODE_COMPILE_CACHE
  delete env.NODE_DISABLE_COMPILE_CACHE
  // The workspace's npm scripts pass `--conditions=@effect-mcp/source` this way; a user's Node has none.
  delete env.NODE_OPTIONS
  return { ...env, ...set }
}

const metrics: ReadonlyArray<Metric> = [
  { key: "plain", label: "cold start ms, as installed", digits: 0 },
  { key: "noCache", label: "ms, no compile cache", digits: 0 },
  { key: "cache", label: "ms, NODE_COMPILE_CACHE", digits: 0 },
  { key: "cpuNoCache", label: "main-thread CPU ms, no compile cache", digits: 0 },
  { key: "cpuCache", label: "main-thread CPU ms, NODE_COMPILE_CACHE", digits: 0 },
  { key: "modules", label: "modules loaded", digits: 0 }
]

const timed = ["plain", "noCache", "cache", "cpuNoCache", "cpuCache", "modules"]

const ratios: ReadonlyArray<RatioSpec> = [
  { label: "effect-mcp echo / SDK echo", numerator: "effect-echo", denominator: "sdk-echo", metrics: timed },
  // What a user who ships their server bundled (docs/shipping.md) gets, against the SDK's server as installed
  // (the issue's comparison) and against the SDK's server shipped the same way.
  {
    label: "effect-mcp echo bundled / SDK echo",
    numerator: "effect-echo-shipped",
    denominator: "sdk-echo",
    metrics: timed
  },
  {
    label: "effect-mcp echo bundled / SDK echo bundled",
    numerator: "effect-echo-shipped",
    denominator: "sdk-echo-shipped",
    metrics: timed
  },
  {
    label: "effect-mcp everything / SDK everything",
    numerator: "effect-everything",
    denominator: "sdk-everything",
    metrics: timed
  },
  // effect's own import cost against the SDK's whole server: the part of the echo ratio no change here can remove.
  { label: "effect floor / SDK echo", numerator: "effect-floor", denominator: "sdk-echo", metrics: timed }
]

/** Installs the packages, counts modules, fills the compile cache, then times starts in interleaved rounds. */
export const run = async (settings: Settings): Promise<Table> => {
  const installStart = performance.now()
  const installed = await Installed.make()
  settings.log(`  installed the packed packages in ${((performance.now() - installStart) / 1000).toFixed(1)} s`)
  const cacheDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "effect-mcp-bench-compile-cache-"))
  try {
    const counts = new Map<string, number>()
    for (const candidate of servers) {
      const server = candidate.server(installed)
      counts.set(candidate.id, await ColdStart.countModules(server, installed.countModules, environment({})))
      // One start of each kind before timing: the compile caches (the mode's and a launcher's own) hold the code.
      for (const mode of modes(cacheDir)) await ColdStart.initializeAnswered(server, environment(mode.set))
    }
    const series = await rounds(
      // Cold starts are short: at least 9 rounds outside quick mode.
      { ...settings, rounds: settings.quick ? settings.rounds : Math.max(settings.rounds, 9) },
      servers,
      async (candidate): Promise<Measurement> => {
        const server = candidate.server(installed)
        const measured: Record<string, number> = {}
        for (const mode of modes(cacheDir)) {
          const start = await ColdStart.initializeAnswered(server, environment(mode.set))
          measured[mode.key] = start.ms
          if (mode.key !== "plain") measured[`cpu${mode.key[0]!.toUpperCase()}${mode.key.slice(1)}`] = start.cpuMs
        }
        const count = counts.get(candidate.id)!
        return { ...measured, modules: count }
      }
    )
    return {
      id: "W2-cold-installed",
      title: "W2 cold start from the installed packages: spawn to initialize answered",
      metrics,
      ratios,
      notes: [
        "Every effect-mcp package built, packed with npm and installed from the tarballs into a temporary project outside the workspace, next to the SDK, zod and `@modelcontextprotocol/server-everything` " +
          `${installed.versions.sdkEverything} from the registry; the echo servers are plain \`.mjs\` files (\`apps/bench/installed/\`) over the installed \`dist\`, no type stripping.`,
        "As installed: no compile-cache variable set (a launcher may turn the cache on itself); no compile cache: `NODE_DISABLE_COMPILE_CACHE=1`; NODE_COMPILE_CACHE: a cache directory filled by a first start.",
        "Bundled by its user: the echo server shipped as docs/shipping.md says, by the recipe of `examples/shipping/` (its `rolldown.config.mjs` run with `rolldown -c` in the project, then its launcher `bin/server.mjs`, which turns Node's compile cache on before it imports the bundle); the SDK echo bundled and started by the same recipe, for reference.",
        "The installed `mcp-everything-server` bin runs the rolldown bundle its package ships (`dist/bundle/main.mjs`, built with the package) and turns Node's compile cache on itself; the SDK's bin runs its modules. The echo servers are the user's own `.mjs` over the installed modules: no bundle, no cache unless the environment sets one.",
        "Cold start is spawn to the `initialize` response read by a bare client (one NDJSON line out, one in). Modules: files loaded (ESM and CommonJS, counted by a `module.registerHooks` resolve hook) by the time `initialize` was answered.",
        "Main-thread CPU: the server's main thread's CPU time when the answer arrived (`/proc/<pid>/schedstat`), where modules are compiled, linked and run; far steadier than wall time on a shared machine.",
        "The floors split a start: the Node floor answers `initialize` with Node alone; the effect floor first imports what every effect-mcp server imports from effect itself (`effect/Effect`, `effect/Layer`, `effect/Schema`, `@effect/platform-node/NodeRuntime`), so effect-mcp echo minus effect floor is effect-mcp's own share and effect floor minus Node floor is effect's."
      ],
      series
    }
  } finally {
    await Fs.rm(cacheDir, { recursive: true, force: true })
    await installed.remove()
  }
}
