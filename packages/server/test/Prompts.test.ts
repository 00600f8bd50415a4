import { assert, describe, it } from "@effect/vitest"
import * as Features from "@effect-mcp/protocol/Features"
import * as Prompt from "@effect-mcp/server/Prompt"
import * as Effect from "effect/Effect"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { type Obj, revisions, testServer } from "./fixtures.ts"

const greet = Prompt.make({
  name: "greet",
  title: "Greeting",
  description: "Greets someone",
  arguments: {
    name: {
      description: "Who",
      required: true,
      complete: (value) => Effect.succeed(["Ada", "Alan", "Grace"].filter((n) => n.startsWith(value)))
    },
    style: {
      title: "Style",
      complete: (value, context) =>
        Effect.succeed(
          (context.arguments.name === "Ada" ? ["formal", "friendly"] : ["casual"]).filter((s) => s.startsWith(value))
        )
    }
  },
  handler: ({ name, style }) => Effect.succeed(`Hello ${name}${style === undefined ? "" : ` (${style})`}`)
})

const rich = Prompt.make({
  name: "rich",
  handler: () =>
    Effect.succeed([
      { role: "user" as const, content: { type: "text" as const, text: "look" } },
      { role: "user" as const, content: { type: "image" as const, data: "aW1n", mimeType: "image/png" } },
      { role: "assistant" as const, content: { type: "audio" as const, data: "YXVk", mimeType: "audio/wav" } },
      { role: "user" as const, content: { type: "resource_link" as const, uri: "test://x", name: "x" } },
      { role: "user" as const, content: { type: "resource" as const, resource: { uri: "test://y", text: "y" } } }
    ])
})

const many = Array.from({ length: 150 }, (_, i) => `v${String(i).padStart(3, "0")}`)
const wide = Prompt.make({
  name: "wide",
  arguments: { pick: { complete: () => Effect.succeed(many) } },
  handler: () => Effect.succeed("wide")
})

const features = Prompt.layer(greet, rich, wide)

describe("prompts on every revision", () => {
  for (const version of revisions) {
    it.effect(`${version}: list, get, argument validation and content of every kind`, () =>
      Effect.gen(function* () {
        const { request, session: client } = yield* McpTest.connectRaw(testServer(features), { revision: version })
        assert.deepStrictEqual((client.state.peerCapabilities as Obj).prompts, { listChanged: true })
        const listed = (yield* request("prompts/list")) as Obj
        assert.deepStrictEqual(
          listed.prompts.map((p: Obj) => p.name),
          ["greet", "rich", "wide"]
        )
        const greetDef = listed.prompts[0]
        assert.strictEqual("title" in greetDef, Features.has(version, "title"))
        assert.deepStrictEqual(greetDef.arguments[0], { name: "name", description: "Who", required: true })
        assert.strictEqual("title" in greetDef.arguments[1], Features.has(version, "title"))
        const got = (yield* request("prompts/get", {
          name: "greet",
          arguments: { name: "Ada", style: "formal" }
        })) as Obj
        assert.strictEqual(got.description, "Greets someone")
        assert.deepStrictEqual(got.messages, [{ role: "user", content: { type: "text", text: "Hello Ada (formal)" } }])
        const missing = (yield* Effect.flip(request("prompts/get", { name: "greet", arguments: {} }))) as Obj
        assert.strictEqual(missing.code, -32602)
        assert.include(missing.message, "name")
        const unknown = (yield* Effect.flip(request("prompts/get", { name: "nope" }))) as Obj
        assert.strictEqual(unknown.code, -32602)
        const content = (yield* request("prompts/get", { name: "rich" })) as Obj
        assert.deepStrictEqual(
          content.messages.map((m: Obj) => m.content.type),
          [
            "text",
            "image",
            Features.has(version, "audioContent") ? "audio" : "text",
            Features.has(version, "resourceLinks") ? "resource_link" : "text",
            "resource"
          ]
        )
      })
    )

    it.effect(`${version}: completion of prompt arguments, with context where the revision has it`, () =>
      Effect.gen(function* () {
        const { request } = yield* McpTest.connectRaw(testServer(features), { revision: version })
        const names = (yield* request("completion/complete", {
          ref: { type: "ref/prompt", name: "greet" },
          argument: { name: "name", value: "A" }
        })) as Obj
        assert.deepStrictEqual(names.completion, { values: ["Ada", "Alan"], total: 2, hasMore: false })
        if (Features.has(version, "completionContext")) {
          const styles = (yield* request("completion/complete", {
            ref: { type: "ref/prompt", name: "greet" },
            argument: { name: "style", value: "f" },
            context: { arguments: { name: "Ada" } }
          })) as Obj
          assert.deepStrictEqual(styles.completion.values, ["formal", "friendly"])
        }
        const capped = (yield* request("completion/complete", {
          ref: { type: "ref/prompt", name: "wide" },
          argument: { name: "pick", value: "" }
        })) as Obj
        assert.strictEqual(capped.completion.values.length, 100)
        assert.strictEqual(capped.completion.total, 150)
        assert.isTrue(capped.completion.hasMore)
        const none = (yield* request("completion/complete", {
          ref: { type: "ref/prompt", name: "rich" },
          argument: { name: "x", value: "" }
        })) as Obj
        assert.deepStrictEqual(none.completion.values, [])
      })
    )
  }
})
