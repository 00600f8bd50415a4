/**
 * The official conformance suite, client mode, against apps/conformance-client:
 * both pinned lines, and for 0.2.0-alpha.12 every spec version it offers.
 * Each leg runs `--suite all` with its expected-failures file (empty: every
 * scenario passes, the authorization ones included; see the YAML files), so
 * the suite itself fails the leg on any failure or warning, and on a listed
 * scenario that passes. On top of that, every scenario the client has a
 * program for must have passed at least one check (a scenario that checks
 * nothing proves nothing).
 *
 * One scenario is timed: `sse-retry` measures the reconnection delay against
 * the server's `retry` field (500 ms, at most 200 ms late). The suite starts
 * all its clients at once, up to 50 processes on 2 cores, where that delay
 * measured the machine's load; so the clients start a few at a time (see
 * ClientSuite.ts), and the timing check must pass in the one run like every
 * other check.
 */
import { spawnSync } from "node:child_process"
import { assert, describe, it } from "@effect/vitest"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { beforeAll } from "vitest"
import { root } from "../support/ServerProcess.ts"
import * as ClientSuite from "./ClientSuite.ts"

interface Leg {
  readonly name: string
  readonly suite: keyof typeof ClientSuite.suites
  readonly specVersion?: string
  /** The non-auth scenarios the leg runs; each must pass. */
  readonly scenarios: ReadonlyArray<string>
}

// The timed scenario (see the header) and its timing check, which must be present and pass.
const timed = "sse-retry"
const timingCheck = "client-sse-retry-timing"
const stateful = ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"]
const stateless = [
  "tools_call",
  "request-metadata",
  "sep-2322-client-request-state",
  "http-standard-headers",
  "http-custom-headers",
  "http-invalid-tool-headers",
  "json-schema-ref-no-deref",
  "json-schema-2020-12-preservation"
]

// The Skills extension (SEP-2640; 0.2.0-alpha.12 without --spec-version only). A scenario whose client never
// lists skills reports SKIPPED, which the suite counts as passing: these must have no SKIPPED check.
const skills = [
  "sep-2640-client-no-prefetch",
  "sep-2640-client-verify-digest",
  "sep-2640-client-verify-size",
  "sep-2640-client-verify-frontmatter"
]

const legs: ReadonlyArray<Leg> = [
  { name: "0.1.16", suite: "stable", scenarios: stateful },
  { name: "0.2.0-alpha.12", suite: "next", scenarios: [...new Set([...stateful, ...stateless, ...skills])] },
  // Only the authorization back-compat scenarios exist at 2025-03-26: the leg checks the baseline.
  { name: "0.2.0-alpha.12 @ 2025-03-26", suite: "next", specVersion: "2025-03-26", scenarios: [] },
  {
    name: "0.2.0-alpha.12 @ 2025-06-18",
    suite: "next",
    specVersion: "2025-06-18",
    scenarios: ["initialize", "tools_call"]
  },
  {
    name: "0.2.0-alpha.12 @ 2025-11-25",
    suite: "next",
    specVersion: "2025-11-25",
    scenarios: [...stateful, "json-schema-2020-12-preservation"]
  },
  { name: "0.2.0-alpha.12 @ 2026-07-28", suite: "next", specVersion: "2026-07-28", scenarios: stateless }
]

// The legs run the bundled client, as CI does: it starts about three times faster than the sources.
beforeAll(() => {
  const build = spawnSync("npm", ["run", "build", "--workspace", "@effect-mcp/conformance-client"], {
    cwd: root,
    encoding: "utf8"
  })
  if (build.status !== 0) throw new Error(`building the conformance client failed:\n${build.stdout}${build.stderr}`)
}, 60_000)

describe("conformance suite, client mode", () => {
  for (const leg of legs) {
    it.live(
      leg.name,
      () =>
        Effect.gen(function* () {
          const run = yield* ClientSuite.runClient({ suite: leg.suite, specVersion: leg.specVersion })
          yield* Console.log(ClientSuite.summary(leg.name, run))
          assert.strictEqual(run.exitCode, 0, run.output)
          // Every scenario's client went through the gate (else the crowd is back).
          assert.strictEqual(run.clientsStarted, run.scenarios.length, run.output)
          for (const name of leg.scenarios) {
            const scenario = run.scenario(name)
            assert.isDefined(scenario, `${leg.name} did not run ${name}`)
            const failed = scenario!.checks.filter(
              (c) =>
                c.status === "FAILURE" || c.status === "WARNING" || (skills.includes(name) && c.status === "SKIPPED")
            )
            assert.deepStrictEqual(failed, [], `${name}`)
            assert.isAbove(scenario!.checks.filter((c) => c.status === "SUCCESS").length, 0, `${name} passed no check`)
            if (name === timed) {
              const timing = scenario!.checks.find((c) => c.id === timingCheck)
              yield* Console.log(`${leg.name} ${timed}: ${JSON.stringify(timing?.details)}`)
              assert.strictEqual(timing?.status, "SUCCESS", JSON.stringify(timing))
            }
          }
        }).pipe(Effect.scoped),
      300_000
    )
  }
})
