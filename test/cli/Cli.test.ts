/**
 * `effect-mcp` as a real process (`node apps/cli/bin/effect-mcp.js`, the
 * sources under the `@effect-mcp/source` condition that NODE_OPTIONS carries)
 * against real everything servers over stdio and HTTP; the progress bar and
 * Ctrl-C in a pseudo-terminal made by `script` (util-linux, in every Debian).
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as EverythingServer from "@effect-mcp/everything-server/EverythingServer"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import type * as McpServer from "@effect-mcp/server/McpServer"
import * as Middleware from "@effect-mcp/server/Middleware"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as ServerProcess from "../support/ServerProcess.ts"
import { oneLineError, runCli } from "./runCli.ts"

const cliBin = fileURLToPath(new URL("../../apps/cli/bin/effect-mcp.js", import.meta.url))

// Each check runs the CLI several times (each a Node process loading the sources): the limit only catches a hang.
const TIMEOUT = 180_000

const stdioServer = ["--", ServerProcess.node, ServerProcess.everythingBin, "--stdio"]

/** The everything server over Streamable HTTP in this process (127.0.0.1, port 0), with `extra` (middleware). */
const serveEverything = (extra: Layer.Layer<never, never, McpServer.McpServer>) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(
      NodeMcpServer.layerHttp(Layer.provideMerge(extra, EverythingServer.layer()), { host: "127.0.0.1" })
    )
    return { url: `${yield* NodeMcpServer.url.pipe(Effect.provideContext(context))}/mcp` }
  })

const quote = (arg: string): string => `'${arg.replaceAll("'", `'\\''`)}'`

/** `effect-mcp args` in a pseudo-terminal: `script` runs it with a tty as stdin, stdout and stderr. */
const spawnInPty = (args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const line = [ServerProcess.node, cliBin, ...args].map(quote).join(" ")
      const child = spawn("script", ["-q", "-e", "-c", line, "/dev/null"], {
        cwd: ServerProcess.root,
        env: { ...process.env, COLUMNS: "100", LINES: "30" },
        stdio: ["pipe", "pipe", "pipe"]
      })
      const output = ServerProcess.record(child.stdout, "the terminal")
      child.stderr.resume()
      const exited = Effect.callback<number | null>((resume) => {
        if (child.exitCode !== null) return resume(Effect.succeed(child.exitCode))
        child.once("exit", (code) => resume(Effect.succeed(code)))
      })
      return { child, output, exited }
    }),
    ({ child }) => ServerProcess.terminate(child)
  )

describe("effect-mcp", () => {
  it.live(
    "tools --json over stdio lists every tool the server has",
    () =>
      Effect.gen(function* () {
        const ran = yield* runCli(["tools", "--json", ...stdioServer])
        assert.strictEqual(ran.code, 0, ran.stderr)
        const listed = (JSON.parse(ran.stdout) as { tools: ReadonlyArray<{ name: string }> }).tools.map((t) => t.name)
        // The same server over HTTP, listed by a client in this process.
        const server = yield* ServerProcess.spawnHttp()
        const client = yield* McpClient.connect(NodeHttpClient.layerStreamableHttp({ url: server.url }), {
          clientInfo: { name: "cli-test", version: "1.0.0" }
        })
        const expected = [...(yield* Stream.runCollect(client.tools))].map((t) => t.name)
        assert.isAbove(expected.length, 20)
        assert.deepStrictEqual([...listed].sort(), [...expected].sort())
      }).pipe(Effect.scoped),
    TIMEOUT
  )

  it.live(
    "call --json over HTTP prints the result; info, ping and a config file's server name",
    () =>
      Effect.gen(function* () {
        const server = yield* ServerProcess.spawnHttp()
        const ran = yield* runCli(["call", "--json", server.url, "test_simple_text", "{}"])
        assert.strictEqual(ran.code, 0, ran.stderr)
        assert.strictEqual(ran.stderr, "") // no progress bar and no noise off a terminal
        const result = JSON.parse(ran.stdout) as { content: ReadonlyArray<{ type: string; text: string }> }
        assert.deepStrictEqual(result.content, [{ type: "text", text: "This is a simple text response for testing." }])

        const pinged = yield* runCli(["ping", "--revision", "2025-06-18", server.url])
        assert.strictEqual(pinged.code, 0, pinged.stderr)
        assert.match(pinged.stdout, /^ok \(\d+ ms\)\n$/)

        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-mcp-cli-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
        const config = path.join(dir, "mcp.json")
        fs.writeFileSync(
          config,
          JSON.stringify({
            mcpServers: {
              local: { command: ServerProcess.node, args: [ServerProcess.everythingBin, "--stdio"] },
              remote: { url: server.url }
            }
          })
        )
        const info = yield* runCli(["info", "--json", "--config", config, "--revision", "2025-11-25", "local"])
        assert.strictEqual(info.code, 0, info.stderr)
        const described = JSON.parse(info.stdout) as { revision: string; serverInfo: { name: string } }
        assert.strictEqual(described.revision, "2025-11-25")
        assert.strictEqual(described.serverInfo.name, "effect-mcp-everything-server")
        const remote = yield* runCli(["call", "--config", config, "remote", "test_simple_text"])
        assert.strictEqual(remote.code, 0, remote.stderr)
        assert.strictEqual(remote.stdout, "This is a simple text response for testing.\n")

        const unknownName = yield* runCli(["info", "--config", config, "nowhere"])
        assert.strictEqual(unknownName.code, 3)
        assert.match(oneLineError(unknownName), /no server "nowhere" in .*mcp\.json \(it has local, remote\)/)
      }).pipe(Effect.scoped),
    TIMEOUT
  )

  it.live(
    "a bad target, an unknown tool, invalid arguments and a tool error each get a one-line error and their own exit code",
    () =>
      Effect.gen(function* () {
        const server = yield* ServerProcess.spawnHttp()
        // Nothing listens there: the connection is refused.
        const closed = yield* ServerProcess.closedPort
        const badTarget = yield* runCli(["call", `http://127.0.0.1:${closed}/mcp`, "test_simple_text"])
        assert.strictEqual(badTarget.code, 3)
        assert.match(oneLineError(badTarget), /cannot connect/)

        const unknownTool = yield* runCli(["call", server.url, "no_such_tool", "{}"])
        assert.strictEqual(unknownTool.code, 4)
        assert.match(oneLineError(unknownTool), /server error -32602: Unknown tool: no_such_tool/)

        // The server checks the arguments against the tool's input schema: a tool error (isError) on this revision.
        const invalid = yield* runCli(["call", server.url, "test_long_running", '{"durationMs": "soon"}'])
        assert.strictEqual(invalid.code, 1)
        assert.match(oneLineError(invalid), /tool test_long_running reported an error/)
        assert.match(invalid.stdout, /Invalid arguments for tool test_long_running/)

        const notJson = yield* runCli(["call", server.url, "test_simple_text", "{durationMs: 1}"])
        assert.strictEqual(notJson.code, 2)
        assert.match(oneLineError(notJson), /the arguments are not JSON/)

        const usage = yield* runCli(["call", "--no-such-flag", server.url, "test_simple_text"])
        assert.strictEqual(usage.code, 2)
      }).pipe(Effect.scoped),
    TIMEOUT
  )

  it.live(
    "watch --json prints the notifications as they arrive until SIGINT",
    () =>
      Effect.gen(function* () {
        // The everything server in this process, telling the test when the watcher's `subscriptions/listen` for
        // tool list changes reaches it (the CLI speaks 2026-07-28): handling it registers the watcher, in this
        // process, well before another process's call below can change the list.
        const listening = yield* Deferred.make<void>()
        const asksForToolChanges = (params: unknown) =>
          (params as { readonly notifications?: { readonly toolsListChanged?: unknown } } | undefined)?.notifications
            ?.toolsListChanged === true
        const server = yield* serveEverything(
          Middleware.layer((request, next) =>
            request.method === "subscriptions/listen" && asksForToolChanges(request.params)
              ? Effect.andThen(Deferred.succeed(listening, undefined), next)
              : next
          )
        )
        const watch = yield* Effect.acquireRelease(
          Effect.sync(() => {
            const child = spawn(ServerProcess.node, [cliBin, "watch", "--json", server.url], {
              cwd: ServerProcess.root,
              env: process.env,
              stdio: ["ignore", "pipe", "pipe"]
            })
            const stdout = ServerProcess.record(child.stdout, "the watcher's stdout")
            child.stderr.resume()
            const exited = Effect.callback<number | null>((resume) => {
              if (child.exitCode !== null) return resume(Effect.succeed(child.exitCode))
              child.once("exit", (code) => resume(Effect.succeed(code)))
            })
            return { child, stdout, exited }
          }),
          ({ child }) => ServerProcess.terminate(child)
        )
        yield* Deferred.await(listening)
        // Another session changes the tool list; the server tells every session, the watcher among them.
        const changed = yield* runCli(["call", server.url, "test_trigger_tool_change"])
        assert.strictEqual(changed.code, 0, changed.stderr)
        yield* ServerProcess.waitFor(watch.stdout, /^\{"kind":"tools\/list_changed"\}$/m)
        watch.child.kill("SIGINT")
        assert.strictEqual(yield* watch.exited.pipe(Effect.timeout("15 seconds")), 130)
      }).pipe(Effect.scoped),
    TIMEOUT
  )

  it.live(
    "in a pseudo-terminal a progress bar is drawn, and Ctrl-C cancels the call on the server",
    () =>
      Effect.gen(function* () {
        const server = yield* ServerProcess.spawnHttp()
        const progress = yield* spawnInPty(["call", server.url, "test_tool_with_progress"])
        assert.strictEqual(yield* progress.exited.pipe(Effect.timeout("30 seconds")), 0, progress.output())
        // 50 of 100: half the 30 cells, redrawn in place (carriage return, erase to the end of the line).
        assert.include(progress.output(), `\r[${"#".repeat(15)}${"-".repeat(15)}]  50% 50/100`)
        assert.include(progress.output(), "Tool with progress executed successfully")

        const long = yield* spawnInPty(["call", server.url, "test_long_running", '{"durationMs": 60000}'])
        const started = yield* server.waitForStderr(/started (\S+)/)
        yield* ServerProcess.waitFor(long.output, /\[#*-+\]\s+\d+% \d+\/60000/)
        long.child.stdin.write("\x03") // Ctrl-C, turned into SIGINT by the terminal
        yield* server.waitForStderr(new RegExp(`cancelled ${started[1]}`))
        assert.strictEqual(yield* long.exited.pipe(Effect.timeout("15 seconds")), 130)
        assert.include(long.output(), "cancelled test_long_running")
      }).pipe(Effect.scoped),
    TIMEOUT
  )
})
