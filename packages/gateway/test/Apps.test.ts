/**
 * MCP Apps through the gateway: an upstream tool asking `App.rendersApps`
 * learns whether the downstream client declared `io.modelcontextprotocol/ui`,
 * per call, when both sides are stateless (the declaration travels in each
 * request's client capabilities). On a stateful upstream connection the
 * upstream was told the gateway's own capabilities once, at `initialize`:
 * it answers for the gateway's client, which does not declare the extension.
 */
import * as ClientApps from "@effect-mcp/client/Apps"
import * as App from "@effect-mcp/server/App"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Resource from "@effect-mcp/server/Resource"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Gateway from "../src/Gateway.ts"
import { gatewayOver } from "./memoryConnector.ts"

const Chart = App.resource({ uri: "ui://charts/bar", name: "bar-chart", html: "<!doctype html><p>chart</p>" })
const upstream = Layer.mergeAll(
  Resource.layer(Chart),
  Tool.layer(
    App.tool("chart", {
      ui: Chart,
      input: Schema.Struct({}),
      handler: () => Effect.map(App.rendersApps, (apps) => (apps ? "rendered" : "text only"))
    })
  )
).pipe(Layer.provideMerge(McpServer.layer({ name: "up", version: "1.0.0" })))

const gatewayOn = (options: Partial<Gateway.Options> = {}) => gatewayOver(upstream, options)

const chart = (capabilities: { readonly [key: string]: unknown }, options: Partial<Gateway.Options> = {}) =>
  Effect.gen(function* () {
    const context = yield* gatewayOn(options)
    const client = yield* McpTest.makeRawClient({ revision: "2026-07-28", capabilities }).pipe(
      Effect.provideContext(context)
    )
    const result = (yield* client.request("tools/call", { name: "chart", arguments: {} })) as {
      readonly content: ReadonlyArray<{ readonly text?: string }>
    }
    return result.content[0]?.text
  })

describe("Gateway: MCP Apps", () => {
  it.effect("a stateless client declaring the UI extension: the stateless upstream's tool renders", () =>
    Effect.gen(function* () {
      assert.strictEqual(yield* chart(ClientApps.capabilities), "rendered")
    })
  )

  it.effect("a stateless client without it: the upstream's tool answers text", () =>
    Effect.gen(function* () {
      assert.strictEqual(yield* chart({}), "text only")
    })
  )

  it.effect("a stateful upstream connection answers for the gateway's own client", () =>
    Effect.gen(function* () {
      assert.strictEqual(
        yield* chart(ClientApps.capabilities, { client: { supportedVersions: ["2025-11-25"] } }),
        "text only"
      )
    })
  )
})
