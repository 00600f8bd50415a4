// Bundles a stdio MCP server for shipping: `npx rolldown -c rolldown.config.mjs` writes `dist/server.mjs`, the
// server and everything it imports (effect and effect-mcp included) in one file, plus a chunk per module the
// server imports on first use (an optional feature such as the HTTP stack). Node's built-in modules stay imports.
// A stdio server is a new process for every client session: loading one file instead of some 250 modules is most
// of its start (docs/shipping.md has the measured numbers). `bin/server.mjs` starts it with Node's compile cache.
export default {
  // Your server's entry point; a TypeScript entry (`src/server.ts`) works as it is.
  input: { server: "server.mjs" },
  platform: "node",
  output: {
    dir: "dist",
    format: "esm",
    // `.mjs`: the files are ES modules wherever they are copied, with no package.json beside them to say so.
    entryFileNames: "[name].mjs",
    chunkFileNames: "[name]-[hash].mjs",
    // The libraries' doc comments are over a quarter of the text Node would read at every start; license notices stay.
    comments: { legal: true, annotation: false, jsdoc: false }
  }
}
