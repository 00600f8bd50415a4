// `npm run build -w @effect-mcp/conformance-client`: the client as one ESM file, dist/bundle/main.js, which the
// bin prefers (the conformance suite starts one client per scenario, all at once). It bundles the current
// sources of the workspace packages (the `@effect-mcp/source` condition), so it needs no `tsc -b` first.
export default {
  input: "src/main.ts",
  platform: "node",
  external: ["undici"],
  resolve: { conditionNames: ["@effect-mcp/source", "import", "node", "default"] },
  output: { format: "esm", dir: "dist/bundle" }
}
