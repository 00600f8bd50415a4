/**
 * The host's handlers are the same for every server, so what it lacks
 * (sampling, elicitation, roots) is warned about once per host, not once per
 * server; the warning is in the log before any server is reported ready.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as McpHost from "../src/McpHost.ts"
import { captureLogs, clientInfo, configOf, echoServer, memory } from "./fixtures.ts"

describe("McpHost capability warning", () => {
  it.effect("three servers, no handlers: one warning naming every missing capability", () => {
    const { logs, capture } = captureLogs()
    return Effect.gen(function* () {
      const servers = yield* memory({ a: echoServer("a"), b: echoServer("b"), c: echoServer("c") })
      const host = yield* McpHost.make({ clientInfo, config: configOf("a", "b", "c") }).pipe(
        Effect.provide(servers.connector)
      )
      yield* Effect.all([host.awaitReady("a"), host.awaitReady("b"), host.awaitReady("c")], {
        concurrency: "unbounded"
      })
      const warnings = logs.filter((l) => l.includes("declares no"))
      assert.strictEqual(warnings.length, 1, warnings.join("\n"))
      assert.match(warnings[0]!, /^this host declares no sampling, elicitation, roots capability/)
    }).pipe(Effect.provide(capture))
  })
})
