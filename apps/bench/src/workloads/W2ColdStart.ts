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
 * modules a start loads are counted once, in a run of their own. A second
 * table charges the effect-mcp echo server's start (no compile cache) to the
 * packages whose modules load and run, next to the effect floor's
 * (StartProfile.ts): effect-mcp's own share, package by package.
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as ColdStart from "../ColdStart.ts"
import * as Installed from "../Installed.ts"
import * as StartProfile from "../StartProfile.ts"
import type { Measurement, Metric, RatioSpec, Series, Table } from "../Table.ts"
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

/** The effect-mcp packages an echo server over stdio loads, each a row of the by-package table. */
export const effectMcpPackages = [
  "@effect-mcp/protocol",
  "@effect-mcp/engine",
  "@effect-mcp/server",
  "@effect-mcp/platform-node"
] as const

/** The rows of the by-package table: the echo server's start by package, then the effect floor's. */
export const byPackageRows: ReadonlyArray<{ readonly id: string; readonly label: string }> = [
  { id: "effect-mcp", label: "effect-mcp, all packages" },
  ...effectMcpPackages.map((name) => ({ id: name, label: name })),
  { id: "effect", label: "effect" },
  { id: "platform-node", label: "@effect/platform-node (and -shared)" },
  { id: "other", label: "other packages" },
  { id: StartProfile.script, label: "the server script" },
  { id: StartProfile.node, label: "Node (bootstrap, linking, event loop)" },
  { id: StartProfile.gc, label: "garbage collection" },
  { id: "all", label: "whole start" },
  { id: "floor-effect", label: "effect floor: effect" },
  { id: "floor-all", label: "effect floor: whole start" }
]

const byPackageMetrics: ReadonlyArray<Metric> = [
  { key: "load", label: "loading ms (resolve, read, compile)", digits: 1 },
  { key: "run", label: "running ms", digits: 1 },
  { key: "total", label: "total ms", digits: 1 },
  { key: "modules", label: "modules", digits: 0 }
]

const rowOf = (name: string): string =>
  name.startsWith("@effect-mcp/")
    ? (effectMcpPackages as ReadonlyArray<string>).includes(name)
      ? name
      : "other"
    : name === "@effect/platform-node" || name === "@effect/platform-node-shared"
      ? "platform-node"
      : name === "effect" || name === StartProfile.script || name === StartProfile.node || name === StartProfile.gc
        ? name
        : "other"

/** One profiled start of the echo server (and one of the effect floor) as the by-package table's rows. */
export const byPackageMeasurements = (
  echo: StartProfile.Start,
  floor: StartProfile.Start
): ReadonlyMap<string, Measurement> => {
  const rows = new Map<string, { load: number; run: number; modules: number }>(
    byPackageRows.map((row) => [row.id, { load: 0, run: 0, modules: 0 }])
  )
  const add = (id: string, share: StartProfile.Share) => {
    const row = rows.get(id)!
    row.load += share.loadMs
    row.run += share.runMs
    row.modules += share.modules
  }
  for (const [name, share] of echo.shares) {
    const id = rowOf(name)
    add(id, share)
    if (name.startsWith("@effect-mcp/")) add("effect-mcp", share)
    add("all", share)
  }
  for (const [name, share] of floor.shares) {
    if (name === "effect") add("floor-effect", share)
    add("floor-all", share)
  }
  const out = new Map<string, Measurement>()
  for (const [id, row] of rows) {
    out.set(id, { load: row.load, run: row.run, total: row.load + row.run, modules: row.modules })
  }
  return out
}

/**
 * Profiles the echo server's start and the effect floor's, alternately, `count` times each (no compile
 * cache) and tabulates where the time went by package. Profile `i`'s shares are scaled to the same server's
 * main-thread CPU time without the profiler in round `i` of the cold-start table (`cpuNoCache`).
 */
const byPackage = async (
  settings: Settings,
  installed: Installed.Installed,
  count: number,
  unprofiled: { readonly echo: ReadonlyArray<number>; readonly floor: ReadonlyArray<number> }
): Promise<Table> => {
  const env = environment({})
  const series: Array<Series> = byPackageRows.map((row) => ({ id: row.id, label: row.label, rounds: [] }))
  for (let round = 0; round < count; round++) {
    const profile = (script: string) => StartProfile.profileStart({ script }, installed.profileStart, env)
    // The order alternates, as in the other tables' rounds.
    let echo: StartProfile.Start
    let floor: StartProfile.Start
    if (round % 2 === 0) {
      echo = await profile(installed.effectEcho)
      floor = await profile(installed.effectFloor)
    } else {
      floor = await profile(installed.effectFloor)
      echo = await profile(installed.effectEcho)
    }
    const at = (values: ReadonlyArray<number>) => values[round % values.length] ?? Number.NaN
    const measured = byPackageMeasurements(
      StartProfile.scaled(echo, at(unprofiled.echo)),
      StartProfile.scaled(floor, at(unprofiled.floor))
    )
    for (const s of series) s.rounds[round] = measured.get(s.id)!
    const own = measured.get("effect-mcp")!
    settings.log(
      `  profile ${round + 1}/${count}: effect-mcp ${own.total!.toFixed(1)} ms of ${at(unprofiled.echo).toFixed(0)} ms (profiled ${echo.cpuMs.toFixed(0)} ms); effect floor ${at(unprofiled.floor).toFixed(0)} ms`
    )
  }
  return {
    id: "W2-start-by-package",
    title: "W2 cold start of the installed effect-mcp echo server, main-thread CPU by package (no compile cache)",
    metrics: byPackageMetrics,
    ratios: [],
    notes: [
      "The effect-mcp echo server of the table above (and the effect floor) started with `NODE_DISABLE_COMPILE_CACHE=1` under Node's sampling profiler (`--cpu-prof`, every 100 µs) and stopped when `initialize` was answered, a `module.registerHooks` hook (`installed/profileStart.mjs`) timing each module's resolve and load (`src/StartProfile.ts`).",
      "Each sample is charged to a package: running code to the innermost stack frame in a package file (so Node functions count for the package that called them); a sample inside the loader's resolve or load of a file, or compiling it right after, to that file's package (loading); garbage collection on its own; the rest (bootstrap, linking, the event loop) to Node. A share is its fraction of the profile times the same server's main-thread CPU time without the profiler in the same round of the table above (its no-compile-cache column): the profile's time is wall time between samples (a sample counts for 1 ms at most: a longer gap is time the thread was not running), and the profiler costs a third more CPU.",
      "effect-mcp, all packages: the sum of the `@effect-mcp/*` rows, the code of effect-mcp itself. The rest of effect-mcp's cost in the cold-start table (echo minus effect floor) is effect's modules and code that effect-mcp's modules load and run (the effect row minus the floor's effect row), and more garbage collection and linking.",
      `${count} profiled starts of each, alternating; modules: files loaded by the answer.`
    ],
    series
  }
}

/** Installs the packages, counts modules, fills the compile cache, then times starts in interleaved rounds. */
export const run = async (settings: Settings): Promise<ReadonlyArray<Table>> => {
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
    const cold: Table = {
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
    const profiles = settings.quick ? settings.rounds : Math.max(settings.rounds, 9)
    const cpuNoCache = (id: string) =>
      (series.find((s) => s.id === id)?.rounds ?? []).map((m) => m.cpuNoCache ?? Number.NaN)
    const unprofiled = { echo: cpuNoCache("effect-echo"), floor: cpuNoCache("effect-floor") }
    return [cold, await byPackage(settings, installed, profiles, unprofiled)]
  } finally {
    await Fs.rm(cacheDir, { recursive: true, force: true })
    await installed.remove()
  }
}
