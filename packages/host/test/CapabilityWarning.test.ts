/**
 * The host's handlers are the same for every server, so what it lacks
 * (sampling, elicitation, roots) is warned about once per host, not once per
 * server; the warning is in the log before any server is reported ready. A
 * tool refused for a capability is blamed on the host only for what the host
 * did not declare.
 */
import { assert, describe, it } from "@effect/vitest"
import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Tool from "@effect-mcp/server/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
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

  it.effect("a -32021 passed on from behind a server is not blamed on a host that declares the capability", () => {
    const { logs, capture } = captureLogs()
    // What a gateway or another host answers when the client behind it lacks sampling.
    const passedOn = Tool.make("passes_on", {
      input: Schema.Struct({}),
      handler: () =>
        Effect.fail(new McpError.MissingRequiredClientCapability({ data: { requiredCapabilities: { sampling: {} } } }))
    })
    return Effect.gen(function* () {
      const servers = yield* memory({ a: echoServer("a", passedOn) })
      const host = yield* McpHost.make({
        clientInfo,
        config: configOf("a"),
        client: { supportedVersions: ["2026-07-28"] }
      }).pipe(
        Effect.provide(servers.connector),
        Effect.provide(
          SamplingHandler.layer(() =>
            Effect.succeed({ role: "assistant" as const, content: { type: "text" as const, text: "x" }, model: "m" })
          )
        )
      )
      yield* host.awaitReady("a")
      const error = yield* Effect.flip(host.callTool("a__passes_on", {}))
      assert.strictEqual(error._tag, "MissingRequiredClientCapability")
      assert.isUndefined(
        logs.find((l) => l.includes("needs the client capability")),
        logs.join("\n")
      )
    }).pipe(Effect.provide(capture))
  })
})
