#!/usr/bin/env node
// Plain JavaScript that any Node with ES modules parses (no top-level await, no optional chaining), so an old
// Node gets one clear line instead of a stack trace. 22.19 is the floor of effect's @effect/platform-node and of
// undici: on an older 22 effect's HTTP server fails every POST (an empty reply).
const version = process.versions.node.split(".").map(Number)
if (version[0] < 22 || (version[0] === 22 && version[1] < 19)) {
  process.stderr.write(`effect-mcp needs Node.js 22.19 or newer (this is ${process.version})\n`)
  process.exit(2)
}
// `#main` is the built dist/main.js (plain JavaScript: no type stripping needed); inside the repository, under the
// `@effect-mcp/source` condition, the sources. Node's compile cache (Node >= 22.1) makes every later start cheaper.
import("node:module")
  .then((Module) => {
    if (typeof Module.enableCompileCache === "function") Module.enableCompileCache()
    return import("#main")
  })
  .catch((error) => {
    // The program could not be loaded (an install missing one of its packages, say): one line, like any other
    // failure of the CLI (docs/cli.md: exit code 4), not Node's stack trace.
    const message = error instanceof Error ? error.message : String(error)
    process.stderr.write(`effect-mcp: ${message.split("\n")[0]}\n`)
    process.exit(4)
  })
