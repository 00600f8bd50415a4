/**
 * MCP Apps across a host: the catalog's app tools and their UI fetched from
 * the tool's own server (two servers offer the same `ui://` URI with
 * different documents), and an app-only tool kept from the model
 * (`McpHost.tools`, the AiToolkit) while the app can still call it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ClientApps from "@effect-mcp/client/Apps"
import * as App from "@effect-mcp/server/App"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Resource from "@effect-mcp/server/Resource"
import * as Tool from "@effect-mcp/server/Tool"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as AiToolkit from "../src/AiToolkit.ts"
import * as HostApps from "../src/Apps.ts"
import * as McpHost from "../src/McpHost.ts"
import { clientInfo, configOf, memory, textOf } from "./fixtures.ts"

const appServer = (name: string) => {
  const view = App.resource({ uri: "ui://view", name: "view", html: `<p>${name}</p>` })
  return Layer.mergeAll(
    Resource.layer(view),
    Tool.layer(
      App.tool("show", { ui: view, input: Schema.Struct({}), handler: () => Effect.succeed(`${name} shown`) }),
      App.tool("refresh", {
        ui: view,
        visibility: ["app"],
        input: Schema.Struct({}),
        handler: () => Effect.succeed(`${name} refreshed`)
      })
    )
  ).pipe(Layer.provideMerge(McpServer.layer({ name, version: "1.0.0" })))
}

const withHost = <A, E>(effect: Effect.Effect<A, E, McpHost.McpHost>) =>
  Effect.gen(function* () {
    const servers = yield* memory({ a: appServer("a"), b: appServer("b") })
    const host = McpHost.layer({
      clientInfo,
      config: configOf("a", "b"),
      client: { capabilities: ClientApps.capabilities }
    }).pipe(Layer.provide(servers.connector))
    return yield* Effect.gen(function* () {
      const h = yield* McpHost.McpHost
      yield* Effect.all([h.awaitReady("a"), h.awaitReady("b")])
      return yield* effect
    }).pipe(Effect.provide(host))
  })

describe("host Apps", () => {
  it.effect("app tools, each UI from its own server; app-only tools hidden from the model but callable", () =>
    withHost(
      Effect.gen(function* () {
        const host = yield* McpHost.McpHost
        const apps = yield* HostApps.tools(host)
        assert.deepStrictEqual(
          apps.map((a) => [a.name, a.server, a.resourceUri]),
          [
            ["a__refresh", "a", "ui://view"],
            ["a__show", "a", "ui://view"],
            ["b__refresh", "b", "ui://view"],
            ["b__show", "b", "ui://view"]
          ]
        )
        assert.strictEqual((yield* HostApps.forTool(host, "a__show")).html, "<p>a</p>")
        assert.strictEqual((yield* HostApps.forTool(host, "b__show")).html, "<p>b</p>")
        const unknown = yield* Effect.flip(HostApps.forTool(host, "c__show"))
        assert.strictEqual(unknown._tag === "HostError" && unknown.reason, "UnknownTool")

        assert.deepStrictEqual(
          (yield* host.tools).map((t) => t.name),
          ["a__show", "b__show"]
        )
        const snapshot = yield* AiToolkit.snapshot()
        assert.deepStrictEqual(Object.keys(snapshot.toolkit.tools).sort(), ["a__show", "b__show"])
        assert.strictEqual(textOf(yield* host.callTool("a__refresh", {})), "a refreshed")
      })
    )
  )
})
