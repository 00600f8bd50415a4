import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as PeerError from "../src/PeerError.ts"
import type * as Session from "../src/Session.ts"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import { TestClock } from "effect/testing"
import { linked, rawAgainstClient } from "./fixtures.ts"

const keepalive = { schedule: Schedule.spaced("10 seconds"), timeout: "2 seconds" } as const

describe("ping and keepalive", () => {
  it.effect("ping works in both directions", () =>
    Effect.gen(function* () {
      const { client, server } = yield* linked({ clientVersions: ["2025-11-25"] })
      assert.deepStrictEqual(yield* client.request("ping"), {})
      assert.deepStrictEqual(yield* server.request("ping"), {})
    })
  )

  it.effect("a keepalive ping that goes unanswered closes the session with KeepaliveFailed", () =>
    Effect.gen(function* () {
      // The raw server answers the handshake, then never answers a ping.
      const { client, next } = yield* rawAgainstClient({ peer: { keepalive } })
      const closed = yield* client.closed.pipe(Effect.forkChild)
      yield* TestClock.adjust("10 seconds")
      const ping = (yield* next) as { method: string }
      assert.strictEqual(ping.method, "ping")
      yield* TestClock.adjust("1999 millis")
      assert.isUndefined(closed.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      const exit = yield* Fiber.join(closed)
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        const reason = exit.cause.reasons[0]
        assert.strictEqual(reason?._tag === "Fail" ? reason.error._tag : undefined, "KeepaliveFailed")
        // It says why the ping failed (the ping's own error is its cause).
        const error = reason?._tag === "Fail" ? (reason.error as PeerError.KeepaliveFailed) : undefined
        assert.strictEqual(error?.cause instanceof PeerError.RequestTimeout, true)
        assert.match(error?.message ?? "", /^the keepalive ping failed: .*ping/)
      }
    })
  )

  for (const version of ["2025-11-25", "2026-07-28"] as const)
    it.effect(`${version}: answered keepalive pings keep the session open`, () =>
      Effect.gen(function* () {
        // 2026-07-28 has no ping: the keepalive is a server/discover there. This server refuses a ping on it, as a
        // Streamable HTTP server does (with no session to send it to): before, that closed the session.
        const strict = new Map<string, Session.Handler>([
          ["ping", () => Effect.fail(new McpError.MethodNotFound({ message: "no ping in 2026-07-28" }))]
        ])
        const { client } = yield* linked({
          clientVersions: [version],
          client: { peer: { keepalive } },
          server: version === "2026-07-28" ? { handlers: strict } : {}
        })
        const closed = yield* client.closed.pipe(Effect.forkChild)
        for (let i = 0; i < 10; i++) yield* TestClock.adjust("10 seconds")
        assert.isUndefined(closed.pollUnsafe())
      })
    )
})
