// Loaded with `--import` next to `--cpu-prof` (see src/StartProfile.ts): a timeline of module loading, so that
// the profile's loader samples (resolving, reading and compiling a file, which run in Node's own frames) can be
// charged to the module being loaded. Each `resolve` and `load` call of the loader is recorded with its start
// and end time (microseconds on the monotonic clock the profile uses) and the file's URL; the compilation of a
// file runs right after its `load` returns. When the bench stops the server (SIGTERM, right after `initialize`
// was answered) the timeline is written to the file named by EFFECT_MCP_BENCH_TIMELINE and the process exits, so
// that `--cpu-prof` writes the profile of the start alone.
import * as Fs from "node:fs"
import * as Module from "node:module"

const out = process.env.EFFECT_MCP_BENCH_TIMELINE
const now = () => Number(process.hrtime.bigint() / 1000n)
/** [kind, url, start µs, end µs]; kind "r" (resolve) or "l" (load). */
const events = []
Module.registerHooks({
  resolve: (specifier, context, next) => {
    const start = now()
    const resolved = next(specifier, context)
    events.push(["r", resolved.url, start, now()])
    return resolved
  },
  load: (url, context, next) => {
    const start = now()
    const loaded = next(url, context)
    events.push(["l", url, start, now()])
    return loaded
  }
})
process.on("SIGTERM", () => {
  // Whole or not at all: written beside the file, then renamed.
  if (out !== undefined) {
    Fs.writeFileSync(`${out}.part`, JSON.stringify({ events }))
    Fs.renameSync(`${out}.part`, out)
  }
  process.exit(0)
})
