/**
 * MCP Apps (SEP-1865) over the in-memory harness, on every revision: a UI
 * resource is listed and read as `text/html;profile=mcp-app` with its
 * `_meta.ui`, an app tool names it in `_meta.ui.resourceUri` and the flat
 * legacy key, and both validate against the JSON Schema and constants of
 * `@modelcontextprotocol/ext-apps`; the client finds and fetches a tool's
 * UI; a handler learns whether its client renders apps.
 */
import { createRequire } from "node:module"
import { assert, describe, it } from "@effect/vitest"
import * as ClientApps from "@effect-mcp/client/Apps"
import * as Apps from "@effect-mcp/protocol/Apps"
import * as App from "@effect-mcp/server/App"
import * as Resource from "@effect-mcp/server/Resource"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY } from "@modelcontextprotocol/ext-apps/app-bridge"
import { EXTENSION_ID } from "@modelcontextprotocol/ext-apps/server"
import { Ajv2020 } from "ajv/dist/2020.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { revisions, testServer } from "./fixtures.ts"

const schema = createRequire(import.meta.url)("@modelcontextprotocol/ext-apps/schema.json") as { $id: string }
const ajv = new Ajv2020({ strict: false })
ajv.addSchema(schema)
const valid = (definition: string, value: unknown): boolean => {
  const validate = ajv.getSchema(`${schema.$id}#/$defs/${definition}`)!
  const ok = validate(value) as boolean
  if (!ok) console.log(definition, ajv.errorsText(validate.errors))
  return ok
}

const html = "<!doctype html><html><body>chart</body></html>"
const Chart = App.resource({
  uri: "ui://charts/bar",
  name: "bar-chart",
  html: Effect.succeed(html),
  csp: { connectDomains: ["https://data.example"], resourceDomains: ["https://cdn.example"] },
  permissions: { clipboardWrite: {} },
  prefersBorder: false
})
const chart = App.tool("chart", {
  ui: Chart,
  visibility: ["model", "app"],
  input: Schema.Struct({}),
  handler: () => Effect.map(App.rendersApps, (apps) => (apps ? "rendered" : "text only"))
})
const plain = Tool.make("plain", { input: Schema.Struct({}), handler: () => Effect.succeed("ok") })
const features = Layer.mergeAll(Resource.layer(Chart), Tool.layer(chart, plain))

describe("MCP Apps", () => {
  it("the constants are ext-apps'", () => {
    assert.strictEqual(Apps.mimeType, RESOURCE_MIME_TYPE)
    assert.strictEqual(Apps.resourceUriMetaKey, RESOURCE_URI_META_KEY)
    assert.strictEqual(Apps.extensionId, EXTENSION_ID)
    assert.isTrue(valid("McpUiClientCapabilities", Apps.clientCapabilities.extensions[Apps.extensionId]))
  })

  for (const version of revisions) {
    it.effect(`${version}: the tool names its UI, the host fetches it, both match the ext-apps schema`, () =>
      Effect.gen(function* () {
        const { client } = yield* McpTest.connect(testServer(features), {
          revision: version,
          client: { capabilities: ClientApps.capabilities }
        })
        const tools = yield* Stream.runCollect(client.tools)
        const tool = tools.find((t) => t.name === "chart")!
        const meta = tool._meta as { readonly [key: string]: unknown } | undefined
        // `_meta` on tools exists from 2025-06-18: earlier revisions carry no UI link.
        if (meta === undefined) {
          assert.isTrue(version < "2025-06-18")
          return
        }
        assert.isTrue(valid("McpUiToolMeta", meta.ui))
        assert.strictEqual(meta[RESOURCE_URI_META_KEY], "ui://charts/bar")
        assert.strictEqual(ClientApps.resourceUriOf(tool), "ui://charts/bar")
        assert.isTrue(ClientApps.visibleToModel(tool))
        assert.isUndefined(ClientApps.resourceUriOf(tools.find((t) => t.name === "plain")!))

        const ui = yield* ClientApps.forTool(client, tool)
        assert.strictEqual(ui.html, html)
        assert.strictEqual(ui.mimeType, RESOURCE_MIME_TYPE)
        assert.isTrue(valid("McpUiResourceMeta", ui._meta?.ui))
        assert.deepStrictEqual(ui.ui?.csp?.connectDomains, ["https://data.example"])
        const listed = (yield* Stream.runCollect(client.resources)).find((r) => r.uri === "ui://charts/bar")
        assert.strictEqual(listed?.mimeType, RESOURCE_MIME_TYPE)
        assert.isTrue(valid("McpUiResourceMeta", (listed!._meta as { readonly ui?: unknown }).ui))

        const noUi = yield* Effect.flip(ClientApps.forTool(client, tools.find((t) => t.name === "plain")!))
        assert.strictEqual(noUi._tag === "AppError" && noUi.reason, "NoUi")
        // The client declares the extension under `extensions` on every revision, and the server sees it.
        const called = yield* client.callTool("chart", {})
        assert.deepStrictEqual(called.content, [{ type: "text", text: "rendered" }])
      })
    )
  }

  it.effect("a client that does not declare the extension is answered as such", () =>
    Effect.gen(function* () {
      const { client } = yield* McpTest.connect(testServer(features))
      const called = yield* client.callTool("chart", {})
      assert.deepStrictEqual(called.content, [{ type: "text", text: "text only" }])
    })
  )

  it.effect("a resource that is not an MCP App is refused", () =>
    Effect.gen(function* () {
      const other = Resource.make({
        uri: "ui://other",
        name: "other",
        mimeType: "text/html",
        read: Effect.succeed("x")
      })
      const { client } = yield* McpTest.connect(testServer(Resource.layer(other)))
      const refused = yield* Effect.flip(ClientApps.read(client, "ui://other"))
      assert.strictEqual(refused._tag === "AppError" && refused.reason, "NotAnApp")
      assert.throws(() => App.resource({ uri: "https://x", name: "x", html: "" }))
    })
  )
})
