/**
 * The everything server: every feature of `@effect-mcp/server` behind the
 * names the official conformance suite expects (tools, resources, a
 * template, prompts, completion, logging, progress, sampling, elicitation,
 * roots, list changes, SSE resumption, 2026-07-28 input requests), plus
 * `test_long_running` for cancellation tests.
 *
 * Transport-free: `layer` provides `McpServer` with everything registered;
 * serve it with `McpServer.serve` over any transport (see `main.ts` for
 * stdio and HTTP, or an in-memory pair in tests).
 */
// The package's own manifest, by the package's name (its `exports` has `./package.json`): the same file from the
// sources, from `dist/` and from the bin's bundle (which inlines the version), and the version `changeset version`
// wrote.
import packageJson from "@effect-mcp/everything-server/package.json" with { type: "json" }
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Prompt from "@effect-mcp/server/Prompt"
import * as Resource from "@effect-mcp/server/Resource"
import * as ResourceTemplate from "@effect-mcp/server/ResourceTemplate"
import * as Tool from "@effect-mcp/server/Tool"
import * as Layer from "effect/Layer"
import * as Diagnostics from "./internal/diagnostics.ts"
import * as InputRequired from "./internal/inputRequired.ts"
import * as Prompts from "./internal/prompts.ts"
import * as Resources from "./internal/resources.ts"
import * as Skills from "./internal/skills.ts"
import * as Tasks from "./internal/tasks.ts"
import * as Tools from "./internal/tools.ts"

export const name = "effect-mcp-everything-server"
/** The server's version (its `serverInfo.version`): the one in the package's package.json. */
export const version: string = packageJson.version

/** The server's options (name, version, instructions); `layer` takes overrides. */
export const options: McpServer.Options = {
  name,
  version,
  title: "effect-mcp everything server",
  description: "Every feature of effect-mcp, as the official conformance suite expects it",
  instructions: "A test server: every tool, resource and prompt is a fixture of the MCP conformance suite."
}

/** Every tool, resource, template and prompt, registered on the `McpServer` it is given. */
export const features: Layer.Layer<never, never, McpServer.McpServer> = Layer.mergeAll(
  Tool.layer(...Tools.all),
  Tool.layer(...InputRequired.tools),
  Tool.layer(...Diagnostics.tools),
  Tool.layer(...Tasks.tools),
  Diagnostics.triggers,
  Resource.layer(...Resources.resources),
  ResourceTemplate.layer(...Resources.templates),
  Prompt.layer(...Prompts.all, InputRequired.prompt),
  Skills.layer
)

/** The server with every feature registered. */
export const layer = (overrides: Partial<McpServer.Options> = {}): Layer.Layer<McpServer.McpServer> =>
  Layer.provideMerge(features, McpServer.layer({ ...options, ...overrides }))
