/**
 * `mcp-conformance-client <url>`: runs the scenario named by
 * `MCP_CONFORMANCE_SCENARIO` against the suite's mock server at `url`, at the
 * revision `MCP_CONFORMANCE_PROTOCOL_VERSION` names (all revisions when unset),
 * and exits 0 when the client got through it.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Auth from "./Auth.ts"
import { extensionScenarios } from "./AuthExtensions.ts"
import * as ConformanceClient from "./ConformanceClient.ts"
import * as Scenarios from "./Scenarios.ts"

const program = Effect.gen(function* () {
  const url = process.argv.at(-1)
  const name = process.env.MCP_CONFORMANCE_SCENARIO
  if (url === undefined || process.argv.length < 3 || name === undefined) {
    return yield* new Scenarios.ScenarioError({
      message: "usage: MCP_CONFORMANCE_SCENARIO=<scenario> mcp-conformance-client <server url>"
    })
  }
  const raw = process.env.MCP_CONFORMANCE_CONTEXT
  const context = yield* Effect.try({
    try: (): unknown => (raw === undefined ? undefined : JSON.parse(raw)),
    catch: () => new Scenarios.ScenarioError({ message: `MCP_CONFORMANCE_CONTEXT is not JSON: ${raw}` })
  })
  // The authorization extensions drive their own flows (AuthExtensions.ts).
  const extension = Object.hasOwn(extensionScenarios, name) ? extensionScenarios[name] : undefined
  if (extension !== undefined) {
    return yield* extension({ serverUrl: url, context: Predicate.isObject(context) ? context : {} })
  }
  const isAuth = name.startsWith("auth/")
  const scenario = isAuth ? Scenarios.authorized : Scenarios.scenarios.get(name)
  if (scenario === undefined) {
    // Scenarios this client was not written for still see an ordinary session.
    yield* Effect.logWarning(`no program for scenario ${name}: connecting and listing tools`)
  }
  yield* (scenario ?? Scenarios.generic)({ context }).pipe(
    Effect.provide(
      ConformanceClient.layer({
        url,
        supportedVersions: ConformanceClient.versionsUpTo(process.env.MCP_CONFORMANCE_PROTOCOL_VERSION),
        auth: isAuth ? Auth.layer(context) : undefined
      })
    )
  )
})

NodeRuntime.runMain(program)
