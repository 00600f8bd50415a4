/**
 * MCP Apps with the official SDK client (1.x, latest revision 2025-11-25) as
 * the host: it declares `io.modelcontextprotocol/ui` under
 * `capabilities.extensions` in `initialize`, as ext-apps tells hosts to, and a
 * tool handler asking `App.rendersApps` sees the declaration.
 */
import { assert, describe, it } from "@effect/vitest"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as App from "@effect-mcp/server/App"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Resource from "@effect-mcp/server/Resource"
import * as Tool from "@effect-mcp/server/Tool"
import { getUiCapability } from "@modelcontextprotocol/ext-apps/server"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { testServer } from "./fixtures.ts"
import * as SdkAdapter from "./sdkAdapter.ts"

const Chart = App.resource({ uri: "ui://charts/bar", name: "bar-chart", html: "<!doctype html><p>chart</p>" })
const chart = App.tool("chart", {
  ui: Chart,
  input: Schema.Struct({}),
  handler: () => Effect.map(App.rendersApps, (apps) => (apps ? "rendered" : "text only"))
})
const features = Layer.mergeAll(Resource.layer(Chart), Tool.layer(chart))

const ui = { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } }

const sdkHost = (version: ProtocolVersion.ProtocolVersion, capabilities: object) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(testServer(features, { supportedVersions: [version] }))
    const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: true })
    yield* McpServer.makeSession.pipe(
      Effect.provideService(Transport.Transport, serverEnd),
      Effect.provideContext(context)
    )
    const client = new Client({ name: "sdk-host", version: "1.0.0" }, { capabilities })
    const transport = yield* SdkAdapter.make(clientEnd)
    yield* Effect.promise(() => client.connect(transport))
    yield* Effect.addFinalizer(() => Effect.promise(() => client.close()))
    return client
  })

const call = (client: Client) =>
  Effect.promise(() => client.callTool({ name: "chart", arguments: {} })).pipe(Effect.map((r) => r.content))

describe("MCP Apps with the official SDK client as host", () => {
  // Every revision's ClientCapabilities is an open object (no additionalProperties: false), and
  // ext-apps has hosts declare the extension under `extensions` whatever the revision.
  for (const version of ["2025-11-25", "2025-06-18", "2024-11-05"] as const) {
    it.effect(`${version}: a host declaring io.modelcontextprotocol/ui renders apps`, () =>
      Effect.gen(function* () {
        const client = yield* sdkHost(version, { extensions: ui })
        assert.deepStrictEqual(yield* call(client), [{ type: "text", text: "rendered" }])
      })
    )
  }

  it.effect("2025-11-25: a host without the declaration does not", () =>
    Effect.gen(function* () {
      const client = yield* sdkHost("2025-11-25", {})
      assert.deepStrictEqual(yield* call(client), [{ type: "text", text: "text only" }])
    })
  )

  it("the declaration is the one ext-apps' getUiCapability reads", () => {
    assert.deepStrictEqual(getUiCapability({ extensions: ui }), ui["io.modelcontextprotocol/ui"])
  })
})
