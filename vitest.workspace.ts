import { defineConfig } from "vitest/config"

// Inside the workspace every `@effect-mcp/*` import resolves to the `.ts` sources through this export
// condition (the published `dist` is only for installs). Vite resolves with it, vitest passes it to its
// workers as `--conditions`, and NODE_OPTIONS carries it into every Node process a test spawns (the bins,
// the demo, the conformance runs), so those run the current sources without a build.
const sourceCondition = "@effect-mcp/source"
const inherited = process.env.NODE_OPTIONS ?? ""
const nodeOptions = inherited.includes(sourceCondition)
  ? inherited
  : `${inherited} --conditions=${sourceCondition}`.trim()

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

// The official conformance suites time what they test (a reconnection at most 200 ms late, a streamed tool
// result's first frame within 600 ms): they run last, on their own, once every other file is done, so that
// what they measure is the implementation and not the rest of the suite sharing two cores with them.
// The same suites run against the everything server on Bun, Deno and workerd, and through the gateway.
const conformance = [
  "conformance/**/*.test.ts",
  "conformance-client/**/*.test.ts",
  "runtimes/Conformance.test.ts",
  "gateway/Conformance.test.ts"
]

// The packages' own tests run in memory (on the TestClock, or on sockets of their own at port 0) and keep no
// state between files, so each worker reuses its modules from one file to the next instead of importing effect
// and the engine again per file: that import was half of their time. The cross-package tests (`test/`, the
// examples, the apps) start processes and count them, so each of their files keeps a fresh worker.
const shared = { isolate: false }

export default defineConfig({
  resolve: { conditions: [sourceCondition] },
  ssr: { resolve: { conditions: [sourceCondition] } },
  test: {
    env: { NODE_OPTIONS: nodeOptions },
    projects: [
      // Fresh modules per file: its JIT test checks that the first decode of a message schema compiles it.
      project("packages/protocol"),
      project("packages/engine", shared),
      project("packages/http", shared),
      project("packages/testing", shared),
      project("packages/client", shared),
      project("packages/server", shared),
      project("packages/auth", shared),
      project("packages/platform-node", shared),
      project("packages/host", shared),
      project("packages/gateway", shared),
      project("packages/sql", shared),
      project("packages/cluster", shared),
      project("test", { exclude: ["**/node_modules/**", "**/dist/**", ...conformance] }),
      { test: { name: "test/conformance", root: "test", include: conformance, sequence: { groupOrder: 1 } } },
      project("examples"),
      project("apps/bench"),
      project("apps/cli")
    ],
    // Most test files wait on child processes, sockets and databases rather than compute, so on a
    // 2-core machine four files at a time keep both cores busy where vitest's default (cores - 1) would run
    // them one after another. Every file is isolated (port 0, its own temp directory and database), so the
    // order and overlap do not matter. MCP_TEST_WORKERS overrides the count (1 runs files one at a time).
    maxWorkers: Number(process.env.MCP_TEST_WORKERS ?? 4),
    sequence: { concurrent: false },
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
