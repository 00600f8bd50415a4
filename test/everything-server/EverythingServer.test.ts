/**
 * The everything server in memory: the fixture the conformance suite names,
 * `test_long_running` under the TestClock, the 2026-07-28 input rounds with
 * the keys the suite expects, and the list-change hooks.
 */
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import type * as Session from "@effect-mcp/engine/Session"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import { connect, type Json } from "../support/InMemory.ts"

const conformanceTools = [
  "test_simple_text",
  "test_image_content",
  "test_audio_content",
  "test_embedded_resource",
  "test_multiple_content_types",
  "test_tool_with_logging",
  "test_tool_with_progress",
  "test_error_handling",
  "test_sampling",
  "test_elicitation",
  "test_elicitation_sep1034_defaults",
  "test_elicitation_sep1330_enums",
  "json_schema_2020_12_tool",
  "test_reconnection",
  "test_long_running"
]

const textOf = (result: Json): string => result.content.map((c: Json) => c.text ?? "").join("")

describe("everything server: fixtures", () => {
  it.effect("the Layer and its modules import nothing from Node (only main.ts and the --cluster entry do)", () =>
    Effect.sync(() => {
      const src = fileURLToPath(new URL("../../apps/everything-server/src/", import.meta.url))
      // internal/cluster.ts is main.ts's entry for --cluster (a Node runner of effect/cluster), imported
      // dynamically by main.ts only: like main.ts it may name Node.
      const modules = [
        "EverythingServer.ts",
        "Cli.ts",
        ...fs
          .readdirSync(`${src}internal`)
          .filter((file) => file !== "cluster.ts")
          .map((file) => `internal/${file}`)
      ]
      for (const module of modules) {
        assert.notMatch(
          fs.readFileSync(`${src}${module}`, "utf8"),
          /from "(node:|@effect\/platform-node|@effect-mcp\/platform-node)/,
          module
        )
      }
      assert.match(fs.readFileSync(`${src}main.ts`, "utf8"), /from "@effect-mcp\/platform-node\//)
    })
  )

  it.effect("its serverInfo gives the version in its package.json (the one a release bumps), on every revision", () =>
    Effect.gen(function* () {
      const manifest = JSON.parse(
        fs.readFileSync(new URL("../../apps/everything-server/package.json", import.meta.url), "utf8")
      ) as { readonly version: string }
      for (const version of ["2024-11-05", "2025-11-25", "2026-07-28"] as const) {
        const { client } = yield* connect({ version })
        assert.strictEqual(client.state.peerInfo?.name, "effect-mcp-everything-server", version)
        assert.strictEqual(client.state.peerInfo?.version, manifest.version, version)
      }
    })
  )

  it.effect("lists every tool the suite names, each with a description and an object input schema", () =>
    Effect.gen(function* () {
      const { request } = yield* connect({ version: "2025-11-25" })
      const { tools } = yield* request("tools/list")
      const names: Array<string> = tools.map((t: Json) => t.name)
      for (const name of conformanceTools) assert.include(names, name)
      for (const tool of tools) {
        assert.isString(tool.description, tool.name)
        assert.strictEqual(tool.inputSchema.type, "object", tool.name)
      }
      const jsonSchema = tools.find((t: Json) => t.name === "json_schema_2020_12_tool").inputSchema
      assert.strictEqual(jsonSchema.$schema, "https://json-schema.org/draft/2020-12/schema")
      assert.strictEqual(jsonSchema.$defs.address.$anchor, "addressDef")
      assert.strictEqual(jsonSchema.additionalProperties, false)
      assert.deepStrictEqual(jsonSchema.then, { required: ["phone"] })
    })
  )

  it.effect("serves the resources, the template and the prompts, with completions", () =>
    Effect.gen(function* () {
      const { request } = yield* connect({ version: "2025-11-25" })
      const { resources } = yield* request("resources/list")
      // The test:// fixtures, then each fixture skill's SKILL.md (its other files are read by URI: docs/skills.md).
      assert.deepStrictEqual(
        resources.filter((r: Json) => r.uri.startsWith("test://")).map((r: Json) => [r.uri, typeof r.description]),
        [
          ["test://static-binary", "string"],
          ["test://static-text", "string"],
          ["test://watched-resource", "string"]
        ]
      )
      const others = resources.filter((r: Json) => !r.uri.startsWith("test://")).map((r: Json) => r.uri)
      assert.isAbove(others.length, 0)
      for (const uri of others) assert.match(uri, /^skill:\/\/.*\/SKILL\.md$/)
      const binary = yield* request("resources/read", { uri: "test://static-binary" })
      assert.strictEqual(binary.contents[0].mimeType, "image/png")
      assert.isString(binary.contents[0].blob)
      const templated = yield* request("resources/read", { uri: "test://template/7/data" })
      assert.include(templated.contents[0].text, '"id":"7"')
      assert.deepStrictEqual(yield* request("resources/subscribe", { uri: "test://watched-resource" }), {})
      assert.deepStrictEqual(yield* request("resources/unsubscribe", { uri: "test://watched-resource" }), {})
      const { prompts } = yield* request("prompts/list")
      for (const prompt of prompts) assert.isString(prompt.description, prompt.name)
      const withArgs = yield* request("prompts/get", {
        name: "test_prompt_with_arguments",
        arguments: { arg1: "one", arg2: "two" }
      })
      assert.strictEqual(withArgs.messages[0].content.text, "Prompt with arguments: arg1='one', arg2='two'")
      const completed = yield* request("completion/complete", {
        ref: { type: "ref/prompt", name: "test_prompt_with_arguments" },
        argument: { name: "arg1", value: "pa" }
      })
      assert.deepStrictEqual(completed.completion.values, ["paris", "park", "party"])
    })
  )

  it.effect("test_tool_with_logging logs three messages at info, in order, before its result", () =>
    Effect.gen(function* () {
      const { request, notifications } = yield* connect({ version: "2025-11-25" })
      yield* request("logging/setLevel", { level: "debug" })
      const call = yield* Effect.forkChild(request("tools/call", { name: "test_tool_with_logging", arguments: {} }))
      yield* TestClock.adjust("100 millis")
      const result = yield* Fiber.join(call)
      assert.strictEqual(textOf(result), "Tool with logging executed successfully")
      assert.deepStrictEqual(
        notifications.filter((n) => n.method === "notifications/message").map((n) => [n.params.level, n.params.data]),
        [
          ["info", "Tool execution started"],
          ["info", "Tool processing data"],
          ["info", "Tool execution completed"]
        ]
      )
    })
  )
})

describe("everything server: test_long_running", () => {
  it.effect("reports progress every 100 ms until durationMs, then answers", () =>
    Effect.gen(function* () {
      const { client, stderr } = yield* connect({ version: "2025-11-25" })
      const progress: Array<readonly [number, number | undefined]> = []
      const call = yield* Effect.forkChild(
        client.request(
          "tools/call",
          { name: "test_long_running", arguments: { durationMs: 350 } },
          { onProgress: (u) => progress.push([u.progress, u.total]) }
        )
      )
      for (let i = 0; i < 4; i++) yield* TestClock.adjust("100 millis")
      const result = yield* Fiber.join(call)
      assert.strictEqual(textOf(result), "Completed after 350 ms")
      assert.deepStrictEqual(progress, [
        [100, 350],
        [200, 350],
        [300, 350],
        [350, 350]
      ])
      assert.lengthOf(stderr, 1)
      assert.match(stderr[0]!, /^started \S+$/)
    })
  )

  it.effect("cancelled, it stops and writes `cancelled <request id>`", () =>
    Effect.gen(function* () {
      const { client, stderr, until } = yield* connect({ version: "2025-11-25" })
      let id: string | number | undefined
      let updates = 0
      const call = yield* Effect.forkChild(
        client.request(
          "tools/call",
          { name: "test_long_running", arguments: { durationMs: 10_000 } },
          { onRequestId: (sent) => (id = sent), onProgress: () => updates++ }
        )
      )
      yield* TestClock.adjust("250 millis")
      assert.strictEqual(updates, 2)
      // Interrupting the caller sends notifications/cancelled.
      yield* Fiber.interrupt(call)
      yield* until(() => stderr.length >= 2)
      assert.deepStrictEqual(stderr, [`started ${id}`, `cancelled ${id}`])
      yield* TestClock.adjust("1 second")
      assert.strictEqual(updates, 2)
    })
  )
})

describe("everything server: 2026-07-28 input rounds", () => {
  const capabilities = { elicitation: {}, sampling: {}, roots: {} }

  it.effect("asks under the keys the suite expects and answers a direct retry without requestState", () =>
    Effect.gen(function* () {
      const { request } = yield* connect({ version: "2026-07-28", capabilities })
      const params = { name: "test_input_required_result_elicitation", arguments: {} }
      const first = yield* request("tools/call", params)
      assert.strictEqual(first.resultType, "input_required")
      assert.deepStrictEqual(Object.keys(first.inputRequests), ["user_name"])
      assert.strictEqual(first.inputRequests.user_name.method, "elicitation/create")
      assert.isString(first.requestState)
      const answer = { action: "accept", content: { name: "Ada" } }
      const retried = yield* request("tools/call", {
        ...params,
        inputResponses: { user_name: answer },
        requestState: first.requestState
      })
      assert.strictEqual(textOf(retried), "Hello, Ada!")
      const direct = yield* request("tools/call", {
        ...params,
        inputResponses: { user_name: answer, unknown_extra_key: { action: "decline" } }
      })
      assert.strictEqual(textOf(direct), "Hello, Ada!")
    })
  )

  it.effect("asks again for an answer under another key, and rejects a response that is not an object", () =>
    Effect.gen(function* () {
      const { request } = yield* connect({ version: "2026-07-28", capabilities })
      const params = { name: "test_input_required_result_elicitation", arguments: {} }
      const wrong = yield* request("tools/call", { ...params, inputResponses: { wrong_key: { action: "accept" } } })
      assert.strictEqual(wrong.resultType, "input_required")
      const invalid: Json = yield* Effect.flip(
        request("tools/call", { ...params, inputResponses: { user_name: 12345 } })
      )
      assert.strictEqual(invalid.code, -32602)
    })
  )

  it.effect("runs several rounds, each with a new requestState, and rejects a tampered one", () =>
    Effect.gen(function* () {
      const { request } = yield* connect({ version: "2026-07-28", capabilities })
      const params = { name: "test_input_required_result_multi_round", arguments: {} }
      const round1 = yield* request("tools/call", params)
      assert.deepStrictEqual(Object.keys(round1.inputRequests), ["step1"])
      const round2 = yield* request("tools/call", {
        ...params,
        inputResponses: { step1: { action: "accept", content: { name: "Ada" } } },
        requestState: round1.requestState
      })
      assert.deepStrictEqual(Object.keys(round2.inputRequests), ["step2"])
      assert.notStrictEqual(round2.requestState, round1.requestState)
      const tampered: Json = yield* Effect.flip(
        request("tools/call", {
          ...params,
          inputResponses: { step2: { action: "accept", content: { color: "red" } } },
          requestState: `${round2.requestState}-TAMPERED`
        })
      )
      assert.strictEqual(tampered.code, -32602)
      const done = yield* request("tools/call", {
        ...params,
        inputResponses: { step2: { action: "accept", content: { color: "red" } } },
        requestState: round2.requestState
      })
      assert.strictEqual(textOf(done), "Completed: name=Ada, color=red")
    })
  )

  it.effect("asks for all three inputs at once, and only through declared capabilities", () =>
    Effect.gen(function* () {
      const { request } = yield* connect({ version: "2026-07-28", capabilities })
      const multiple = yield* request("tools/call", {
        name: "test_input_required_result_multiple_inputs",
        arguments: {}
      })
      assert.deepStrictEqual(
        Object.entries(multiple.inputRequests).map(([key, r]: [string, Json]) => [key, r.method]),
        [
          ["user_name", "elicitation/create"],
          ["greeting", "sampling/createMessage"],
          ["client_roots", "roots/list"]
        ]
      )
      const samplingOnly = yield* connect({ version: "2026-07-28", capabilities: { sampling: {} } })
      const limited = yield* samplingOnly.request("tools/call", {
        name: "test_input_required_result_capabilities",
        arguments: {}
      })
      assert.deepStrictEqual(
        Object.values(limited.inputRequests).map((r: Json) => r.method),
        ["sampling/createMessage"]
      )
      const missing: Json = yield* Effect.flip(
        samplingOnly.request("tools/call", { name: "test_streaming_elicitation", arguments: {} })
      )
      assert.strictEqual(missing.code, -32021)
    })
  )

  it.effect("asks from prompts/get too", () =>
    Effect.gen(function* () {
      const { request } = yield* connect({ version: "2026-07-28", capabilities })
      const first = yield* request("prompts/get", { name: "test_input_required_result_prompt" })
      assert.deepStrictEqual(Object.keys(first.inputRequests), ["user_context"])
      const done = yield* request("prompts/get", {
        name: "test_input_required_result_prompt",
        inputResponses: { user_context: { action: "accept", content: { context: "tests" } } },
        requestState: first.requestState
      })
      assert.strictEqual(done.messages[0].content.text, "Use this context: tests")
    })
  )
})

describe("everything server: stateful asks and list changes", () => {
  const handlers = new Map<string, Session.Handler>([
    [
      "sampling/createMessage",
      () =>
        Effect.succeed({
          role: "assistant",
          content: { type: "text", text: "Paris" },
          model: "m",
          stopReason: "endTurn"
        })
    ],
    ["elicitation/create", () => Effect.succeed({ action: "accept", content: { name: "Ada" } })],
    ["roots/list", () => Effect.succeed({ roots: [{ uri: "file:///r", name: "r" }] })]
  ])

  it.effect("the input-round tools send requests to a stateful client", () =>
    Effect.gen(function* () {
      const { request } = yield* connect({
        version: "2025-11-25",
        capabilities: { elicitation: {}, sampling: {}, roots: {} },
        handlers
      })
      const call = (name: string) => Effect.map(request("tools/call", { name, arguments: {} }), textOf)
      assert.strictEqual(yield* call("test_input_required_result_elicitation"), "Hello, Ada!")
      assert.strictEqual(yield* call("test_input_required_result_sampling"), "Sampling response: Paris")
      assert.strictEqual(
        yield* call("test_input_required_result_multiple_inputs"),
        "name=Ada, greeting=Paris, roots=file:///r"
      )
      const sampled = yield* request("tools/call", { name: "test_sampling", arguments: { prompt: "Capital?" } })
      assert.strictEqual(textOf(sampled), "LLM response: Paris")
    })
  )

  it.effect("the trigger tools add and remove an item and announce each change", () =>
    Effect.gen(function* () {
      const { request, notifications, until } = yield* connect({ version: "2025-11-25" })
      const toolNames = Effect.map(request("tools/list"), (r) => r.tools.map((t: Json) => t.name) as Array<string>)
      assert.notInclude(yield* toolNames, "test_dynamic_tool")
      const added = yield* request("tools/call", { name: "test_trigger_tool_change", arguments: {} })
      assert.strictEqual(textOf(added), "test_dynamic_tool added")
      assert.include(yield* toolNames, "test_dynamic_tool")
      const removed = yield* request("tools/call", { name: "test_trigger_tool_change", arguments: {} })
      assert.strictEqual(textOf(removed), "test_dynamic_tool removed")
      assert.notInclude(yield* toolNames, "test_dynamic_tool")
      yield* request("tools/call", { name: "test_trigger_prompt_change", arguments: {} })
      yield* until(() => notifications.length >= 3)
      assert.deepStrictEqual(
        notifications.map((n) => n.method),
        ["notifications/tools/list_changed", "notifications/tools/list_changed", "notifications/prompts/list_changed"]
      )
    })
  )
})
