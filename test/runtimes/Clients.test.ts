/**
 * `McpClient` as a client on each runtime: test/runtimes/fixtures/clientSession.ts (Streamable HTTP over effect's
 * fetch-based HTTP client, nothing of `node:*`) run by Bun and by Deno as a program (fixtures/client.ts, which
 * prints what it got), and inside a Worker on workerd (fixtures/client-worker.ts, which answers with it), against
 * one upstream: the everything server on Node, on 127.0.0.1. Each runs a stateful 2025-11-25 session and a
 * 2026-07-28 one: the tools listed, `test_tool_with_progress` called with its progress streamed, a resource read.
 * The three run side by side; a runtime that is missing or does not start fails with its stderr: never a skip.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as ServerProcess from "../support/ServerProcess.ts"
import type * as ClientSession from "./fixtures/clientSession.ts"
import * as Runtime from "./Runtime.ts"
import * as Workerd from "./Workerd.ts"

/** What each session must have got from the everything server, its tools listed as `tools`. */
const got = (revision: string, sessionId: boolean, tools: ReadonlyArray<string>): ClientSession.Got => ({
  revision,
  server: "effect-mcp-everything-server",
  sessionId,
  tools,
  progress: [0, 50, 100],
  result: "Tool with progress executed successfully",
  resource: "This is the content of the static text resource."
})

/** The program on Bun or Deno (Deno with the loopback network only): the report it printed on exit 0. */
const onRuntime = (name: "bun" | "deno", upstream: string) =>
  Effect.gen(function* () {
    const ran = yield* Runtime.run(name, "test/runtimes/fixtures/client.ts", {
      args: [upstream],
      permissions: ["--allow-net=127.0.0.1"]
    })
    assert.strictEqual(ran.code, 0, `${name} exited with ${ran.code} (${ran.signal}):\n${ran.stderr}`)
    return JSON.parse(ran.stdout) as ClientSession.Report
  })

/** The Worker on workerd, its `fetch` reaching 127.0.0.1 through a `local` network service: the report it answered. */
const onWorkerd = (upstream: Effect.Effect<string, ServerProcess.ProcessError, Scope.Scope>) =>
  Effect.gen(function* () {
    const workerd = yield* Workerd.start([
      { name: "client", entry: "test/runtimes/fixtures/client-worker.ts", isolates: "reused", outbound: "loopback" }
    ])
    const url = new URL("/", workerd.urls.client)
    url.searchParams.set("upstream", yield* upstream)
    const response = yield* Effect.promise(() => fetch(url))
    const body = yield* Effect.promise(() => response.text())
    assert.strictEqual(response.status, 200, body)
    return JSON.parse(body) as ClientSession.Report
  })

describe("McpClient over Streamable HTTP on Bun, Deno and workerd, against the everything server on Node", () => {
  it.live(
    "each lists the tools, calls one with progress and reads a resource, on 2025-11-25 and 2026-07-28",
    () =>
      Effect.gen(function* () {
        // workerd's bundle is made while the upstream starts.
        const upstream = yield* Effect.cached(Effect.map(ServerProcess.spawnHttp(), (server) => server.url))
        const reports = yield* Effect.all(
          [
            Effect.flatMap(upstream, (url) => onRuntime("bun", url)),
            Effect.flatMap(upstream, (url) => onRuntime("deno", url)),
            onWorkerd(upstream)
          ],
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(
          reports.map((report) => report.runtime.split(" ")[0]),
          ["bun", "deno", "workerd"]
        )
        // Every session listed the same tools (the everything server's, which none of them changes).
        const tools = reports[0].sessions[0]?.tools ?? []
        assert.include(tools, "test_tool_with_progress")
        const expected = [got("2025-11-25", true, tools), got("2026-07-28", false, tools)]
        for (const report of reports) assert.deepStrictEqual(report.sessions, expected, report.runtime)
      }),
    90_000
  )
})
