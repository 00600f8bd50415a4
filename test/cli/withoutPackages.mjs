// Loaded with `node --import`: the packages named in WITHOUT_PACKAGES (comma-separated) cannot be resolved, as in an
// install without them (an optional peer left out, a dependency lost), while this repository's node_modules still
// has them. Each is resolved from a folder with no node_modules above it, so the error is Node's own.
import { registerHooks } from "node:module"

const hidden = (process.env.WITHOUT_PACKAGES ?? "").split(",").filter((name) => name !== "")
const nowhere = "file:///nonexistent-effect-mcp-test/importer.mjs"

registerHooks({
  resolve(specifier, context, nextResolve) {
    const isHidden = hidden.some((name) => specifier === name || specifier.startsWith(`${name}/`))
    return nextResolve(specifier, isHidden ? { ...context, parentURL: nowhere } : context)
  }
})
