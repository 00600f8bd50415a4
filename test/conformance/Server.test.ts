/**
 * The official conformance suite against the everything server, as CI runs
 * it: a real server process on 127.0.0.1 (port 0), the suite as a real
 * process with its own servers forced onto loopback. Every leg must exit 0;
 * the pass counts are logged and must not shrink below what the leg passes
 * today.
 *
 * Legs: 0.1.16 (`--suite all`), then 0.2.0-alpha.12 at each revision it
 * offers, then with no `--spec-version` (which adds the extension
 * scenarios). `expected-failures.yml` may excuse only authorization and
 * unbuilt extension scenarios.
 *
 * The suite runs server scenarios one after another, so unlike the client
 * legs (`test/conformance-client/`) there is no crowd to bound here.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ConformanceSuite from "../support/ConformanceSuite.ts"
import * as ServerProcess from "../support/ServerProcess.ts"

interface Leg {
  readonly name: string
  readonly suite: keyof typeof ConformanceSuite.suites
  readonly specVersion?: string
  /** Checks the leg passes today; fewer is a regression. */
  readonly minPassed: number
}

const legs: ReadonlyArray<Leg> = [
  { name: "0.1.16", suite: "stable", minPassed: 47 },
  { name: "0.2.0-alpha.12 --spec-version 2025-03-26", suite: "next", specVersion: "2025-03-26", minPassed: 3 },
  { name: "0.2.0-alpha.12 --spec-version 2025-06-18", suite: "next", specVersion: "2025-06-18", minPassed: 56 },
  { name: "0.2.0-alpha.12 --spec-version 2025-11-25", suite: "next", specVersion: "2025-11-25", minPassed: 84 },
  { name: "0.2.0-alpha.12 --spec-version 2026-07-28", suite: "next", specVersion: "2026-07-28", minPassed: 153 },
  { name: "0.2.0-alpha.12 (all scenarios, extensions included)", suite: "next", minPassed: 276 }
]

/**
 * The Skills extension's server scenarios (SEP-2640, in the extension leg). The suite counts a SKIPPED
 * check as passing, and skips every check of a server that does not declare the extension (or
 * `directoryRead`): each must run every check, with at least one SUCCESS and no SKIPPED.
 */
const skillScenarios = ["sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory"]

/**
 * The Tasks extension's server scenarios (SEP-2663, pending in the suite, run by `--suite all`): every
 * check must pass. `tasks-status-notifications` is left out: the suite itself reports it SKIPPED
 * (its harness awaits a rewrite against `subscriptions/listen`).
 */
const taskScenarios = [
  "tasks-capability-negotiation",
  "tasks-dispatch-and-envelope",
  "tasks-lifecycle",
  "tasks-mrtr-composition",
  "tasks-mrtr-input",
  "tasks-request-headers",
  "tasks-request-state-removal",
  "tasks-required-task-error",
  "tasks-wire-fields"
]

describe("conformance: server", () => {
  for (const leg of legs) {
    it.live(
      leg.name,
      () =>
        Effect.gen(function* () {
          const server = yield* ServerProcess.spawnHttp()
          const run = yield* ConformanceSuite.runServer({
            suite: leg.suite,
            url: server.url,
            specVersion: leg.specVersion,
            expectedFailures: leg.suite === "next" ? ConformanceSuite.expectedFailures : undefined
          })
          console.log(ConformanceSuite.summary(leg.name, run))
          assert.isAbove(run.scenarios.length, 0, `no scenario ran:\n${run.output}`)
          assert.strictEqual(
            run.exitCode,
            0,
            `the suite failed:\n${run.problems.join("\n")}\n${run.output.slice(-4000)}`
          )
          assert.isAtLeast(run.count("SUCCESS"), leg.minPassed, `fewer checks passed than before:\n${run.output}`)
          if (leg.suite === "next" && leg.specVersion === undefined) {
            for (const name of [...skillScenarios, ...taskScenarios]) {
              const checks = run.scenarios.find((s) => s.name === name)?.checks ?? []
              assert.isTrue(
                checks.some((c) => c.status === "SUCCESS"),
                `${name} passed no check`
              )
              assert.deepStrictEqual(
                checks.filter((c) => c.status !== "SUCCESS").map((c) => `${c.id}: ${c.status}`),
                [],
                name
              )
            }
          }
        }),
      180_000
    )
  }
})
