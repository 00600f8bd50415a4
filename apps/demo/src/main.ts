/**
 * `npm run demo`: a host driven by a config file (apps/demo/mcp.json, the
 * `mcpServers` format of Claude Desktop, Cursor and VS Code) talks to the
 * everything server over stdio ("local") and over Streamable HTTP ("remote"),
 * and prints what happens: the servers connecting, one catalog of their
 * tools, calls on both at once with progress bars, a call cancelled on its
 * server, and the stdio server killed and respawned by the host. Every
 * process it starts is stopped before it exits.
 */
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import * as McpConfig from "@effect-mcp/host/McpConfig"
import * as McpHost from "@effect-mcp/host/McpHost"
import * as NodeConnector from "@effect-mcp/host/NodeConnector"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as References from "effect/References"
import * as Demo from "./Demo.ts"
import * as Everything from "./Everything.ts"

const heading = (text: string) => Console.log(`\n── ${text} ${"─".repeat(Math.max(0, 70 - text.length))}`)

const configFile = fileURLToPath(new URL("../mcp.json", import.meta.url))
// biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholder the config file holds, not a template
const PORT = "${PORT}"

/**
 * The config file as a user writes it, made runnable here: the HTTP server's
 * port is chosen when it starts (`${PORT}`), and `mcp-everything-server` is
 * the workspace's bin, run with this Node and its flags (in the repository it
 * is not on the PATH).
 */
const loadConfig = (port: string): Effect.Effect<McpConfig.Config, Everything.DemoError> =>
  McpConfig.parse(fs.readFileSync(configFile, "utf8").replaceAll(PORT, port)).pipe(
    Effect.map((config) => ({
      mcpServers: Object.fromEntries(
        Object.entries(config.mcpServers).map(([name, server]) => [
          name,
          McpConfig.isStdio(server) && server.command === "mcp-everything-server"
            ? {
                ...server,
                command: process.execPath,
                args: [...process.execArgv, Everything.everythingBin, ...(server.args ?? [])]
              }
            : server
        ])
      )
    })),
    Effect.mapError((e) => new Everything.DemoError({ message: `${configFile}: ${e.message}`, cause: e }))
  )

const program = Effect.gen(function* () {
  const start = yield* Clock.currentTimeMillis
  yield* Console.log("effect-mcp demo: a host of two everything servers, from apps/demo/mcp.json")

  yield* heading("servers")
  const remote = yield* Everything.spawnHttp
  yield* Console.log(`  ${"spawn".padEnd(9)}mcp-everything-server --http --port 0 -> ${remote.url}`)
  const config = yield* loadConfig(new URL(remote.url).port)
  const host = yield* McpHost.make({ clientInfo: { name: "effect-mcp-demo", version: "0.1.0" }, config }).pipe(
    Effect.provide(NodeConnector.layer())
  )
  for (const server of host.servers) {
    const ready = yield* host
      .awaitReady(server)
      .pipe(Effect.mapError((e) => new Everything.DemoError({ message: `${server}: ${e.message}`, cause: e })))
    const entry = config.mcpServers[server]!
    const how = McpConfig.isStdio(entry) ? `stdio, pid ${ready.pid}` : entry.url
    yield* Console.log(
      `  ${"ready".padEnd(9)}${server} (${how}): ${ready.serverInfo?.name}, protocol ${ready.revision}`
    )
  }

  yield* heading("one catalog")
  const tools = yield* Demo.catalog(host)
  yield* heading("concurrent calls")
  const updates = yield* Demo.concurrentCalls(host)
  yield* heading("cancellation")
  const cancelled = yield* Demo.cancellation(host, "remote", remote.log)
  yield* heading("respawn")
  const respawned = yield* Demo.respawn(host, "local")

  yield* heading("summary")
  yield* Console.log(
    `  ${host.servers.length} servers, ${tools} tools, ${updates} progress updates, request ${cancelled.id} ` +
      `cancelled (confirmed in ${cancelled.confirmedMs} ms), local respawned (pid ${respawned.before} -> ${respawned.after})`
  )
  const elapsed = ((yield* Clock.currentTimeMillis) - start) / 1000
  yield* Console.log(`\ndone in ${elapsed.toFixed(1)} s`)
}).pipe(
  Effect.scoped,
  // The host warns that this client declares no sampling, elicitation or roots: true, and not the demo's subject.
  Effect.provideService(References.MinimumLogLevel, "Error"),
  // The demo promises to end by itself: a hung step fails it instead.
  Effect.timeoutOrElse({
    duration: "30 seconds",
    orElse: () => Effect.fail(new Everything.DemoError({ message: "the demo did not finish within 30 s" }))
  })
)

NodeRuntime.runMain(program)
