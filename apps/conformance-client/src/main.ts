/**
 * `mcp-conformance-client <url>`: runs the scenario named by
 * `MCP_CONFORMANCE_SCENARIO` against the suite's mock server at `url`, at the
 * revision `MCP_CONFORMANCE_PROTOCOL_VERSION` names (all revisions when unset),
 * and exits 0 when the client got through it.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
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
  const scenario = Scenarios.scenarios.get(name)
  if (scenario === undefined) {
    // Scenarios this client was not written for (the auth ones among them) still see an ordinary session.
    yield* Effect.logWarning(`no program for scenario ${name}: connecting and listing tools`)
  }
  const raw = process.env.MCP_CONFORMANCE_CONTEXT
  const context = yield* Effect.try({
    try: (): unknown => (raw === undefined ? undefined : JSON.parse(raw)),
    catch: () => new Scenarios.ScenarioError({ message: `MCP_CONFORMANCE_CONTEXT is not JSON: ${raw}` })
  })
  yield* (scenario ?? Scenarios.generic)({ context }).pipe(
    Effect.provide(
      ConformanceClient.layer({
        url,
        supportedVersions: ConformanceClient.versionsUpTo(process.env.MCP_CONFORMANCE_PROTOCOL_VERSION)
      })
    )
  )
})

NodeRuntime.runMain(program)
