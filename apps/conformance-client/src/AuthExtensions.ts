/**
 * What the client does for the authorization extension scenarios of the
 * official conformance suite (DPoP, enterprise-managed authorization / cross-app
 * access, workload identity, client credentials). The dispatch (Scenarios.ts,
 * main.ts) hands each scenario named here its server URL and the harness's
 * `MCP_CONFORMANCE_CONTEXT`.
 */
import type * as Effect from "effect/Effect"

/** What a handler gets: the MCP server's URL and the harness's context object. */
export interface ExtensionInput {
  readonly serverUrl: string
  readonly context: Readonly<Record<string, unknown>>
}

/** One handler per extension scenario name. */
export const extensionScenarios: Readonly<Record<string, (args: ExtensionInput) => Effect.Effect<void, unknown>>> = {}
