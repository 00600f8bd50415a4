import { defineConfig } from "vitest/config"

// The one list of test projects: each package, app and the cross-package `test/` tree.
const project = (root: string, extra: Record<string, unknown> = {}) => ({
  test: {
    name: root,
    root,
    include: ["test/**/*.test.ts", "**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**"],
    ...extra
  }
})

export default defineConfig({
  test: {
    projects: [
      project("packages/protocol"),
      project("packages/engine"),
      project("packages/testing"),
      project("packages/client"),
      project("packages/server"),
      project("packages/platform-node"),
      project("test"),
      project("apps/bench")
    ],
    sequence: { concurrent: false },
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
