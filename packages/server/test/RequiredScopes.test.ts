/**
 * The scopes items declare (`scopes` on a tool, resource, template or
 * prompt), as a protected HTTP server reads them before dispatch
 * (`McpServer.requiredScopesOf`).
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Prompt from "@effect-mcp/server/Prompt"
import * as Resource from "@effect-mcp/server/Resource"
import * as ResourceTemplate from "@effect-mcp/server/ResourceTemplate"
import * as Tool from "@effect-mcp/server/Tool"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

const Read = Tool.make("read_file", {
  input: Schema.Struct({ path: Schema.String }),
  scopes: ["files:read"],
  handler: ({ path }) => Effect.succeed(path)
})
const Open = Tool.make("open", { input: Schema.Struct({}), handler: () => Effect.succeed("ok") })
const Secret = Resource.make({
  uri: "file:///secret",
  name: "secret",
  scopes: ["files:read", "secrets"],
  read: Effect.succeed("s")
})
const Files = ResourceTemplate.make({
  uriTemplate: "file:///{name}",
  name: "files",
  scopes: ["files:read"],
  read: ({ name }) => Effect.succeed(String(name))
})
const Review = Prompt.make({ name: "review", scopes: ["prompts"], handler: () => Effect.succeed("review") })

const Server = Layer.mergeAll(
  Tool.layer(Read, Open),
  Resource.layer(Secret),
  ResourceTemplate.layer(Files),
  Prompt.layer(Review)
).pipe(Layer.provideMerge(McpServer.layer({ name: "scoped", version: "1.0.0" })))

describe("McpServer.requiredScopesOf", () => {
  it.effect("reads each item's scopes, a template's for the URIs it matches, none for the rest", () =>
    Effect.gen(function* () {
      const scopes = McpServer.requiredScopesOf(yield* McpServer.McpServer)
      assert.deepStrictEqual(scopes("tools/call", "read_file"), ["files:read"])
      assert.isUndefined(scopes("tools/call", "open"))
      assert.isUndefined(scopes("tools/call", "unknown"))
      assert.deepStrictEqual(scopes("resources/read", "file:///secret"), ["files:read", "secrets"])
      assert.deepStrictEqual(scopes("resources/subscribe", "file:///notes"), ["files:read"])
      assert.isUndefined(scopes("resources/read", "http://elsewhere/"))
      assert.deepStrictEqual(scopes("prompts/get", "review"), ["prompts"])
      assert.isUndefined(scopes("tools/list", "read_file"))
      // Scopes are the server's business, not the client's: the advertised definitions do not carry them.
      assert.notProperty(Read.definition, "scopes")
      assert.notProperty(Secret.definition, "scopes")
    }).pipe(Effect.provide(Server))
  )
})
