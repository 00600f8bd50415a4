/**
 * Where a cold start's main-thread CPU goes, by package: the server started
 * once under Node's sampling profiler (`--cpu-prof`, one sample every 100 µs,
 * no compile cache), with `installed/profileStart.mjs` recording when each
 * module is resolved and loaded, and stopped the moment `initialize` is
 * answered (see ColdStart.ts). Each sample is charged to a package:
 *
 * - running code: the package of the innermost frame on the stack that belongs
 *   to a package file (`node_modules/<package>/`), so a Node function (a
 *   stream, a file read) counts for the package that called it; samples under
 *   no package frame are Node's (bootstrap, linking, the event loop);
 * - loading: a sample inside the loader's resolve or load of a file counts for
 *   that file's package, and so does its compilation (a sample under Node's
 *   compile functions, after that file's load and before the next one);
 * - garbage collection on its own; idle time not at all.
 *
 * A sample stands for the time until the next one (at most ten intervals),
 * and that is wall time: on a busy machine it includes time the thread was
 * ready but not running, and
 * the profiler itself costs CPU (about a third more at this interval). So
 * shares are read as fractions: `profileStart` scales them to the profiled
 * start's main-thread CPU time (`/proc/<pid>/schedstat`), and `scaled` to
 * any other, such as the same server's CPU time measured without the profiler.
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as ColdStart from "./ColdStart.ts"

/** One package's share of a start, in milliseconds of main-thread CPU. */
export interface Share {
  /** Resolving, reading and compiling its modules. */
  readonly loadMs: number
  /** Running its code (module bodies, functions, the Node functions they call). */
  readonly runMs: number
  /** Its modules loaded. */
  readonly modules: number
}

/** Node's own share: its bootstrap, the loader's work not tied to one file (linking), the event loop. */
export const node = "Node"
/** Garbage collection, whoever allocated. */
export const gc = "garbage collection"
/** The server's own script (a file outside `node_modules`). */
export const script = "server script"

export interface Profile {
  /** By package name (`effect`, `@effect-mcp/server`, ...) and the three names above. */
  readonly shares: ReadonlyMap<string, Share>
  /** The profile's time in all (samples that were not idle): what `shares` add up to. */
  readonly totalMs: number
}

/** A profiled start: its shares scaled to the main thread's CPU time, which they add up to. */
export interface Start extends Profile {
  /** The main thread's CPU time when `initialize` was answered (NaN without /proc). */
  readonly cpuMs: number
}

interface CallFrame {
  readonly functionName: string
  readonly url: string
}

interface CpuProfile {
  readonly nodes: ReadonlyArray<{
    readonly id: number
    readonly callFrame: CallFrame
    readonly children?: ReadonlyArray<number>
  }>
  readonly startTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

/** [kind: "r" resolve | "l" load, url, start µs, end µs], written by `installed/profileStart.mjs`. */
type Event = readonly [string, string, number, number]

/** The profiler's sampling interval, in microseconds. */
export const intervalMicros = 100

/** The longest a sample counts for: ten intervals (see `attribute`). */
const maxSampleMicros = 10 * intervalMicros

/** The functions of Node's loader that compile a file (ESM, CommonJS). */
const compileFunctions = new Set(["compileSourceTextModule", "ModuleWrap", "compileFunctionForCJSLoader", "wrapSafe"])

/** The package of a script URL: `effect`, `@effect-mcp/server`; the script for other files; none for Node's. */
export const packageOf = (url: string): string | undefined => {
  if (url === "" || url.endsWith("/profileStart.mjs")) return undefined
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)
  if (match !== null) return match[1]
  return url.startsWith("file:") ? script : undefined
}

/** Charges every sample of `profile` to a package (see the module's comment). */
export const attribute = (profile: CpuProfile, timeline: ReadonlyArray<Event>): Profile => {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
  const parents = new Map<number, number>()
  for (const n of profile.nodes) for (const child of n.children ?? []) parents.set(child, n.id)
  const events = [...timeline].sort((a, b) => a[2] - b[2])
  const load = new Map<string, number>()
  const run = new Map<string, number>()
  const add = (to: Map<string, number>, key: string, ms: number) => to.set(key, (to.get(key) ?? 0) + ms)
  let time = profile.startTime
  let next = 0
  let lastLoaded: string | undefined
  let totalMs = 0
  for (let i = 0; i < profile.samples.length; i++) {
    time += profile.timeDeltas[i]!
    // A sample lasts until the next one, but no longer than `maxSampleMicros`: a longer gap is time the thread was
    // not running (the machine busy with other processes), which would otherwise all land on one package.
    const ms = Math.min(profile.timeDeltas[i + 1] ?? 0, maxSampleMicros) / 1000
    const leaf = nodes.get(profile.samples[i]!)!
    // The loader's events up to this sample: the file loaded last, and the event (if any) the sample falls in.
    while (next < events.length && events[next]![2] <= time) {
      if (events[next]![0] === "l") lastLoaded = events[next]![1]
      next++
    }
    const name = leaf.callFrame.functionName
    if (name === "(idle)") continue
    totalMs += ms
    if (name === "(garbage collector)") {
      add(run, gc, ms)
      continue
    }
    let owner: string | undefined
    let compiling = false
    for (let id: number | undefined = leaf.id; id !== undefined && owner === undefined; id = parents.get(id)) {
      const frame = nodes.get(id)!.callFrame
      if (compileFunctions.has(frame.functionName)) compiling = true
      owner = packageOf(frame.url)
    }
    if (owner !== undefined) {
      add(run, owner, ms)
      continue
    }
    const current = events[next - 1]
    const loading =
      current !== undefined && current[2] <= time && time <= current[3]
        ? current[1]
        : compiling
          ? lastLoaded
          : undefined
    add(load, (loading === undefined ? undefined : packageOf(loading)) ?? node, ms)
  }
  const modules = new Map<string, number>()
  for (const url of new Set(events.filter((e) => e[0] === "l").map((e) => e[1]))) {
    const owner = packageOf(url)
    if (owner !== undefined) modules.set(owner, (modules.get(owner) ?? 0) + 1)
  }
  const shares = new Map<string, Share>()
  for (const key of new Set([...load.keys(), ...run.keys(), ...modules.keys()])) {
    shares.set(key, { loadMs: load.get(key) ?? 0, runMs: run.get(key) ?? 0, modules: modules.get(key) ?? 0 })
  }
  return { shares, totalMs }
}

const readWhenWritten = async (dir: string): Promise<{ profile: CpuProfile; timeline: ReadonlyArray<Event> }> => {
  // Both are written on exit (the timeline first, then the profile): the child was killed after answering.
  for (let i = 0; i < 200; i++) {
    const files = await Fs.readdir(dir)
    const profileFile = files.find((file) => file.endsWith(".cpuprofile"))
    if (profileFile !== undefined && files.includes("timeline.json")) {
      const texts = await Promise.all([
        Fs.readFile(Path.join(dir, profileFile), "utf8"),
        Fs.readFile(Path.join(dir, "timeline.json"), "utf8")
      ])
      try {
        return {
          profile: JSON.parse(texts[0]) as CpuProfile,
          timeline: (JSON.parse(texts[1]) as { readonly events: ReadonlyArray<Event> }).events
        }
      } catch {
        // Still being written.
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`no profile written in ${dir}`)
}

/** `profile`'s shares scaled so that they add up to `cpuMs` (unscaled when `cpuMs` is not a number). */
export const scaled = (profile: Profile, cpuMs: number): Start => {
  const factor = Number.isFinite(cpuMs) && profile.totalMs > 0 ? cpuMs / profile.totalMs : 1
  const shares = new Map<string, Share>()
  for (const [key, share] of profile.shares) {
    shares.set(key, { loadMs: share.loadMs * factor, runMs: share.runMs * factor, modules: share.modules })
  }
  return { shares, totalMs: profile.totalMs * factor, cpuMs }
}

/**
 * Starts `server` once under the profiler with the timeline hook (`profileHook`, see
 * `installed/profileStart.mjs`), compile cache off, and charges its start to packages.
 */
export const profileStart = async (
  server: ColdStart.Server,
  profileHook: string,
  env: NodeJS.ProcessEnv
): Promise<Start> => {
  const dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "effect-mcp-bench-profile-"))
  try {
    const start = await ColdStart.initializeAnswered(
      server,
      { ...env, NODE_DISABLE_COMPILE_CACHE: "1", EFFECT_MCP_BENCH_TIMELINE: Path.join(dir, "timeline.json") },
      ["--cpu-prof", `--cpu-prof-dir=${dir}`, `--cpu-prof-interval=${intervalMicros}`, "--import", profileHook]
    )
    const { profile, timeline } = await readWhenWritten(dir)
    return scaled(attribute(profile, timeline), start.cpuMs)
  } finally {
    await Fs.rm(dir, { recursive: true, force: true })
  }
}
