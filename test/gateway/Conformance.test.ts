/**
 * The official conformance suite (`--suite all`) against the gateway in front
 * of our everything server, unprefixed: `effect-mcp gateway` as a real
 * process, the everything server its stdio upstream.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ConformanceSuite from "../support/ConformanceSuite.ts"
import { configFile, everythingStdio, spawnGateway } from "./fixture.ts"

/**
 * The legs the gateway passes whole, each revision's as our own server runs it (test/conformance/Server.test.ts).
 * On 2026-07-28 the upstream's `input_required` rounds pass through the gateway as they are. The extension leg
 * (no `--spec-version`) too: the Tasks extension's scenarios run against the gateway's tasks (docs/gateway.md).
 */
const legs = [
  { name: "0.1.16", suite: "stable", specVersion: undefined, minPassed: 46 },
  { name: "0.2.0-alpha.12 --spec-version 2025-11-25", suite: "next", specVersion: "2025-11-25", minPassed: 83 },
  { name: "0.2.0-alpha.12 --spec-version 2026-07-28", suite: "next", specVersion: "2026-07-28", minPassed: 153 },
  { name: "0.2.0-alpha.12 (all scenarios, extensions included)", suite: "next", specVersion: undefined, minPassed: 233 }
] as const

describe("conformance: the gateway in front of the everything server", () => {
  it.live(
    "0.1.16, and 0.2.0-alpha.12 at 2025-11-25, at 2026-07-28 and with every extension, --suite all",
    () =>
      Effect.gen(function* () {
        const file = yield* configFile({
          mcpServers: { everything: everythingStdio },
          gateway: { unprefixed: "everything" }
        })
        const { url } = yield* spawnGateway(file)
        // One leg after the other (the suite times some checks), each on the same gateway.
        for (const leg of legs) {
          const run = yield* ConformanceSuite.runServer({
            suite: leg.suite,
            url,
            specVersion: leg.specVersion,
            expectedFailures: leg.suite === "next" ? ConformanceSuite.expectedFailures : undefined
          })
          console.log(ConformanceSuite.summary(`gateway ${leg.name}`, run))
          assert.isAbove(run.scenarios.length, 0, `no scenario ran:\n${run.output}`)
          assert.strictEqual(run.exitCode, 0, `${leg.name} failed:\n${run.problems.join("\n")}`)
          // Every check it passes today; fewer is a regression.
          assert.isAtLeast(run.count("SUCCESS"), leg.minPassed, leg.name)
          if (leg.specVersion === undefined && leg.suite === "next") {
            // Every check of the Tasks extension's scenarios passes, none skipped (`tasks-status-notifications`
            // excepted: the suite itself skips it, its harness awaiting a rewrite against `subscriptions/listen`).
            const tasks = run.scenarios.filter(
              (s) => s.name.startsWith("tasks-") && s.name !== "tasks-status-notifications"
            )
            assert.isAtLeast(tasks.length, 9, "the Tasks scenarios ran")
            for (const scenario of tasks) {
              assert.deepStrictEqual(
                scenario.checks.filter((c) => c.status !== "SUCCESS").map((c) => `${c.id}: ${c.status}`),
                [],
                scenario.name
              )
            }
          }
        }
      }),
    180_000
  )
})
