/**
 * The everything server on Bun and Deno: `WebHandler.make` served by `Bun.serve` / `Deno.serve` on 127.0.0.1
 * (test/runtimes/fixtures/server.ts), each runtime the binary its npm package (a pinned devDependency)
 * installed. The official SDK clients run sessions against it: 1.x on 2025-11-25 (every tool, progress,
 * elicitation and sampling as server-to-client requests, every resource and prompt, list changes), 2.x in auto
 * negotiation on 2026-07-28 (progress, an elicitation round by `input_required`). A runtime that is missing
 * or does not start fails the test with its stderr: never a skip.
 */
import { existsSync } from "node:fs"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Client, StreamableHTTPClientTransport as Transport2 } from "@modelcontextprotocol/client"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import * as Everything from "../interop/everything.ts"
import * as SdkClient from "../interop/sdkClient.ts"
import * as ServerProcess from "../support/ServerProcess.ts"

const fixture = "test/runtimes/fixtures/server.ts"
const condition = "--conditions=@effect-mcp/source"

interface Runtime {
  readonly name: string
  /** The binary, as `npm ci` links it. */
  readonly bin: string
  readonly args: ReadonlyArray<string>
}

const runtimes: ReadonlyArray<Runtime> = [
  { name: "bun", bin: "bun", args: [condition, fixture] },
  // Only the loopback network: the modules it reads are the program's own, which needs no permission.
  { name: "deno", bin: "deno", args: ["run", "--no-prompt", "--allow-net=127.0.0.1", condition, fixture] }
]

/** Starts the fixture on `runtime` and waits for its URL; the test's scope stops it. */
const start = (runtime: Runtime) =>
  Effect.gen(function* () {
    const bin = Path.join(ServerProcess.root, "node_modules", ".bin", runtime.bin)
    if (!existsSync(bin)) {
      return yield* Effect.fail(
        new ServerProcess.ProcessError(`${bin} is missing: the devDependency "${runtime.name}" installs it (npm ci)`)
      )
    }
    const child = yield* ServerProcess.spawnChild(bin, runtime.args, {
      // No update check (CI has no network but the npm registry), no telemetry, no colours in a failure's stderr.
      env: { ...process.env, DENO_NO_UPDATE_CHECK: "1", DO_NOT_TRACK: "1", NO_COLOR: "1" }
    })
    const listening = yield* child.waitForStderr(/^(bun|deno) \S+ listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)$/m)
    assert.strictEqual(listening[1], runtime.name)
    return { ...child, url: listening[2]! }
  })

const mode: Everything.Mode = { asks: true, streams: true, cancelBy: "notification" }

describe.each(runtimes)("the everything server on $name, served by WebHandler", (runtime) => {
  it.live(
    "the 1.x SDK client on 2025-11-25: every tool (progress, elicitation, sampling), resource and prompt",
    () =>
      Effect.gen(function* () {
        const server = yield* start(runtime)
        const sdk = yield* SdkClient.connect(new StreamableHTTPClientTransport(new URL(server.url)))
        yield* Everything.everything(sdk, mode)
      }),
    60_000
  )

  it.live(
    "the 2.x SDK client in auto negotiation on 2026-07-28: progress, an elicitation round, a resource, a prompt",
    () =>
      Effect.gen(function* () {
        const server = yield* start(runtime)
        const client = new Client(
          { name: "sdk2-runtimes", version: "2.4.0" },
          { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: "auto" } }
        )
        const elicited: Array<string> = []
        client.setRequestHandler("elicitation/create", async (request) => {
          elicited.push(request.params.message)
          return { action: "accept", content: { name: "Ada" } }
        })
        yield* Effect.acquireRelease(
          Effect.promise(() => client.connect(new Transport2(new URL(server.url)))),
          () => Effect.promise(() => client.close())
        )
        assert.strictEqual(client.getNegotiatedProtocolVersion?.(), "2026-07-28")
        const tools = yield* Effect.promise(() => client.listTools())
        assert.include(
          tools.tools.map((tool) => tool.name),
          "test_tool_with_progress"
        )
        const progress: Array<number> = []
        const stepped = yield* Effect.promise(() =>
          client.callTool(
            { name: "test_tool_with_progress", arguments: {} },
            { onprogress: (update) => progress.push(update.progress) }
          )
        )
        assert.deepStrictEqual(stepped.content, [{ type: "text", text: "Tool with progress executed successfully" }])
        // The SDK drops its progress handler as it reads the response: the last update may be lost with it.
        assert.deepStrictEqual(progress, [0, 50, 100].slice(0, Math.max(2, progress.length)))
        const greeted = yield* Effect.promise(() =>
          client.callTool({ name: "test_input_required_result_elicitation", arguments: {} })
        )
        assert.deepStrictEqual(greeted.content, [{ type: "text", text: "Hello, Ada!" }])
        assert.deepStrictEqual(elicited, ["What is your name?"])
        const read = yield* Effect.promise(() => client.readResource({ uri: "test://static-text" }))
        assert.deepStrictEqual(read.contents, [
          {
            uri: "test://static-text",
            mimeType: "text/plain",
            text: "This is the content of the static text resource."
          }
        ])
        const prompt = yield* Effect.promise(() => client.getPrompt({ name: "test_simple_prompt" }))
        assert.deepStrictEqual(prompt.messages, [
          { role: "user", content: { type: "text", text: "This is a simple prompt for testing." } }
        ])
      }),
    60_000
  )
})
