#!/usr/bin/env node
// The conformance suite starts one client per scenario, all at once, so start-up time counts.
// `npm run build -w @effect-mcp/conformance-client` bundles the client into dist/bundle/main.js,
// which starts about three times faster than the sources; without it, Node 24 runs the .ts
// sources directly (stripping their types as it loads them).
import { existsSync } from "node:fs"
import { enableCompileCache } from "node:module"

enableCompileCache()
const bundle = new URL("../dist/bundle/main.js", import.meta.url)
await import(existsSync(bundle) ? bundle.href : "../src/main.ts")
