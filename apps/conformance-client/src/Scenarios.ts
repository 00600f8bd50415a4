/**
 * What the client does for each non-auth client scenario of the official
 * conformance suite (0.1.16 and 0.2.0-alpha.12). The suite's mock server
 * judges the wire; each program only has to drive the client through the
 * flow the scenario observes.
 */
import * as McpClient from "@effect-mcp/client/McpClient"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Stream from "effect/Stream"
import * as SkillScenarios from "./SkillScenarios.ts"

/** What the harness hands the client besides the URL (`MCP_CONFORMANCE_CONTEXT`). */
export interface ScenarioInput {
  readonly context: unknown
}

export class ScenarioError extends Data.TaggedError("ScenarioError")<{ readonly message: string }> {}

export type Scenario = (input: ScenarioInput) => Effect.Effect<void, unknown, McpClient.McpClient>

/** Every tool over all pages (the client leaves out those whose header annotations are invalid). */
const allTools = Effect.flatMap(Effect.service(McpClient.McpClient), (client) => Stream.runCollect(client.tools))

const findTool = (tools: ReadonlyArray<Tools.Tool>, name: string) => {
  const tool = tools.find((t) => t.name === name)
  return tool === undefined
    ? Effect.fail(new ScenarioError({ message: `the server lists no tool named ${name}` }))
    : Effect.succeed(tool)
}

const call = (name: string, args?: { readonly [key: string]: unknown }) =>
  Effect.flatMap(Effect.service(McpClient.McpClient), (client) => client.callTool(name, args))

/** Connecting is the whole scenario; listing the tools (when the server has any) shows the session works. */
const connectAndList: Scenario = () =>
  Effect.gen(function* () {
    const client = yield* McpClient.McpClient
    if (client.serverCapabilities.tools !== undefined) yield* allTools
  })

const toolsCall: Scenario = () =>
  Effect.gen(function* () {
    yield* findTool(yield* allTools, "add_numbers")
    const result = yield* call("add_numbers", { a: 5, b: 3 })
    yield* Effect.logDebug(result)
  })

/** Calls every listed tool with no arguments (the flows live on the server side). */
const callEveryTool: Scenario = () =>
  Effect.gen(function* () {
    for (const tool of yield* allTools) yield* call(tool.name, {})
  })

const sep2322: Scenario = () =>
  Effect.gen(function* () {
    const tools = yield* allTools
    // The unrelated call sits between the two input-required flows on purpose.
    for (const name of [
      "test_mrtr_echo_state",
      "test_mrtr_unrelated",
      "test_mrtr_no_state",
      "test_mrtr_no_result_type"
    ]) {
      yield* findTool(tools, name)
      yield* call(name, {})
    }
  })

const standardHeaders: Scenario = () =>
  Effect.gen(function* () {
    const client = yield* McpClient.McpClient
    for (const tool of yield* allTools) yield* client.callTool(tool.name, {})
    for (const resource of yield* Stream.runCollect(client.resources)) yield* client.readResource(resource.uri)
    for (const prompt of yield* Stream.runCollect(client.prompts)) yield* client.getPrompt(prompt.name, {})
  })

/** The calls the harness lists in the context (`toolCalls`), after listing the tools. */
const contextToolCalls: Scenario = ({ context }) =>
  Effect.gen(function* () {
    const tools = yield* allTools
    const calls = Predicate.isObject(context) && Array.isArray(context.toolCalls) ? context.toolCalls : []
    for (const entry of calls as ReadonlyArray<unknown>) {
      if (!Predicate.isObject(entry) || typeof entry.name !== "string") continue
      yield* findTool(tools, entry.name)
      yield* call(entry.name, Predicate.isObject(entry.arguments) ? entry.arguments : {})
    }
  })

const schemaPreservation: Scenario = () =>
  Effect.gen(function* () {
    const tool = yield* findTool(yield* allTools, "json_schema_2020_12_tool")
    yield* call("json_schema_echo", { schema: tool.inputSchema })
  })

/**
 * Every authorization scenario (the client logs in through its HTTP client):
 * list the tools and call each, so that the server sees requests needing
 * different scopes (step-up) and more than one authenticated request (a
 * migrated authorization server refuses the second token).
 */
export const authorized: Scenario = () =>
  Effect.gen(function* () {
    const client = yield* McpClient.McpClient
    if (client.serverCapabilities.tools === undefined) return
    for (const tool of yield* allTools) yield* call(tool.name, {})
  })

/** What the client does for a scenario it has no program for. */
export const generic: Scenario = connectAndList

/** Scenario name -> what the client does. */
export const scenarios: ReadonlyMap<string, Scenario> = new Map<string, Scenario>([
  ["initialize", connectAndList],
  ["tools_call", toolsCall],
  ["elicitation-sep1034-client-defaults", callEveryTool],
  ["sse-retry", callEveryTool],
  ["request-metadata", connectAndList],
  ["sep-2322-client-request-state", sep2322],
  ["http-standard-headers", standardHeaders],
  ["http-custom-headers", contextToolCalls],
  ["http-invalid-tool-headers", callEveryTool],
  ["json-schema-ref-no-deref", connectAndList],
  ["json-schema-2020-12-preservation", schemaPreservation],
  ...SkillScenarios.scenarios
])
