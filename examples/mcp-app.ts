/**
 * An MCP App (SEP-1865): a weather server whose `forecast` tool renders with
 * an interactive dashboard, a `ui://` HTML resource served as
 * `text/html;profile=mcp-app` with its Content Security Policy, and an
 * app-only `refresh_forecast` tool the dashboard calls. An McpHost (whose
 * clients declare that they render apps) finds the app tools in its catalog,
 * fetches the dashboard from the tool's server, and checks the tool and
 * resource metadata against the JSON Schema of `@modelcontextprotocol/ext-apps`.
 *
 *   node --conditions=@effect-mcp/source examples/mcp-app.ts           # host + checks
 *   node --conditions=@effect-mcp/source examples/mcp-app.ts --stdio   # the server alone, over stdio
 *
 * Checks every answer and exits non-zero if one differs.
 */
import * as assert from "node:assert/strict"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import * as ClientApps from "@effect-mcp/client/Apps"
import * as HostApps from "@effect-mcp/host/Apps"
import * as McpConfig from "@effect-mcp/host/McpConfig"
import * as McpHost from "@effect-mcp/host/McpHost"
import * as NodeConnector from "@effect-mcp/host/NodeConnector"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as App from "@effect-mcp/server/App"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Resource from "@effect-mcp/server/Resource"
import * as Tool from "@effect-mcp/server/Tool"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY } from "@modelcontextprotocol/ext-apps/app-bridge"
import { Ajv2020 } from "ajv/dist/2020.js"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

// --- The server -----------------------------------------------------------------------------------------------------

const dashboardHtml = `<!doctype html>
<html>
  <body>
    <h1>Forecast</h1>
    <div id="days"></div>
    <script type="module">/* the app bridge renders the tool result here */</script>
  </body>
</html>
`

/** The dashboard: fetches from the weather API only (CSP), drawn with a border. */
const Dashboard = App.resource({
  uri: "ui://weather/dashboard",
  name: "weather-dashboard",
  description: "The week's forecast as an interactive dashboard",
  html: dashboardHtml,
  csp: { connectDomains: ["https://api.weather.example"] },
  prefersBorder: true
})

const City = Schema.Struct({ city: Schema.String })

/** Renders with the dashboard; says what a host that renders no apps gets instead. */
const forecast = App.tool("forecast", {
  ui: Dashboard,
  description: "The week's forecast for a city",
  input: City,
  handler: ({ city }) =>
    Effect.map(App.rendersApps, (apps) =>
      apps ? `Sunny all week in ${city} (see the dashboard)` : `Sunny all week in ${city}`
    )
})

/** Called by the dashboard only: hidden from the model. */
const refresh = App.tool("refresh_forecast", {
  ui: Dashboard,
  visibility: ["app"],
  description: "Fetches the forecast again",
  input: City,
  handler: ({ city }) => Effect.succeed(`Refreshed ${city}`)
})

const Server = Layer.mergeAll(Resource.layer(Dashboard), Tool.layer(forecast, refresh)).pipe(
  Layer.provideMerge(McpServer.layer({ name: "weather", version: "1.0.0" }))
)

// --- The host -------------------------------------------------------------------------------------------------------

const spawnArgs = [...process.execArgv, fileURLToPath(import.meta.url), "--stdio"]

// The ext-apps JSON Schema: the tool's and the resource's `_meta.ui` must validate against it.
const schema = createRequire(import.meta.url)("@modelcontextprotocol/ext-apps/schema.json") as { $id: string }
const ajv = new Ajv2020({ strict: false })
ajv.addSchema(schema)
const validator = (definition: string) => {
  const validate = ajv.getSchema(`${schema.$id}#/$defs/${definition}`)
  assert.ok(validate, definition)
  return (value: unknown) => assert.ok(validate(value), `${definition}: ${ajv.errorsText(validate.errors)}`)
}
const checkToolMeta = validator("McpUiToolMeta")
const checkResourceMeta = validator("McpUiResourceMeta")

const program = Effect.gen(function* () {
  const host = yield* McpHost.McpHost
  yield* host.awaitReady("weather")

  // The catalog's app tools, with their UI resource (only a model-visible one is shown to the model).
  const appTools = yield* HostApps.tools(host)
  for (const app of appTools) {
    checkToolMeta((app.tool._meta as { readonly ui: unknown }).ui)
    assert.equal((app.tool._meta as Record<string, unknown>)[RESOURCE_URI_META_KEY], app.resourceUri)
  }
  const shown = appTools.filter((app) => ClientApps.visibleToModel(app.tool)).map((app) => app.name)
  yield* Console.log(`app tools: ${appTools.map((app) => `${app.name} -> ${app.resourceUri}`).join(", ")}`)
  yield* Console.log(`shown to the model: ${shown.join(", ")}`)
  assert.deepEqual(shown, ["weather__forecast"])

  // The dashboard, fetched from the tool's server and checked.
  const ui = yield* HostApps.forTool(host, "weather__forecast")
  assert.equal(ui.mimeType, RESOURCE_MIME_TYPE)
  assert.equal(ui.html, dashboardHtml)
  checkResourceMeta(ui._meta?.ui)
  yield* Console.log(`${ui.uri}: ${ui.mimeType}, ${ui.html.length} bytes, connect-src ${ui.ui?.csp?.connectDomains}`)

  // The tool itself, called through the host: the server saw a client that renders apps.
  const result = yield* host.callTool("weather__forecast", { city: "Lisbon" })
  const text = result.content.map((block) => (block.type === "text" ? block.text : "")).join("")
  yield* Console.log(`forecast -> ${text}`)
  assert.equal(text, "Sunny all week in Lisbon (see the dashboard)")

  // A tool without a UI resource has none to fetch.
  const none = yield* Effect.flip(HostApps.forTool(host, "weather__nope"))
  assert.equal(none._tag, "HostError")
  yield* Console.log("ok: mcp-app")
})

const config = McpConfig.parse(
  JSON.stringify({ mcpServers: { weather: { command: process.execPath, args: spawnArgs } } })
)

const Host = Layer.unwrap(
  Effect.map(config, (config) =>
    McpHost.layer({
      clientInfo: { name: "app-host", version: "1.0.0" },
      config,
      // The host renders apps: every client says so in its capabilities.
      client: { capabilities: ClientApps.capabilities }
    })
  )
).pipe(Layer.provide(NodeConnector.layer()))

NodeRuntime.runMain(
  process.argv.includes("--stdio") ? NodeMcpServer.serveStdio(Server) : program.pipe(Effect.provide(Host))
)
