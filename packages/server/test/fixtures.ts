import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Layer from "effect/Layer"

/** A JSON result read by path in assertions. */
// biome-ignore lint/suspicious/noExplicitAny: tests read JSON results by path; the assertions are the type check
export type Obj = { readonly [key: string]: any }

/** Every revision, oldest first. */
export const revisions: ReadonlyArray<ProtocolVersion.ProtocolVersion> = ProtocolVersion.all

/** The server under test: `features` registered on an McpServer named `test-server`. */
export const testServer = (
  features: Layer.Layer<never, never, McpServer.McpServer>,
  options: Partial<McpServer.Options> = {}
): Layer.Layer<McpServer.McpServer> =>
  Layer.provideMerge(features, McpServer.layer({ name: "test-server", version: "1.0.0", ...options }))
