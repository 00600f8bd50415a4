#!/usr/bin/env node
// Plain JavaScript that any Node with ES modules parses (no top-level await, no optional chaining), so an old
// Node gets one clear line instead of a stack trace. 22.19 is the floor of effect's @effect/platform-node and of
// undici: on an older 22 effect's HTTP server fails every POST (an empty reply).
const version = process.versions.node.split(".").map(Number)
if (version[0] < 22 || (version[0] === 22 && version[1] < 19)) {
  process.stderr.write(`mcp-conformance-client needs Node.js 22.19 or newer (this is ${process.version})\n`)
  process.exit(1)
}
// The conformance suite starts one client per scenario, all at once, so start-up time counts:
// `npm run build -w @effect-mcp/conformance-client` bundles the client into dist/bundle/main.js, which
// starts about three times faster. Without it, `#main` is the built dist/main.js (inside the repository,
// under the `@effect-mcp/source` condition, the sources).
Promise.all([import("node:fs"), import("node:module")]).then(([fs, Module]) => {
  if (typeof Module.enableCompileCache === "function") Module.enableCompileCache()
  const bundle = new URL("../dist/bundle/main.js", import.meta.url)
  return import(fs.existsSync(bundle) ? bundle.href : "#main")
})
