// Loaded with `--import`: counts the JavaScript files the process loads (ESM and CommonJS alike, through
// Node's synchronous module hooks) and, when the bench stops the server (SIGTERM, right after `initialize`
// was answered), writes them to the file named by EFFECT_MCP_BENCH_MODULES and exits. The file appears whole
// (written beside it, then renamed): the bench reads it as soon as it exists.
import * as Fs from "node:fs"
import * as Module from "node:module"

const out = process.env.EFFECT_MCP_BENCH_MODULES
const files = new Set()
Module.registerHooks({
  resolve: (specifier, context, next) => {
    const resolved = next(specifier, context)
    if (resolved.url.startsWith("file:")) files.add(resolved.url)
    return resolved
  }
})
process.on("SIGTERM", () => {
  if (out !== undefined) {
    Fs.writeFileSync(`${out}.part`, JSON.stringify({ files: [...files] }))
    Fs.renameSync(`${out}.part`, out)
  }
  process.exit(0)
})
