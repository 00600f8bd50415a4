/**
 * Issue 17, acceptance 2: a 2026-07-28 multi-round-trip call whose rounds
 * land on different processes. Two everything-server processes (real child
 * processes on 127.0.0.1) behind a round-robin forwarder on loopback; our
 * client calls the two-round fixture tool through it, so discover and each
 * round go to the other process in turn. Given the same key
 * (`--request-state-key`, or MCP_REQUEST_STATE_KEYS) the call succeeds; with
 * other keys the second round is refused with -32602; rotation: a process
 * with [new, old] opens what an old-key process sealed, and what it seals
 * opens where only the new key is known.
 */
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as http from "node:http"
import type * as net from "node:net"
import { everythingBin, node, spawnChild } from "../support/ServerProcess.ts"

const oldKey = "old-key-0123456789abcdef0123456789abcdef"
const newKey = "new-key-fedcba9876543210fedcba9876543210"
const otherKey = "other-key-000000000000000000000000000000"

/** An everything server over HTTP with the given flags and environment; its endpoint URL. */
const spawn = (flags: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}) =>
  Effect.gen(function* () {
    const child = yield* spawnChild(node, [everythingBin, "--http", "--port", "0", ...flags], {
      env: { ...process.env, ...env }
    })
    const match = yield* child.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp/)
    // The keys given are never written out.
    for (const key of [oldKey, newKey, otherKey]) assert.notInclude(child.stderr(), key)
    return `${match[1]!}/mcp`
  })

/**
 * A forwarder on 127.0.0.1:0 sending each `tools/call` round to the next
 * upstream in turn, starting with the first (anything else goes to the
 * first); bodies streamed both ways. Counts the rounds each served.
 */
const roundRobin = (upstreams: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly url: string; readonly calls: Array<number>; readonly server: http.Server }>((resume) => {
      let rounds = 0
      const calls = upstreams.map(() => 0)
      const server = http.createServer((request, response) => {
        const round = request.headers["mcp-method"] === "tools/call"
        const index = round ? rounds++ % upstreams.length : 0
        const target = new URL(upstreams[index]!)
        if (round) calls[index]!++
        const forwarded = http.request(
          {
            host: target.hostname,
            port: target.port,
            path: target.pathname,
            method: request.method,
            headers: { ...request.headers, host: target.host }
          },
          (upstream) => {
            response.writeHead(upstream.statusCode ?? 502, upstream.headers)
            upstream.pipe(response)
          }
        )
        forwarded.on("error", () => response.destroy())
        request.pipe(forwarded)
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as net.AddressInfo).port
        resume(Effect.succeed({ url: `http://127.0.0.1:${port}/mcp`, calls, server }))
      })
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

/** Our client on `url`, answering each form with a value per field. */
const connect = (url: string) =>
  Effect.map(
    Layer.build(
      McpClient.layer({ clientInfo: { name: "rounds", version: "1.0.0" }, supportedVersions: ["2026-07-28"] }).pipe(
        Layer.provide(StreamableHttpClient.layer({ url })),
        Layer.provide(
          ElicitationHandler.layer({
            form: (params) => {
              const field = Object.keys(params.requestedSchema.properties)[0]!
              return Effect.succeed({ action: "accept", content: { [field]: field === "name" ? "Ada" : "teal" } })
            }
          })
        ),
        Layer.provide(NodeHttpClient.layer)
      )
    ),
    (context) => Context.get(context, McpClient.McpClient)
  )

const multiRound = (client: McpClient.McpClientShape) =>
  Effect.map(client.callTool("test_input_required_result_multi_round", {}), (result) =>
    result.content.map((block) => (block.type === "text" ? block.text : "")).join("")
  )

/** Two processes with these settings, through the forwarder: the call's outcome and who served its rounds. */
const acrossTwo = (
  a: { readonly flags: ReadonlyArray<string>; readonly env?: NodeJS.ProcessEnv },
  b: { readonly flags: ReadonlyArray<string>; readonly env?: NodeJS.ProcessEnv }
) =>
  Effect.gen(function* () {
    const upstreams = yield* Effect.all([spawn(a.flags, a.env), spawn(b.flags, b.env)], { concurrency: 2 })
    const forwarder = yield* roundRobin(upstreams)
    const client = yield* connect(forwarder.url)
    assert.strictEqual(client.revision, "2026-07-28")
    const outcome = yield* Effect.result(multiRound(client))
    return { outcome, calls: forwarder.calls }
  })

describe("2026-07-28 input rounds on different processes", () => {
  it.live(
    "the same key: the rounds land on both processes and the call succeeds",
    () =>
      Effect.gen(function* () {
        const { outcome, calls } = yield* acrossTwo(
          { flags: ["--request-state-key", oldKey] },
          { flags: [], env: { MCP_REQUEST_STATE_KEYS: oldKey } }
        )
        assert.strictEqual(outcome._tag, "Success", String(outcome._tag === "Failure" ? outcome.failure : ""))
        if (outcome._tag === "Success") assert.strictEqual(outcome.success, "Completed: name=Ada, color=teal")
        // Three rounds (ask step1, ask step2, result): first, second, first process.
        assert.deepStrictEqual(calls, [2, 1])
      }).pipe(Effect.scoped),
    180_000
  )

  it.live(
    "mismatched keys (or the default per-process keys): the round on the other process is refused with -32602",
    () =>
      Effect.gen(function* () {
        for (const [a, b] of [
          [
            ["--request-state-key", oldKey],
            ["--request-state-key", otherKey]
          ],
          [[], []]
        ] as const) {
          const { outcome } = yield* acrossTwo({ flags: a }, { flags: b })
          assert.strictEqual(outcome._tag, "Failure")
          if (outcome._tag === "Failure") {
            const failure = outcome.failure as { readonly code?: number; readonly message?: string }
            assert.strictEqual(failure.code, -32602)
            assert.include(failure.message, "requestState")
          }
        }
      }).pipe(Effect.scoped),
    180_000
  )

  it.live(
    "rotation: [new, old] opens old-key states and signs with the new key",
    () =>
      Effect.gen(function* () {
        // Round 1 sealed by the old-key process, round 2 opened and resealed (new key) by the rotated one, round 3
        // back on the old-key process: refused.
        const toOld = yield* acrossTwo(
          { flags: ["--request-state-key", oldKey] },
          { flags: ["--request-state-key", `${newKey},${oldKey}`] }
        )
        assert.strictEqual(toOld.outcome._tag, "Failure")
        // Refused at round 3, not 2: the rotated process opened the old key's state.
        assert.deepStrictEqual(toOld.calls, [2, 1])
        // The rotated process and one that knows only the new key serve a whole call between them.
        const toNew = yield* acrossTwo(
          { flags: ["--request-state-key", newKey, "--request-state-key", oldKey] },
          { flags: ["--request-state-key", newKey] }
        )
        assert.strictEqual(toNew.outcome._tag, "Success")
      }).pipe(Effect.scoped),
    180_000
  )

  it.live(
    "a key too short is refused at start, without quoting it",
    () =>
      Effect.gen(function* () {
        const child = yield* spawnChild(node, [
          everythingBin,
          "--http",
          "--port",
          "0",
          "--request-state-key",
          "short-secret"
        ])
        const line = yield* child.waitForStderr(/mcp-everything-server: .*/)
        assert.include(line[0], "at least 32")
        assert.notInclude(child.stderr(), "short-secret")
      }).pipe(Effect.scoped),
    180_000
  )
})
