/**
 * stdio servers on Bun and Deno, as a client on Node spawns them (command `bun` / `deno`, the sources by the
 * `@effect-mcp/source` condition). platform-node's stdio runs there through the runtimes' Node compatibility,
 * unchanged: the server's direct reads of `process.stdin` and writes to `process.stdout`, the console routed to
 * stderr, the exit once stdin ends.
 *
 * - the everything server's bin (`mcp-everything-server --stdio`; on Deno with `--allow-env` only, which its
 *   telemetry layer needs to read OTEL_*), driven by the official SDK 1.x client (`StdioClientTransport`): a
 *   `test_long_running` cancelled and seen interrupted on the server, then the shared everything session on the
 *   same server (every tool, elicitation, sampling and roots as requests from the server, list changes, every
 *   resource and prompt), and the log messages it heard;
 * - the same, driven by our `McpClient` over `NodeStdio.makeClient`: the tools listed, a call with its progress
 *   streamed, a resource read; then closed: the server exits by itself (code 0, no signal) once its stdin ends;
 * - a user's server (fixtures/stdio-server.ts, `NodeMcpServer.serveStdio`; on Deno with no permission at all):
 *   what its Layer logs while it builds and what a handler writes with `console.log` reach stderr, not the
 *   protocol stream, and an 8 MiB frame goes each way.
 *
 * The runtimes run side by side (the SDK sessions, then the `McpClient` tests); a runtime that is missing or does
 * not start fails with its stderr.
 */
import * as McpClient from "@effect-mcp/client/McpClient"
import type * as StdioTransport from "@effect-mcp/engine/StdioTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import type * as Tools from "@effect-mcp/protocol/Tools"
import { assert, describe, it } from "@effect/vitest"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Everything from "../interop/everything.ts"
import * as SdkClient from "../interop/sdkClient.ts"
import * as ServerProcess from "../support/ServerProcess.ts"
import * as Runtime from "./Runtime.ts"

/**
 * `streams: false` although stdio streams every notification: the SDK client hands a progress notification to its
 * handler a microtask later, and drops it when the result came in the same read (it has forgotten the token by
 * then). On a loaded machine the updates of a short call often share the result's read, on Node too, so the
 * shared session's progress checks would fail now and then. The progress over stdio is checked exactly below,
 * with `McpClient`; the logs, which the SDK keeps, are checked after the session.
 */
const mode: Everything.Mode = { asks: true, streams: false, cancelBy: "notification" }

/** The everything server over stdio: its bin; on Deno with `--allow-env` (its telemetry layer reads OTEL_*). */
const everything: Program = { file: ServerProcess.everythingBin, args: ["--stdio"], permissions: ["--allow-env"] }

/** The user's server of fixtures/stdio-server.ts, which needs no permission on Deno. */
const userServer: Program = { file: "test/runtimes/fixtures/stdio-server.ts", args: [], permissions: [] }

/** A program a runtime runs as a stdio server. */
interface Program {
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly permissions: ReadonlyArray<string>
}

/** The command line that runs `program` on `name`. */
const command = (name: "bun" | "deno", program: Program) =>
  Effect.map(Runtime.binary(name), (bin) => ({
    command: bin,
    args: [...Runtime.argsFor(name, program.file, program.permissions), ...program.args]
  }))

/** Connects `McpClient` to a server spawned over stdio with `NodeStdio.makeClient`: the client and the process. */
const connect = (name: "bun" | "deno", program: Program) =>
  Effect.gen(function* () {
    const stdio = yield* NodeStdio.makeClient({
      ...(yield* command(name, program)),
      cwd: ServerProcess.root,
      env: Runtime.quiet,
      // Long enough for a loaded machine: the tests check that no signal was needed.
      shutdown: { exitGrace: "20 seconds" }
    })
    const client = yield* McpClient.make({ clientInfo: { name: "stdio-runtimes", version: "1.0.0" } }).pipe(
      Effect.provideService(Transport.Transport, Transport.Transport.of(stdio))
    )
    return { client, stdio }
  })

/** Closes the client's stdio (its stdin ends) and checks that the server exited by itself. */
const closedCleanly = (stdio: StdioTransport.StdioClient) =>
  Effect.gen(function* () {
    yield* stdio.close
    assert.deepStrictEqual(yield* stdio.exit, { code: 0, signal: null }, yield* stdio.stderrTail)
  })

const textOf = (result: Tools.CallToolResult) =>
  result.content.map((block) => (block.type === "text" ? block.text : "")).join("")

describe.concurrent.each(["bun", "deno"] as const)(
  "the 1.x SDK client over stdio, the everything server on %s",
  (name) => {
    it.live(
      "a cancelled call interrupted on the server, then every tool, resource and prompt",
      () =>
        Effect.gen(function* () {
          const { command: bin, args } = yield* command(name, everything)
          const transport = new StdioClientTransport({
            command: bin,
            args,
            cwd: ServerProcess.root,
            // The SDK passes only a few variables on by default.
            env: { ...getDefaultEnvironment(), ...Runtime.quiet },
            stderr: "pipe"
          })
          const stderr = ServerProcess.record(transport.stderr, `${name}'s stderr`)
          const sdk = yield* SdkClient.connect(transport)
          // First: the check takes the first `started <id>` on stderr for the cancelled call's.
          yield* Everything.cancelLongRunning(sdk, mode, (pattern) => ServerProcess.waitFor(stderr, pattern))
          yield* Everything.everything(sdk, mode)
          // test_tool_with_logging's three messages, in order, among the others the session heard.
          const start = sdk.logs.indexOf("Tool execution started")
          assert.deepStrictEqual(sdk.logs.slice(start, start + 3), [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed"
          ])
        }),
      60_000
    )
  }
)

describe.concurrent.each(["bun", "deno"] as const)("McpClient over NodeStdio.makeClient, a server on %s", (name) => {
  it.live(
    "the everything server: tools, a call with progress, a resource; it exits by itself as its stdin ends",
    () =>
      Effect.gen(function* () {
        const { client, stdio } = yield* connect(name, everything)
        assert.strictEqual(client.serverInfo?.name, "effect-mcp-everything-server")
        const tools = yield* Stream.runCollect(client.tools)
        assert.include(
          tools.map((tool) => tool.name),
          "test_tool_with_progress"
        )
        const events = yield* Stream.runCollect(client.callToolWithProgress("test_tool_with_progress", {}))
        assert.deepStrictEqual(
          events.map((event) =>
            event._tag === "Progress"
              ? event.update.progress
              : event.value.content.map((c) => c.type === "text" && c.text)
          ),
          [0, 50, 100, ["Tool with progress executed successfully"]]
        )
        const read = yield* client.readResource("test://static-text")
        assert.deepStrictEqual(read.contents, [
          {
            uri: "test://static-text",
            mimeType: "text/plain",
            text: "This is the content of the static text resource."
          }
        ])
        yield* closedCleanly(stdio)
      }),
    60_000
  )

  it.live(
    "a user's server (NodeMcpServer.serveStdio): its Layer's log and its console output go to stderr; an 8 MiB frame each way",
    () =>
      Effect.gen(function* () {
        const { client, stdio } = yield* connect(name, userServer)
        // What a handler writes to the console must be on stderr (checked after the exit, when all of it is there):
        // on stdout it would be a line of the protocol stream.
        assert.strictEqual(textOf(yield* client.callTool("chatty", {})), "said it")
        const text = "x".repeat(8 * 1024 * 1024)
        assert.strictEqual(textOf(yield* client.callTool("echo", { text })).length, text.length)
        yield* closedCleanly(stdio)
        assert.match(yield* stdio.stderrTail, /^chatty: console\.log\nchatty: console\.info$/m)
        // Logged while the Layer built, before the session was open: on stdout it would have come before the first answer.
        assert.match(yield* stdio.stderrTail, /INFO .*loading configuration/)
      }),
    60_000
  )
})
