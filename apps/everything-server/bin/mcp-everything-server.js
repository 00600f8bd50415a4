#!/usr/bin/env node
// Plain JavaScript that any Node with ES modules parses (no top-level await, no optional chaining), so an old
// Node gets one clear line instead of a stack trace. 22.19 is the floor of effect's @effect/platform-node and of
// undici: on an older 22 effect's HTTP server fails every POST (an empty reply).
const version = process.versions.node.split(".").map(Number)
if (version[0] < 22 || (version[0] === 22 && version[1] < 19)) {
  process.stderr.write(`mcp-everything-server needs Node.js 22.19 or newer (this is ${process.version})\n`)
  process.exit(1)
}
// Node's on-disk compile cache (Node >= 22.1): every start after the first reads the compiled code instead of
// compiling it again. NODE_DISABLE_COMPILE_CACHE=1 turns it off, NODE_COMPILE_CACHE picks the directory.
// `#main` is the bundle of the built server (dist/bundle/main.mjs, one file instead of some 250 modules: a stdio
// server starts once per client session); inside the repository, under the `@effect-mcp/source` condition, the sources.
import("node:module").then((Module) => {
  if (typeof Module.enableCompileCache === "function") Module.enableCompileCache()
  return import("#main")
})
