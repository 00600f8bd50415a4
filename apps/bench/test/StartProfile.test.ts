/**
 * How a profiled start is charged to packages (src/StartProfile.ts), on a
 * profile made by hand: running code by the innermost package frame, the
 * loader's work by the file it resolves, loads or compiles, garbage
 * collection apart, idle time nowhere, a long gap capped, shares scaled.
 */
import { assert, describe, it } from "@effect/vitest"
import * as StartProfile from "../src/StartProfile.ts"

const file = (path: string) => `file:///project/node_modules/${path}`

// The call tree: root -> loader -> compile; root -> (server's top level) -> Effect.gen -> Node's write.
const nodes = [
  { id: 1, callFrame: { functionName: "(root)", url: "" }, children: [2, 3, 6, 7, 8, 9] },
  { id: 2, callFrame: { functionName: "moduleLoad", url: "node:internal/modules/esm/loader" }, children: [4] },
  { id: 3, callFrame: { functionName: "", url: file("@effect-mcp/server/dist/McpServer.js") }, children: [5] },
  { id: 4, callFrame: { functionName: "compileSourceTextModule", url: "node:internal/modules/esm/utils" } },
  { id: 5, callFrame: { functionName: "gen", url: file("effect/dist/Effect.js") }, children: [10] },
  { id: 6, callFrame: { functionName: "(garbage collector)", url: "" } },
  { id: 7, callFrame: { functionName: "(idle)", url: "" } },
  { id: 8, callFrame: { functionName: "(program)", url: "" } },
  { id: 9, callFrame: { functionName: "", url: "file:///project/server.mjs" } },
  { id: 10, callFrame: { functionName: "write", url: "node:internal/fs/utils" } }
]

/** One sample per `[node, start µs]`, each lasting until the next (the last one until `end`). */
const profileOf = (samples: ReadonlyArray<readonly [number, number]>, end: number) => ({
  nodes,
  startTime: 0,
  samples: samples.map(([node]) => node),
  timeDeltas: samples.map(([, at], i) => at - (i === 0 ? 0 : samples[i - 1]![1])).concat([end - samples.at(-1)![1]])
})

describe("StartProfile.attribute", () => {
  it("charges loading, running, garbage collection and Node, and skips idle time", () => {
    const timeline = [
      ["r", file("@effect-mcp/protocol/dist/McpError.js"), 0, 100],
      ["l", file("@effect-mcp/protocol/dist/McpError.js"), 100, 200]
    ] as const
    const { shares, totalMs } = StartProfile.attribute(
      profileOf(
        [
          [2, 50], // in the resolve of McpError.js: protocol's loading
          [4, 300], // compiling after McpError.js's load: protocol's loading
          [10, 400], // Node's write under effect's gen under the server's module: effect running
          [3, 500], // the server's own code
          [6, 600], // garbage collection
          [7, 700], // idle: nobody's
          [8, 800], // no package on the stack, no file loading: Node
          [9, 900] // the server's script
        ],
        1000
      ),
      timeline
    )
    const share = (name: string) => shares.get(name) ?? { loadMs: 0, runMs: 0, modules: 0 }
    assert.deepStrictEqual(share("@effect-mcp/protocol"), { loadMs: 0.35, runMs: 0, modules: 1 })
    assert.deepStrictEqual(share("effect"), { loadMs: 0, runMs: 0.1, modules: 0 })
    assert.deepStrictEqual(share("@effect-mcp/server"), { loadMs: 0, runMs: 0.1, modules: 0 })
    assert.deepStrictEqual(share(StartProfile.gc), { loadMs: 0, runMs: 0.1, modules: 0 })
    assert.deepStrictEqual(share(StartProfile.node), { loadMs: 0.1, runMs: 0, modules: 0 })
    assert.deepStrictEqual(share(StartProfile.script), { loadMs: 0, runMs: 0.1, modules: 0 })
    assert.closeTo(totalMs, 0.85, 1e-9)
  })

  it("counts a long gap as ten intervals at most, and scales shares to a CPU time", () => {
    // The thread ran the server's code, then was not scheduled for 50 ms before the next sample.
    const profile = StartProfile.attribute(
      profileOf(
        [
          [3, 100],
          [3, 50_100]
        ],
        50_200
      ),
      []
    )
    assert.closeTo(profile.totalMs, 1.1, 1e-9)
    const scaled = StartProfile.scaled(profile, 11)
    assert.closeTo(scaled.shares.get("@effect-mcp/server")!.runMs, 11, 1e-9)
    assert.strictEqual(scaled.cpuMs, 11)
    assert.closeTo(StartProfile.scaled(profile, Number.NaN).totalMs, 1.1, 1e-9)
  })

  it("names a file's package: scoped, unscoped, the script, or none for Node's and the timing hook", () => {
    assert.strictEqual(StartProfile.packageOf(file("@effect-mcp/engine/dist/Peer.js")), "@effect-mcp/engine")
    assert.strictEqual(StartProfile.packageOf(file("effect/dist/Stream.js")), "effect")
    assert.strictEqual(StartProfile.packageOf("file:///project/server.mjs"), StartProfile.script)
    assert.strictEqual(StartProfile.packageOf("node:internal/streams/readable"), undefined)
    assert.strictEqual(StartProfile.packageOf("file:///project/profileStart.mjs"), undefined)
  })
})
