/**
 * Import-cycle check (`npm run cycles`, part of `npm test`): no runtime import
 * cycle in any package's or app's sources, generated wire modules included.
 * An import that TypeScript erases (`import type`, or every specifier marked
 * `type`) loads nothing at run time, so it may close a loop.
 *
 * TypeScript 7 has no JavaScript compiler API for dependency-cruiser to parse
 * with, so it parses with swc (`@swc/core`, a devDependency), which marks
 * type-only imports.
 */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "A runtime import cycle: the modules' load order decides which of them sees the other half-initialized.",
      severity: "error",
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } }
    }
  ],
  options: {
    parser: "swc",
    doNotFollow: { path: "node_modules" },
    exclude: { path: ["node_modules", "/dist/", "\\.d\\.ts$"] },
    enhancedResolveOptions: {
      conditionNames: ["@effect-mcp/source", "import", "node", "default"],
      extensions: [".ts", ".js"]
    }
  }
}
