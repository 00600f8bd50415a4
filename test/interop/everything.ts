/**
 * What every interop test checks against the everything server, whatever the
 * transport: every listed tool called (and no tool left without a check),
 * every resource read, every prompt got, completions, and the cancellation
 * of `test_long_running` seen from the server's side.
 */
import { assert } from "@effect/vitest"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { callId, type Json, rootUri, type SdkClient, sampledText } from "./sdkClient.ts"

/** What a transport setup lets through. */
export interface Mode {
  /** Server-to-client requests (sampling, elicitation, roots) reach the client (false: stateless HTTP). */
  readonly asks: boolean
  /** Notifications of a request (logs, progress) reach the client while it runs (false: JSON responses). */
  readonly streams: boolean
  /**
   * How the client cancels a request: `notifications/cancelled`, or (stateless HTTP, where a
   * notification reaches no session that knows the request) by dropping the HTTP exchange.
   */
  readonly cancelBy: "notification" | "disconnect"
}

const textOf = (result: CallToolResult): string =>
  (result.content as ReadonlyArray<Json>)
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("")

interface ToolCase {
  readonly args?: Record<string, unknown>
  readonly check: (result: CallToolResult, mode: Mode) => void
  /**
   * The call must be answered with a JSON-RPC error matching this: a tool that runs only as a task
   * (`execution.taskSupport: "required"`, the task runs are checked in test/tasks and
   * test/interop/Tasks*) called plainly, or one that ends in a protocol error.
   */
  readonly rejects?: RegExp
}

const answered = (result: CallToolResult) => assert.fail(`expected a JSON-RPC error: ${textOf(result)}`)
const refusedAsPlainCall: ToolCase = { rejects: /task/i, check: answered }

const says =
  (expected: string): ToolCase["check"] =>
  (result) => {
    assert.isUndefined(result.isError, textOf(result))
    assert.strictEqual(textOf(result), expected)
  }

/** Tools that ask the client: answered where asks reach it, a tool error where they cannot. */
const asking =
  (expected: string | RegExp): ToolCase["check"] =>
  (result, mode) => {
    if (!mode.asks) {
      assert.isTrue(result.isError, `expected a tool error without asks: ${textOf(result)}`)
      return
    }
    assert.isUndefined(result.isError, textOf(result))
    if (typeof expected === "string") assert.strictEqual(textOf(result), expected)
    else assert.match(textOf(result), expected)
  }

const contentTypes = (result: CallToolResult) => (result.content as ReadonlyArray<Json>).map((c) => c.type)

const toolCases: Record<string, ToolCase> = {
  test_simple_text: { check: says("This is a simple text response for testing.") },
  test_image_content: {
    check: (result) => {
      assert.deepStrictEqual(contentTypes(result), ["image"])
      assert.strictEqual((result.content[0] as Json).mimeType, "image/png")
    }
  },
  test_audio_content: {
    check: (result) => {
      assert.deepStrictEqual(contentTypes(result), ["audio"])
      assert.strictEqual((result.content[0] as Json).mimeType, "audio/wav")
    }
  },
  test_embedded_resource: {
    check: (result) => {
      assert.deepStrictEqual(contentTypes(result), ["resource"])
      assert.strictEqual((result.content[0] as Json).resource.uri, "test://embedded-resource")
    }
  },
  test_multiple_content_types: {
    check: (result) => assert.deepStrictEqual(contentTypes(result), ["text", "image", "resource"])
  },
  test_tool_with_logging: { check: says("Tool with logging executed successfully") },
  test_tool_with_progress: { check: says("Tool with progress executed successfully") },
  test_error_handling: {
    check: (result) => {
      assert.isTrue(result.isError)
      assert.strictEqual(textOf(result), "This tool intentionally returns an error for testing")
    }
  },
  test_sampling: { args: { prompt: "Say something" }, check: asking(`LLM response: ${sampledText}`) },
  test_elicitation: {
    args: { message: "Who are you?" },
    check: asking('User response: action=accept, content={"username":"Alice","email":"Alice"}')
  },
  test_elicitation_sep1034_defaults: {
    check: asking(
      'Elicitation completed: action=accept, content={"name":"John Doe","age":30,"score":95.5,"status":"active","verified":true}'
    )
  },
  test_elicitation_sep1330_enums: { check: asking(/^Elicitation completed: action=accept, content=\{.*"titledMulti"/) },
  json_schema_2020_12_tool: {
    args: { name: "Ada", contactMethod: "email", email: "ada@example.com" },
    check: (result) => {
      assert.isUndefined(result.isError, textOf(result))
      assert.include(textOf(result), '"email":"ada@example.com"')
    }
  },
  test_reconnection: { check: says("Reconnection test completed successfully") },
  test_long_running: {
    args: { durationMs: 250 },
    check: (result) => assert.match(textOf(result), /^Completed after \d+ ms$/)
  },
  test_input_required_result_elicitation: { check: asking("Hello, Alice!") },
  test_input_required_result_sampling: { check: asking(`Sampling response: ${sampledText}`) },
  test_input_required_result_list_roots: { check: asking(`Client roots: ${rootUri}`) },
  test_input_required_result_request_state: { check: asking(/^state-ok: action=accept/) },
  test_input_required_result_multiple_inputs: {
    check: asking(`name=Alice, greeting=${sampledText}, roots=${rootUri}`)
  },
  test_input_required_result_multi_round: { check: asking("Completed: name=Alice, color=Alice") },
  test_input_required_result_tampered_state: { check: asking("Confirmed: action=accept") },
  test_input_required_result_capabilities: {
    check: (result, mode) =>
      // Without a session the server knows no client capability, so it asks for nothing.
      mode.asks
        ? says(`Answers: ${sampledText}; Alice; ${rootUri}`)(result, mode)
        : says("The client declared no capability to ask through")(result, mode)
  },
  test_missing_capability: { check: asking(`Sampled: ${sampledText}`) },
  test_streaming_elicitation: { check: asking("Elicitation completed: action=accept") },
  test_logging_tool: { check: says("Logged three messages") },
  test_custom_headers: { args: { region: "eu-west" }, check: says("Region: eu-west") },
  // Toggled twice below: once here, once by the list-change check.
  test_trigger_tool_change: { check: says("test_dynamic_tool added") },
  test_trigger_prompt_change: { check: says("test_dynamic_prompt added") },
  test_trigger_resource_update: { check: says("test://watched-resource updated") },
  // The task fixtures (docs/tasks.md), called plainly: those that may run as tasks answer in the request.
  greet: { args: { name: "Ada" }, check: says("Hello, Ada!") },
  slow_compute: { args: { seconds: 0.05, label: "sum" }, check: says("computed sum after 0.05 s") },
  protocol_error_job: { rejects: /-32603: the job crashed/, check: answered },
  confirm_delete: { args: { filename: "a.txt" }, check: asking(/^delete a\.txt: /) },
  multi_input: { check: asking(/^name=.+, confirm=.+$/) },
  failing_job: refusedAsPlainCall,
  test_tool_with_task: refusedAsPlainCall
}

const call = (sdk: SdkClient, name: string, args?: Record<string, unknown>, onprogress?: (p: Json) => void) =>
  Effect.promise(
    () =>
      sdk.client.callTool({ name, arguments: args ?? {} }, undefined, {
        ...(onprogress === undefined ? {} : { onprogress }),
        timeout: 20_000
      }) as Promise<CallToolResult>
  )

/** Lists the tools, checks their definitions, calls each one and checks its result. */
export const tools = (sdk: SdkClient, mode: Mode) =>
  Effect.gen(function* () {
    const listed = yield* Effect.promise(() => sdk.client.listTools())
    const names = listed.tools.map((t) => t.name).sort()
    assert.deepStrictEqual(names, Object.keys(toolCases).sort(), "every listed tool has a check, and only those")
    for (const tool of listed.tools) {
      assert.isString(tool.description, tool.name)
      assert.strictEqual(tool.inputSchema.type, "object", tool.name)
    }
    for (const name of names) {
      const logsBefore = sdk.logs.length
      const progress: Array<number> = []
      const toolCase = toolCases[name]!
      if (toolCase.rejects !== undefined) {
        const refusal = yield* Effect.flip(
          Effect.tryPromise(() => sdk.client.callTool({ name, arguments: toolCase.args ?? {} }, undefined, {}))
        )
        assert.match(String(refusal.cause), toolCase.rejects, name)
        continue
      }
      const result = yield* call(sdk, name, toolCase.args, (p) => progress.push(p.progress))
      toolCase.check(result, mode)
      if (mode.streams && name === "test_tool_with_logging") {
        assert.deepStrictEqual(sdk.logs.slice(logsBefore), [
          "Tool execution started",
          "Tool processing data",
          "Tool execution completed"
        ])
      }
      // The SDK hands a progress notification to its handler a microtask later and drops the handler once the
      // response is read: every update read together with the response is lost (a busy test process reads them
      // all at once). Only their order is certain; McpClient's own tests check that every update arrives.
      if (mode.streams && name === "test_tool_with_progress") {
        assert.deepStrictEqual(progress, [0, 50, 100].slice(0, progress.length))
      }
      if (mode.streams && name === "test_long_running") {
        assert.isTrue(
          progress.every((p, i) => p <= 250 && (i === 0 || p > progress[i - 1]!)),
          `progress must increase up to durationMs: ${progress}`
        )
      }
    }
  })

/** The trigger tools change the lists, and the lists say so. */
export const listChanges = (sdk: SdkClient) =>
  Effect.gen(function* () {
    const toolNames = () =>
      Effect.promise(() => sdk.client.listTools()).pipe(Effect.map((r) => r.tools.map((t) => t.name)))
    const promptNames = () =>
      Effect.promise(() => sdk.client.listPrompts()).pipe(Effect.map((r) => r.prompts.map((p) => p.name)))
    const before = yield* toolNames()
    const toggled = yield* call(sdk, "test_trigger_tool_change")
    const after = yield* toolNames()
    assert.strictEqual(before.includes("test_dynamic_tool"), !after.includes("test_dynamic_tool"), textOf(toggled))
    const promptsBefore = yield* promptNames()
    yield* call(sdk, "test_trigger_prompt_change")
    const promptsAfter = yield* promptNames()
    assert.strictEqual(promptsBefore.includes("test_dynamic_prompt"), !promptsAfter.includes("test_dynamic_prompt"))
  })

/** Lists, reads, subscribes to and completes the resources. */
export const resources = (sdk: SdkClient, mode: Mode) =>
  Effect.gen(function* () {
    const listed = yield* Effect.promise(() => sdk.client.listResources())
    // The test:// fixtures, and each fixture skill's SKILL.md (its other files are not listed: docs/skills.md).
    const skillFiles = listed.resources.map((r) => r.uri).filter((uri) => uri.startsWith("skill://"))
    assert.isAbove(skillFiles.length, 0)
    assert.isTrue(skillFiles.every((uri) => uri.endsWith("/SKILL.md")))
    assert.deepStrictEqual(
      listed.resources
        .map((r) => r.uri)
        .filter((uri) => !uri.startsWith("skill://"))
        .sort(),
      ["test://static-binary", "test://static-text", "test://watched-resource"]
    )
    const read = (uri: string) => Effect.promise(() => sdk.client.readResource({ uri }))
    const text = yield* read("test://static-text")
    assert.deepStrictEqual(text.contents, [
      { uri: "test://static-text", mimeType: "text/plain", text: "This is the content of the static text resource." }
    ])
    const binary = yield* read("test://static-binary")
    assert.strictEqual((binary.contents[0] as Json).mimeType, "image/png")
    assert.strictEqual(
      Buffer.from((binary.contents[0] as Json).blob, "base64")
        .subarray(1, 4)
        .toString(),
      "PNG"
    )
    const templates = yield* Effect.promise(() => sdk.client.listResourceTemplates())
    assert.deepStrictEqual(
      templates.resourceTemplates.map((t) => t.uriTemplate),
      ["test://template/{id}/data"]
    )
    const fromTemplate = yield* read("test://template/42/data")
    assert.deepStrictEqual(JSON.parse((fromTemplate.contents[0] as Json).text), {
      id: "42",
      templateTest: true,
      data: "Data for ID: 42"
    })
    // Where nothing reaches the client outside a request (stateless HTTP: no server-to-client requests), no
    // `notifications/resources/updated` can either: no `subscribe` is declared, and a subscription is refused.
    const subscribes = (sdk.client.getServerCapabilities()?.resources as Json | undefined)?.subscribe === true
    assert.strictEqual(subscribes, mode.asks)
    if (subscribes) {
      yield* Effect.promise(() => sdk.client.subscribeResource({ uri: "test://watched-resource" }))
      yield* Effect.promise(() => sdk.client.unsubscribeResource({ uri: "test://watched-resource" }))
    } else {
      const refused = yield* Effect.promise(() =>
        sdk.client.subscribeResource({ uri: "test://watched-resource" }).then(
          () => undefined,
          (error: { readonly code?: unknown }) => error.code
        )
      )
      assert.strictEqual(refused, -32601)
    }
    const completion = yield* Effect.promise(() =>
      sdk.client.complete({
        ref: { type: "ref/resource", uri: "test://template/{id}/data" },
        argument: { name: "id", value: "12" }
      })
    )
    assert.deepStrictEqual(completion.completion.values, ["123"])
  })

/** Lists and gets the prompts, and completes `arg1`. */
export const prompts = (sdk: SdkClient, mode: Mode) =>
  Effect.gen(function* () {
    const listed = yield* Effect.promise(() => sdk.client.listPrompts())
    assert.deepStrictEqual(listed.prompts.map((p) => p.name).sort(), [
      "test_input_required_result_prompt",
      "test_prompt_with_arguments",
      "test_prompt_with_embedded_resource",
      "test_prompt_with_image",
      "test_simple_prompt"
    ])
    for (const prompt of listed.prompts) assert.isString(prompt.description, prompt.name)
    const get = (name: string, args?: Record<string, string>) =>
      Effect.promise(() => sdk.client.getPrompt({ name, ...(args === undefined ? {} : { arguments: args }) }))
    const simple = yield* get("test_simple_prompt")
    assert.deepStrictEqual(simple.messages, [
      { role: "user", content: { type: "text", text: "This is a simple prompt for testing." } }
    ])
    const withArgs = yield* get("test_prompt_with_arguments", { arg1: "hello", arg2: "world" })
    assert.strictEqual(
      (withArgs.messages[0]!.content as Json).text,
      "Prompt with arguments: arg1='hello', arg2='world'"
    )
    const embedded = yield* get("test_prompt_with_embedded_resource", { resourceUri: "test://static-text" })
    assert.deepStrictEqual(
      embedded.messages.map((m) => m.content.type),
      ["resource", "text"]
    )
    assert.strictEqual((embedded.messages[0]!.content as Json).resource.uri, "test://static-text")
    const image = yield* get("test_prompt_with_image")
    assert.deepStrictEqual(
      image.messages.map((m) => m.content.type),
      ["image", "text"]
    )
    const asked = yield* Effect.exit(get("test_input_required_result_prompt"))
    if (mode.asks) {
      assert.isTrue(Exit.isSuccess(asked))
      if (Exit.isSuccess(asked)) {
        assert.strictEqual((asked.value.messages[0]!.content as Json).text, "Use this context: Alice")
      }
    } else {
      assert.isTrue(Exit.isFailure(asked), "the prompt cannot ask without a session")
    }
    const completion = yield* Effect.promise(() =>
      sdk.client.complete({
        ref: { type: "ref/prompt", name: "test_prompt_with_arguments" },
        argument: { name: "arg1", value: "pa" }
      })
    )
    assert.deepStrictEqual(completion.completion.values, ["paris", "park", "party"])
  })

/**
 * Starts `test_long_running`, cancels it once the server reports it started
 * (`started <id>` on stderr), and waits for the server's finalizer to write
 * `cancelled <id>`. Cancelling by disconnecting closes the client.
 */
export const cancelLongRunning = (
  sdk: SdkClient,
  mode: Mode,
  waitForStderr: (pattern: RegExp) => Effect.Effect<RegExpMatchArray, unknown>
) =>
  Effect.gen(function* () {
    const abort = new AbortController()
    const outcome = Effect.promise(() =>
      sdk.client
        .callTool({ name: "test_long_running", arguments: { durationMs: 60_000 } }, undefined, {
          signal: abort.signal,
          timeout: 90_000
        })
        .then(
          () => "completed" as const,
          () => "rejected" as const
        )
    )
    const running = yield* Effect.forkChild(outcome)
    const started = yield* waitForStderr(/^started (\S+)$/m)
    const id = callId(sdk, "test_long_running")
    assert.strictEqual(started[1], String(id))
    if (mode.cancelBy === "notification") abort.abort("cancelled by the test")
    // Closing the SDK's HTTP transport aborts its requests in flight.
    else yield* Effect.promise(() => sdk.client.close())
    const match = yield* waitForStderr(new RegExp(`^cancelled ${String(id)}$`, "m"))
    assert.strictEqual(match[0], `cancelled ${String(id)}`)
    assert.strictEqual(yield* Fiber.join(running), "rejected")
  })

/**
 * A whole session against the everything server: its name, then every tool, the list changes, every resource and
 * every prompt (the session each transport and runtime runs).
 */
export const everything = (sdk: SdkClient, mode: Mode) =>
  Effect.gen(function* () {
    assert.strictEqual(sdk.client.getServerVersion()?.name, "effect-mcp-everything-server")
    yield* tools(sdk, mode)
    yield* listChanges(sdk)
    yield* resources(sdk, mode)
    yield* prompts(sdk, mode)
  })
