/**
 * Bun closes a connection `idleTimeout` seconds after its request, however much is written on it meanwhile
 * (keepalive comments do not reset its timer; with `idleTimeout: 2` it cut a reply at 4 s), so an SSE reply that
 * outlives it is lost: for a stateless call, the call itself. docs/runtimes.md exempts the MCP requests
 * (`server.timeout(request, 0)`) or turns the timeout off (`idleTimeout: 0`). The first, with a 2 s server
 * idle timeout (fixtures/bun-idle-server.ts): a call whose reply stays open, carrying keepalives, well past the
 * point where Bun would have cut it, then answered when the test releases it (a second request). No wait of the
 * test's own: it reads the keepalives as they come, and the answer.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as ServerProcess from "../support/ServerProcess.ts"
import * as Runtime from "./Runtime.ts"

const fixture = "test/runtimes/fixtures/bun-idle-server.ts"

/** How long the reply must stay open: past the 2 s idle timeout and the 4 s at which Bun cut such a reply. */
const openFor = 6_000

/** A stateless 2025-11-25 `tools/call` of `name` (no arguments). */
const call = (url: string, name: string) =>
  fetch(url, {
    method: "POST",
    headers: {
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      "mcp-protocol-version": "2025-11-25"
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: {} } })
  })

describe("Bun, its idle timeout and a long SSE reply", () => {
  it.live(
    "a stateless call held past the server's idleTimeout (2 s) keeps its reply and gets its answer",
    () =>
      Effect.gen(function* () {
        const bin = yield* Runtime.binary("bun")
        const child = yield* ServerProcess.spawnChild(bin, Runtime.argsFor("bun", fixture), {
          env: { ...process.env, ...Runtime.quiet }
        })
        const url = (yield* child.waitForStderr(/^listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)$/m))[1]!
        const response = yield* Effect.promise(() => call(url, "hold"))
        assert.strictEqual(response.headers.get("content-type"), "text/event-stream")
        const reader = response.body!.getReader()
        const decoder = new TextDecoder()
        const next = Effect.tryPromise({
          try: () => reader.read(),
          catch: (error) => new Error(`the reply was cut: ${String(error)}\nBun's stderr:\n${child.stderr()}`)
        })
        const opened = yield* Clock.currentTimeMillis
        let keepalives = 0
        // Each keepalive (every 500 ms) is an event to read; the reply must still be open after `openFor`.
        while ((yield* Clock.currentTimeMillis) - opened < openFor) {
          const chunk = yield* next
          assert.isFalse(chunk.done, "the reply ended before its call was answered")
          if (decoder.decode(chunk.value).includes(":keepalive")) keepalives++
        }
        assert.isAtLeast(keepalives, 4)
        assert.include(yield* Effect.promise(() => call(url, "release").then((r) => r.text())), '"text":"done"')
        let rest = ""
        while (true) {
          const chunk = yield* next
          if (chunk.done) break
          rest += decoder.decode(chunk.value)
        }
        assert.include(rest, '"text":"released"')
      }),
    60_000
  )
})
