#!/usr/bin/env node
// Plain JavaScript that any Node with ES modules parses (no top-level await, no optional chaining), so an old
// Node gets one clear line instead of a stack trace.
const major = Number(process.versions.node.split(".")[0])
if (major < 22) {
  process.stderr.write(`effect-mcp needs Node.js 22 or newer (this is ${process.version})\n`)
  process.exit(2)
}
// `#main` is the built dist/main.js (plain JavaScript: no type stripping needed); inside the repository, under the
// `@effect-mcp/source` condition, the sources. Node's compile cache (Node >= 22.1) makes every later start cheaper.
import("node:module").then((Module) => {
  if (typeof Module.enableCompileCache === "function") Module.enableCompileCache()
  return import("#main")
})
