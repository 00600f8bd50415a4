/**
 * What the gateway relays of an upstream's answer, in memory on the TestClock:
 * a long call stays alive while the upstream reports progress, and a tool's or
 * prompt's result reaches the downstream client as the gateway's own answer
 * (the gateway's `serverInfo`, the client's revision's envelope).
 */
import * as Meta from "@effect-mcp/protocol/Meta"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Prompt from "@effect-mcp/server/Prompt"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Gateway from "../src/Gateway.ts"
import { memory } from "./memoryConnector.ts"

/** The upstream "a": `long` reports progress on each "tick" of `ticks` and answers on "done"; `echo`; `greet`. */
const upstream = (ticks: Queue.Queue<"tick" | "done">) =>
  Layer.mergeAll(
    Tool.layer(
      Tool.make("long", {
        input: Schema.Struct({}),
        handler: () =>
          Effect.gen(function* () {
            for (let n = 1; ; n++) {
              if ((yield* Queue.take(ticks)) === "done") return "done"
              yield* ServerRequest.progress({ progress: n })
            }
          })
      }),
      Tool.make("echo", { input: Schema.Struct({}), handler: () => Effect.succeed("echoed") })
    ),
    Prompt.layer(Prompt.make({ name: "greet", handler: () => Effect.succeed("hello") }))
  ).pipe(Layer.provideMerge(McpServer.layer({ name: "upstream-a", version: "1.0.0" })))

const gateway = Effect.gen(function* () {
  const ticks = yield* Queue.unbounded<"tick" | "done">()
  const a = yield* Layer.build(upstream(ticks))
  const context = yield* Layer.build(
    Gateway.layer({
      server: { name: "gateway", version: "1.0.0" },
      config: { mcpServers: { a: { command: "a" } } },
      unprefixed: "a",
      healthCheck: false
    }).pipe(Layer.provide(memory({ a })))
  )
  return { context, ticks }
})

const textOf = (result: Tools.CallToolResult) =>
  result.content.map((block) => (block.type === "text" ? block.text : "")).join("")

/** What a result's envelope may carry, read field by field. */
interface Envelope {
  readonly resultType?: string
  readonly _meta?: { readonly [key: string]: { readonly name?: string } | undefined }
}

describe("Relay", () => {
  it.effect("a call stays alive past the upstream timeout while the upstream reports progress", () =>
    Effect.gen(function* () {
      const { context, ticks } = yield* gateway
      const client = yield* McpTest.makeClient({ revision: "2025-11-25" }).pipe(Effect.provideContext(context))
      // What the client sees, in order: each progress, then the result or the failure.
      const seen = yield* Queue.unbounded<number | string>()
      yield* client.callToolWithProgress("long", {}, { resetTimeoutOnProgress: true }).pipe(
        Stream.runForEach((event) =>
          Queue.offer(seen, event._tag === "Progress" ? event.update.progress : textOf(event.value))
        ),
        Effect.catch((error) => Queue.offer(seen, `failed: ${String(error)}`)),
        Effect.forkChild
      )
      // Three spans of 40 s, 120 s in all: each past the 60 s timeout of the gateway's upstream call
      // counted from the call's start, each within it counted from the last progress.
      for (const n of [1, 2]) {
        yield* TestClock.adjust(Duration.seconds(40))
        yield* Queue.offer(ticks, "tick")
        assert.strictEqual(yield* Queue.take(seen), n)
      }
      yield* TestClock.adjust(Duration.seconds(40))
      yield* Queue.offer(ticks, "done")
      assert.strictEqual(yield* Queue.take(seen), "done")
    })
  )

  it.effect("a tool's and a prompt's result name the gateway, in the envelope of the client's revision", () =>
    Effect.gen(function* () {
      const { context } = yield* gateway
      for (const revision of ["2025-11-25", "2026-07-28"] as const) {
        const client = yield* McpTest.makeClient({ revision }).pipe(Effect.provideContext(context))
        for (const raw of [
          (yield* client.request("tools/call", { name: "echo", arguments: {} })) as Envelope,
          (yield* client.request("prompts/get", { name: "greet", arguments: {} })) as Envelope
        ]) {
          if (revision === "2026-07-28") {
            assert.strictEqual(raw._meta?.[Meta.serverInfoKey]?.name, "gateway")
            assert.strictEqual(raw.resultType, "complete")
          } else {
            assert.isUndefined(raw._meta?.[Meta.serverInfoKey])
            assert.isFalse("resultType" in raw)
          }
        }
      }
    })
  )
})
