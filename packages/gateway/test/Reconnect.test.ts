/**
 * An upstream's outage, in memory on the TestClock: the gateway, a
 * long-running service, tries the upstream again for as long as it runs
 * (the host's own default gives up after 10 retries, about 2.5 minutes of
 * outage, and leaves it `Failed` for good), and serves its tools again once
 * it is back.
 */
import type * as McpClient from "@effect-mcp/client/McpClient"
import type * as McpConfig from "@effect-mcp/host/McpConfig"
import * as McpHost from "@effect-mcp/host/McpHost"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Gateway from "../src/Gateway.ts"
import * as GatewayConfig from "../src/GatewayConfig.ts"
import { switchable } from "./memoryConnector.ts"

const config: McpConfig.Config = { mcpServers: { up: { command: "up" } } }

const upstream = Tool.layer(
  Tool.make("echo", { input: Schema.Struct({ text: Schema.String }), handler: ({ text }) => Effect.succeed(text) })
).pipe(Layer.provideMerge(McpServer.layer({ name: "up", version: "1.0.0" })))

const toolNames = (client: McpClient.McpClientShape) =>
  Effect.map(Stream.runCollect(client.tools), (tools) => tools.map((t) => t.name))

/** Waits until the host says `status` of "up" (the current status counts). */
const until = (host: McpHost.McpHostShape, tag: string) =>
  host.statusChanges.pipe(
    Stream.filter((change) => change.server === "up" && change.status._tag === tag),
    Stream.runHead
  )

/**
 * The gateway over "up", an outage of an hour (at least `minAttempts` attempts to connect meanwhile), and "up"
 * back: `waitMore` after, "up" is served again.
 */
const outage = (options: Partial<Gateway.Options>, waitMore: Duration.Input, minAttempts: number) =>
  Effect.gen(function* () {
    const upstreams = switchable({ up: yield* Layer.build(upstream) })
    const context = yield* Layer.build(
      Gateway.layer({
        server: { name: "gateway", version: "1.0.0" },
        config,
        healthCheck: false,
        awaitUpstreams: 0,
        ...options
      }).pipe(Layer.provide(upstreams.connector))
    )
    const host = Context.get(context, McpHost.McpHost)
    yield* host.awaitReady("up")
    const client = yield* McpTest.makeClient({ revision: "2025-11-25" }).pipe(Effect.provideContext(context))
    assert.deepStrictEqual(yield* toolNames(client), ["up__echo"])

    yield* upstreams.down("up")
    yield* until(host, "Degraded")
    // An hour down: the host's default would have given up after its 10th retry, about 2.5 minutes in.
    yield* TestClock.adjust("1 hour")
    const status = yield* host.status("up")
    assert.strictEqual(status._tag, "Degraded", "still tried, not failed for good")
    // Every cap at most, all hour long.
    assert.isAtLeast(upstreams.attempts.get("up")!, minAttempts, "tried again all along")

    upstreams.up("up")
    yield* TestClock.adjust(waitMore)
    yield* until(host, "Ready")
    assert.deepStrictEqual(yield* toolNames(client), ["up__echo"])
    const result = yield* client.callTool("up__echo", { text: "back" })
    assert.deepStrictEqual(result.content, [{ type: "text", text: "back" }])
  })

describe("Gateway reconnecting", () => {
  it.effect("an upstream down for an hour is tried all along, and its tools are served again once it is back", () =>
    outage({}, "30 seconds", 3600 / 30)
  )

  it.effect("reconnectCap bounds the wait between two attempts", () =>
    outage({ reconnectCap: "5 seconds" }, "5 seconds", 3600 / 5)
  )

  it.effect("the file's reconnectCapSeconds sets the cap", () =>
    Effect.gen(function* () {
      const file = yield* GatewayConfig.decode({ ...config, gateway: { reconnectCapSeconds: 5 } })
      assert.strictEqual(file.reconnectCap === undefined ? undefined : Duration.toMillis(file.reconnectCap), 5000)
    })
  )
})
