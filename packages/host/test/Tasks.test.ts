/**
 * Tasks through the host: a tool its server runs only as a task
 * (`taskSupport: "required"`) called by catalog name, followed with
 * `callToolAsTask`, and each server's tasks API, on 2025-11-25 (the core
 * form) and 2026-07-28 (the Tasks extension), on the TestClock. The host's
 * clients as task receivers (`client.taskRequests`): a server's sampling and
 * elicitation asked as tasks, declared in the connection's status, behind
 * the consent hooks.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
import * as Elicitation from "@effect-mcp/server/Elicitation"
import * as Sampling from "@effect-mcp/server/Sampling"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as LanguageModel from "effect/ai/LanguageModel"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import * as AiToolkit from "../src/AiToolkit.ts"
import * as Connector from "../src/Connector.ts"
import * as Consent from "../src/Consent.ts"
import * as McpHost from "../src/McpHost.ts"
import { clientInfo, configOf, echoServer, memory, textOf } from "./fixtures.ts"

/** Completed when a build starts; a test that waits for that replaces it first. */
let buildStarted = Deferred.makeUnsafe<void>()

const build = Tool.make("build", {
  description: "Builds a target (minutes of work: only as a task)",
  input: Schema.Struct({ target: Schema.String }),
  taskSupport: "required",
  handler: ({ target }) =>
    Effect.andThen(
      Effect.sync(() => Deferred.doneUnsafe(buildStarted, Exit.void)),
      Effect.as(Effect.sleep("3 seconds"), `built ${target}`)
    )
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

        // Returns once the call has come to rest: the task created, the build asleep, the client polling.
        const call = yield* McpTest.forkIdle(host.callTool("jobs__build", { target: "docs" }))
        yield* TestClock.adjust("5 seconds")
        assert.strictEqual(textOf(yield* Fiber.join(call)), "built docs")

        const events = yield* McpTest.forkIdle(Stream.runCollect(host.callToolAsTask("jobs__build", { target: "app" })))
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
      buildStarted = Deferred.makeUnsafe<void>()
      const answer = yield* Effect.forkChild(
        LanguageModel.generateText({ prompt: "build it", toolkit: AiToolkit.toolkit() }).pipe(
          Effect.provide(model),
          Effect.provideService(McpHost.McpHost, host)
        ),
        { startImmediately: true }
      )
      // The model's call reaches the server's build before time moves.
      yield* Deferred.await(buildStarted)
      yield* TestClock.adjust("5 seconds")
      const response = yield* Fiber.join(answer)
      assert.strictEqual(response.toolResults.length, 1)
      assert.isFalse(response.toolResults[0]!.isFailure)
      assert.strictEqual(response.toolResults[0]!.result, "built ai")
    })
  )

  it.effect("client.taskRequests: the host's clients take a server's sampling and elicitation as tasks", () =>
    Effect.gen(function* () {
      const asker = echoServer(
        "asker",
        Tool.make("summarize", {
          input: Schema.Struct({}),
          handler: () =>
            Effect.map(
              Sampling.createMessage(
                { messages: [{ role: "user", content: { type: "text", text: "summarize" } }], maxTokens: 10 },
                { task: { ttl: 60_000 } }
              ),
              Sampling.text
            )
        }),
        Tool.make("confirm", {
          input: Schema.Struct({}),
          handler: () =>
            Effect.map(
              Elicitation.form({ message: "name?", schema: Schema.Struct({ name: Schema.String }) }, { task: true }),
              (answer) => (answer.action === "accept" ? `hello ${answer.content.name}` : answer.action)
            )
        })
      )
      const servers = yield* memory({ asker })
      // What the host's client sends, to see its answers to the server's asks.
      const sent: Array<{ readonly result?: { readonly task?: { readonly status: string } } }> = []
      const inner = yield* Effect.provide(Effect.service(Connector.Connector), servers.connector)
      const recording = Connector.layer((name, config) =>
        Effect.map(inner.connect(name, config), ({ transport }) => ({
          transport: {
            incoming: transport.incoming,
            send: (frame, options) => {
              sent.push(JSON.parse(JSON.stringify(frame)))
              return transport.send(frame, options)
            }
          }
        }))
      )
      const consulted: Array<string> = []
      const host = yield* McpHost.make({
        clientInfo,
        config: configOf("asker"),
        client: { supportedVersions: ["2025-11-25"], taskRequests: { sampling: true, elicitation: true } },
        healthCheck: false
      }).pipe(
        Effect.provide(recording),
        Effect.provide(
          Layer.mergeAll(
            SamplingHandler.layer(() =>
              Effect.as(Effect.sleep("2 seconds"), {
                role: "assistant" as const,
                content: { type: "text" as const, text: "short" },
                model: "m"
              })
            ),
            ElicitationHandler.layer({
              form: () => Effect.as(Effect.sleep("1 second"), { action: "accept" as const, content: { name: "Ada" } })
            }),
            Consent.layer({
              sampling: ({ server }) => Effect.sync(() => consulted.push(`sampling ${server}`)).pipe(Effect.as(true)),
              elicitation: ({ server }) =>
                Effect.sync(() => consulted.push(`elicitation ${server}`)).pipe(Effect.as(true))
            })
          )
        )
      )
      // The connection's status says what its client declared: the tasks it takes.
      const ready = yield* host.awaitReady("asker")
      assert.deepStrictEqual(ready.clientCapabilities.tasks, {
        list: {},
        cancel: {},
        requests: { sampling: { createMessage: {} }, elicitation: { create: {} } }
      })

      // Each call returns once at rest: the server's ask handed over as a task, its handler asleep, polled.
      const summarize = yield* McpTest.forkIdle(host.callTool("asker__summarize"))
      yield* TestClock.adjust("5 seconds")
      assert.strictEqual(textOf(yield* Fiber.join(summarize)), "short")
      const confirm = yield* McpTest.forkIdle(host.callTool("asker__confirm"))
      yield* TestClock.adjust("5 seconds")
      assert.strictEqual(textOf(yield* Fiber.join(confirm)), "hello Ada")
      // Each ask was answered at once with a task (then polled and read), and went through the consent hook.
      const created = sent.filter((m) => m.result?.task !== undefined).map((m) => m.result!.task!.status)
      assert.deepStrictEqual(created, ["working", "working"])
      assert.deepStrictEqual(consulted, ["sampling asker", "elicitation asker"])
    })
  )
})
