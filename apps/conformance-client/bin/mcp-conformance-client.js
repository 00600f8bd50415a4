#!/usr/bin/env node
// Plain JavaScript that any Node parses, so an old Node gets one clear line instead of a stack trace.
const [major] = process.versions.node.split(".").map(Number)
if (major < 22) {
  process.stderr.write(`mcp-conformance-client needs Node.js 22 or newer (this is ${process.version})\n`)
  process.exit(1)
}
// The conformance suite starts one client per scenario, all at once, so start-up time counts:
// `npm run build -w @effect-mcp/conformance-client` bundles the client into dist/bundle/main.js, which
// starts about three times faster. Without it, `#main` is the built dist/main.js (inside the repository,
// under the `@effect-mcp/source` condition, the sources).
const { existsSync } = await import("node:fs")
const { enableCompileCache } = await import("node:module")
enableCompileCache?.()
const bundle = new URL("../dist/bundle/main.js", import.meta.url)
await import(existsSync(bundle) ? bundle.href : "#main")
