/**
 * Tasks through the host: a tool its server runs only as a task
 * (`taskSupport: "required"`) called by catalog name, followed with
 * `callToolAsTask`, and each server's tasks API, on 2025-11-25 (the core
 * form) and 2026-07-28 (the Tasks extension), on the TestClock.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Tool from "@effect-mcp/server/Tool"
import * as LanguageModel from "effect/ai/LanguageModel"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import * as AiToolkit from "../src/AiToolkit.ts"
import * as McpHost from "../src/McpHost.ts"
import { clientInfo, configOf, echoServer, memory, textOf } from "./fixtures.ts"

const build = Tool.make("build", {
  description: "Builds a target (minutes of work: only as a task)",
  input: Schema.Struct({ target: Schema.String }),
  taskSupport: "required",
  handler: ({ target }) => Effect.as(Effect.sleep("3 seconds"), `built ${target}`)
})

const hostOn = (version: "2025-11-25" | "2026-07-28") =>
  Effect.gen(function* () {
    const servers = yield* memory({ jobs: echoServer("jobs", build) })
    const host = yield* McpHost.make({
      clientInfo,
      config: configOf("jobs"),
      client: { supportedVersions: [version], taskPollInterval: "1 second" },
      healthCheck: false
    }).pipe(Effect.provide(servers.connector))
    yield* host.awaitReady("jobs")
    return host
  })

describe("McpHost tasks", () => {
  for (const [version, form] of [
    ["2025-11-25", "core"],
    ["2026-07-28", "extension"]
  ] as const) {
    it.effect(`${version}: callTool runs a required tool as a task; callToolAsTask streams its statuses`, () =>
      Effect.gen(function* () {
        const host = yield* hostOn(version)
        const tasks = yield* host.tasks("jobs")
        assert.strictEqual(tasks.form, form)

        const call = yield* Effect.forkChild(host.callTool("jobs__build", { target: "docs" }), {
          startImmediately: true
        })
        yield* TestClock.adjust("5 seconds")
        assert.strictEqual(textOf(yield* Fiber.join(call)), "built docs")

        const events = yield* Effect.forkChild(
          Stream.runCollect(host.callToolAsTask("jobs__build", { target: "app" })),
          {
            startImmediately: true
          }
        )
        yield* TestClock.adjust("5 seconds")
        const seen = (yield* Fiber.join(events)).map((e) =>
          e._tag === "Status" ? e.task.status : `result ${textOf(e.value)}`
        )
        assert.deepStrictEqual(seen, ["working", "completed", "result built app"])
      })
    )
  }

  it.effect("the effect/ai bridge: a model calling a tool that runs as a task gets its result", () =>
    Effect.gen(function* () {
      const host = yield* hostOn("2026-07-28")
      // A model that asks for the tool once, then is done.
      const model = Layer.effect(
        LanguageModel.LanguageModel,
        LanguageModel.make({
          generateText: () =>
            Effect.succeed([{ type: "tool-call", id: "call-1", name: "jobs__build", params: { target: "ai" } }]),
          streamText: () => Stream.empty
        })
      )
      const answer = yield* Effect.forkChild(
        LanguageModel.generateText({ prompt: "build it", toolkit: AiToolkit.toolkit() }).pipe(
          Effect.provide(model),
          Effect.provideService(McpHost.McpHost, host)
        ),
        { startImmediately: true }
      )
      // Let the model's call reach the host before time moves.
      yield* Effect.repeat(Effect.yieldNow, { times: 100 })
      yield* TestClock.adjust("5 seconds")
      const response = yield* Fiber.join(answer)
      assert.strictEqual(response.toolResults.length, 1)
      assert.isFalse(response.toolResults[0]!.isFailure)
      assert.strictEqual(response.toolResults[0]!.result, "built ai")
    })
  )
})
