/**
 * Diagnostic tools the suite's 2026-07-28 scenarios probe: one that needs a
 * client capability, one that streams an input request, one that logs, hooks
 * that change the tool and prompt lists, and a tool whose argument is
 * mirrored into an `Mcp-Param-*` header (SEP-2243).
 */
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Prompt from "@effect-mcp/server/Prompt"
import * as Elicitation from "@effect-mcp/server/Elicitation"
import * as Sampling from "@effect-mcp/server/Sampling"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"

const noInput = Schema.Struct({})

export const missingCapability = Tool.make("test_missing_capability", {
  description: "Needs the client's sampling capability (2026-07-28: -32021 without it)",
  input: noInput,
  handler: () =>
    Sampling.createMessage({
      messages: [{ role: "user", content: { type: "text", text: "Say hello" } }],
      maxTokens: 20
    }).pipe(Effect.map((result) => `Sampled: ${Sampling.text(result)}`))
})

export const streamingElicitation = Tool.make("test_streaming_elicitation", {
  description: "Reports progress, then asks the user for input",
  input: noInput,
  handler: () =>
    Effect.gen(function* () {
      yield* ServerRequest.progress({ progress: 1, total: 2 })
      yield* ServerRequest.log("info", "Asking the user")
      const result = yield* Elicitation.request({
        message: "Please confirm",
        requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] }
      })
      return `Elicitation completed: action=${result.action}`
    })
})

export const logging = Tool.make("test_logging_tool", {
  description: "Logs three messages (sent only when the client asked for a log level)",
  input: noInput,
  handler: () =>
    Effect.gen(function* () {
      yield* ServerRequest.log("info", "Logging tool started")
      yield* ServerRequest.log("warning", "Logging tool warning")
      yield* ServerRequest.log("info", "Logging tool finished")
      return "Logged three messages"
    })
})

/** A tool whose `region` argument is mirrored into the `Mcp-Param-Region` header. */
export const customHeaders = Tool.make("test_custom_headers", {
  description: "Echoes an argument that travels in the Mcp-Param-Region header too (SEP-2243)",
  input: {
    type: "object",
    properties: {
      region: { type: "string", description: "A region name", "x-mcp-header": "Region" }
    },
    required: ["region"]
  },
  handler: (args) => Effect.succeed(`Region: ${String(args.region)}`)
})

const dynamicTool = Tool.make("test_dynamic_tool", {
  description: "Present while test_trigger_tool_change has toggled it on",
  input: noInput,
  handler: () => Effect.succeed("The dynamic tool is here")
})

const dynamicPrompt = Prompt.make({
  name: "test_dynamic_prompt",
  description: "Present while test_trigger_prompt_change has toggled it on",
  handler: () => Effect.succeed("The dynamic prompt is here")
})

/**
 * `test_trigger_tool_change` and `test_trigger_prompt_change`: each call adds
 * a tool (or prompt) if it is absent and removes it otherwise, so every call
 * changes the list and announces it.
 */
export const triggers: Layer.Layer<never, never, McpServer.McpServer> = Layer.effectDiscard(
  Effect.gen(function* () {
    const layerScope = yield* Effect.scope
    const server = yield* McpServer.McpServer
    const toggle = (register: Effect.Effect<void, never, McpServer.McpServer | Scope.Scope>) => {
      let present: Scope.Closeable | undefined
      return Effect.suspend(() => {
        const current = present
        if (current !== undefined) {
          present = undefined
          return Effect.as(Scope.close(current, Exit.void), "removed")
        }
        return Effect.gen(function* () {
          const scope = yield* Scope.fork(layerScope)
          present = scope
          yield* register.pipe(Scope.provide(scope), Effect.provideService(McpServer.McpServer, server))
          return "added"
        })
      })
    }
    const toggleTool = toggle(Tool.register(dynamicTool))
    const togglePrompt = toggle(Prompt.register(dynamicPrompt))
    yield* Tool.register(
      Tool.make("test_trigger_tool_change", {
        description: "Adds or removes test_dynamic_tool (changes the tool list)",
        input: noInput,
        handler: () => Effect.map(toggleTool, (what) => `test_dynamic_tool ${what}`)
      }),
      Tool.make("test_trigger_prompt_change", {
        description: "Adds or removes test_dynamic_prompt (changes the prompt list)",
        input: noInput,
        handler: () => Effect.map(togglePrompt, (what) => `test_dynamic_prompt ${what}`)
      }),
      Tool.make("test_trigger_resource_update", {
        description: "Announces an update of test://watched-resource to its subscribers",
        input: noInput,
        handler: () => Effect.as(server.resourceUpdated("test://watched-resource"), "test://watched-resource updated")
      })
    )
  })
)

export const tools = [missingCapability, streamingElicitation, logging, customHeaders] as const
