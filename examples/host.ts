/**
 * A host of two servers from an `mcpServers` configuration: two instances of
 * the notes server over stdio ("work" and "home"), supervised by McpHost. It
 * shows the one catalog (same tools, so every name carries its server),
 * calls routed by name running side by side, a call cancelled on its server,
 * a server that is killed, reported and respawned, and one set of handlers
 * (sampling, elicitation, roots) answering for every server.
 *
 *   node --conditions=@effect-mcp/source examples/host.ts
 *
 * Checks every answer and exits non-zero if one differs.
 */
import * as assert from "node:assert/strict"
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as RootsHandler from "@effect-mcp/client/RootsHandler"
import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
import * as McpConfig from "@effect-mcp/host/McpConfig"
import * as McpHost from "@effect-mcp/host/McpHost"
import * as NodeConnector from "@effect-mcp/host/NodeConnector"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { spawnArgs } from "./notes-server.ts"

const textOf = (result: Tools.CallToolResult) =>
  result.content.map((block) => (block.type === "text" ? block.text : "")).join("")

// The configuration as a file would hold it (McpConfig.load reads one); decoding names a wrong server and field.
const config = McpConfig.parse(
  JSON.stringify({
    mcpServers: {
      work: { command: process.execPath, args: spawnArgs },
      home: { command: process.execPath, args: spawnArgs }
    }
  })
)

const program = Effect.gen(function* () {
  const host = yield* McpHost.McpHost
  yield* Effect.all([host.awaitReady("work"), host.awaitReady("home")], { concurrency: "unbounded" })

  // One catalog: both servers offer the same tools, each under its server's prefix.
  const names = (yield* host.tools).map((tool) => tool.name)
  yield* Console.log(`catalog: ${names.length} tools, ${names.filter((n) => n.startsWith("work__")).join(", ")}`)
  assert.equal(new Set(names).size, names.length)
  assert.ok(names.includes("home__add_note"))

  // Calls routed by name, side by side; each server keeps its own notes.
  const [work, home] = yield* Effect.all(
    [
      host.callTool("work__add_note", { title: "standup", body: "at ten" }),
      host.callTool("home__add_note", { title: "groceries", body: "milk" })
    ],
    { concurrency: "unbounded" }
  )
  const workId = (work.structuredContent as { readonly id: string }).id
  const homeId = (home.structuredContent as { readonly id: string }).id
  const bodies = yield* Effect.all([
    host.callTool("work__get_note", { id: workId }),
    host.callTool("home__get_note", { id: homeId })
  ])
  yield* Console.log(`work note -> ${textOf(bodies[0])}; home note -> ${textOf(bodies[1])}`)
  assert.deepEqual(bodies.map(textOf), ["at ten", "milk"])

  // A call interrupted here is cancelled on its server (notifications/cancelled); interrupted once it has
  // reported progress, so it is running there.
  const counting = yield* Deferred.make<void>()
  const slow = yield* Effect.forkChild(
    host
      .callToolWithProgress("work__count_to", { to: 50, stepMs: 100 })
      .pipe(
        Stream.runForEach((event) => (event._tag === "Progress" ? Deferred.succeed(counting, undefined) : Effect.void))
      )
  )
  yield* Deferred.await(counting)
  yield* Fiber.interrupt(slow)
  yield* Console.log("count_to cancelled")

  // The home server's process is killed: the host reports it and spawns it again.
  const before = yield* host.awaitReady("home")
  // The Stream starts with every server's current status, read after it subscribed: once one arrives, no
  // change is missed.
  const subscribed = yield* Deferred.make<void>()
  const changes = yield* host.statusChanges.pipe(
    Stream.tap(() => Deferred.succeed(subscribed, undefined)),
    Stream.filter((change) => change.server === "home"),
    Stream.takeUntil((change) => change.status._tag === "Ready" && change.status.connection.pid !== before.pid),
    Stream.runCollect,
    Effect.forkChild
  )
  yield* Deferred.await(subscribed)
  process.kill(before.pid!, "SIGKILL")
  const seen = yield* Fiber.join(changes).pipe(Effect.timeout("20 seconds"))
  const lost = seen.find((change) => change.status._tag === "Degraded")?.status
  assert.equal(lost?._tag, "Degraded")
  yield* Console.log(`home: ${lost._tag === "Degraded" ? lost.failure.message : ""}`)
  yield* Console.log(`home: ${seen.map((change) => change.status._tag).join(" -> ")}`)
  // A new process, with fresh notes: the next id is the one the first note got.
  const again = yield* host.callTool("home__add_note", { title: "after", body: "the respawn" })
  assert.equal((again.structuredContent as { readonly id: string }).id, homeId)

  // The host's sampling handler answers every server's requests.
  const summary = yield* host.callTool("work__summarize", { id: workId })
  yield* Console.log(`work__summarize -> ${textOf(summary)}`)
  assert.match(textOf(summary), /message\(s\) read/)
  yield* Console.log("ok: host")
})

// Given once, for every server: what the host declares follows from these (no handler, no capability,
// and the host warns about it in the log).
const Sampling = SamplingHandler.layer((params) =>
  Effect.succeed({
    role: "assistant" as const,
    content: { type: "text" as const, text: `${params.messages.length} message(s) read` },
    model: "example-model"
  })
)

const Elicitation = ElicitationHandler.layer({ form: () => Effect.succeed({ action: "decline" as const }) })
const Roots = RootsHandler.layer([{ uri: "file:///home/me/notes", name: "notes" }])

const Host = Layer.unwrap(
  Effect.map(config, (config) =>
    McpHost.layer({
      clientInfo: { name: "example-host", version: "1.0.0" },
      config,
      reconnect: McpHost.backoff({ base: "100 millis", cap: "1 second", times: 5 })
    })
  )
).pipe(Layer.provide([NodeConnector.layer(), Sampling, Elicitation, Roots]))

NodeRuntime.runMain(program.pipe(Effect.provide(Host)))
