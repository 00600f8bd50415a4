/**
 * What `Prompt.make` infers for a prompt's requirements (checked by the type-checker; the
 * assertions make the values used).
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Prompt from "@effect-mcp/server/Prompt"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

class Topics extends Context.Service<Topics, ReadonlyArray<string>>()("test/Topics") {}

describe("Prompt.make type inference", () => {
  it.effect("a prompt without completers whose handler needs nothing requires nothing", () =>
    Effect.sync(() => {
      const Review = Prompt.make({
        name: "review",
        arguments: { topic: { required: true }, level: {} },
        handler: ({ topic, level }) => Effect.succeed(`Review ${topic} at ${level ?? "any"} level`)
      })
      const prompt: Prompt.Prompt<never> = Review
      const layer: Layer.Layer<McpServer.McpServer> = Prompt.layer(Review).pipe(
        Layer.provideMerge(McpServer.layer({ name: "p", version: "1" }))
      )
      assert.strictEqual(prompt.name, "review")
      assert.isTrue(Layer.isLayer(layer))
    })
  )

  it.effect("the handler's services are the prompt's, and its completers may use them", () =>
    Effect.sync(() => {
      const Explain = Prompt.make({
        name: "explain",
        arguments: {
          topic: {
            required: true,
            complete: (value) =>
              Effect.gen(function* () {
                const all = yield* Topics
                return all.filter((t) => t.startsWith(value))
              })
          }
        },
        handler: ({ topic }) =>
          Effect.gen(function* () {
            const all = yield* Topics
            return `Explain ${topic} (one of ${all.length})`
          })
      })
      const prompt: Prompt.Prompt<Topics> = Explain
      // @ts-expect-error the prompt needs Topics
      const none: Prompt.Prompt<never> = Explain
      assert.strictEqual(prompt.name, none.name)
    })
  )
})
