#!/usr/bin/env node
// Plain JavaScript that any Node parses, so an old Node gets one clear line instead of a stack trace.
const [major] = process.versions.node.split(".").map(Number)
if (major < 22) {
  process.stderr.write(`mcp-everything-server needs Node.js 22 or newer (this is ${process.version})\n`)
  process.exit(1)
}
// `#main` is the built dist/main.js; inside the repository, under the `@effect-mcp/source` condition, the sources.
await import("#main")
