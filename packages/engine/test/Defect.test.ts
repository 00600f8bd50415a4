/**
 * A handler's defect never reaches the other side: it gets a generic -32603
 * with a correlation id, and the Cause (message and stack) is logged under
 * that id. Both sides' handlers (a server method, a client method) and both
 * ways a Peer answers (a handler whose outcome is known at once, one that runs).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import * as Defect from "@effect-mcp/engine/Defect"
import type * as Session from "@effect-mcp/engine/Session"
import { linked } from "./fixtures.ts"

const secret = "db password=hunter2 rejected"

interface Logged {
  readonly level: string
  readonly text: string
  readonly annotations: { readonly [key: string]: unknown }
}

const capture = () => {
  const logs: Array<Logged> = []
  const layer = Logger.layer([
    Logger.make((options) => {
      logs.push({
        level: options.logLevel,
        text: `${String(options.message)} ${Cause.pretty(options.cause)}`,
        annotations: options.fiber.getRef(References.CurrentLogAnnotations)
      })
    })
  ])
  return { logs, layer }
}

// `later`: the handler dies after yielding, not while it is being started (the yield is
// the subject: the defect must be reported the same way either way).
const dies =
  (later: boolean): Session.Handler =>
  () =>
    later ? Effect.andThen(Effect.yieldNow, Effect.die(new Error(secret))) : Effect.die(new Error(secret))

const correlationPattern = /^Internal error \(correlation id ([0-9a-f-]{36})\)$/

/** The error's id, checked against the message and the log line that carries it. */
const checkReported = (error: unknown, logs: ReadonlyArray<Logged>, method: string) => {
  const e = error as { readonly _tag: string; readonly message: string; readonly data?: { correlationId?: string } }
  assert.strictEqual(e._tag, "InternalError")
  assert.notInclude(JSON.stringify(e), "hunter2")
  const match = correlationPattern.exec(e.message)
  assert.isNotNull(match, e.message)
  const id = match![1]!
  assert.strictEqual(e.data?.correlationId, id)
  const logged = logs.filter((log) => log.annotations[Defect.annotation] === id)
  assert.strictEqual(logged.length, 1)
  assert.strictEqual(logged[0]!.level, "Error")
  assert.strictEqual(logged[0]!.annotations.method, method)
  assert.include(logged[0]!.text, secret)
  // The stack is in the log, not on the wire.
  assert.include(logged[0]!.text, "Defect.test.ts")
}

describe("Defect: a handler's defect is logged, the peer gets a correlation id", () => {
  for (const codec of [false, true]) {
    it.effect(`a server handler that dies (codec: ${codec})`, () => {
      const { logs, layer } = capture()
      return Effect.gen(function* () {
        const { client } = yield* linked({
          codec,
          clientVersions: ["2025-06-18"],
          server: {
            capabilities: { tools: {}, prompts: {} },
            handlers: new Map([
              ["tools/list", dies(false)],
              ["prompts/list", dies(true)]
            ])
          }
        })
        const now = yield* Effect.flip(client.request("tools/list", {}))
        checkReported(now, logs, "tools/list")
        const later = yield* Effect.flip(client.request("prompts/list", {}))
        checkReported(later, logs, "prompts/list")
        assert.notStrictEqual(
          (now as { data: { correlationId: string } }).data.correlationId,
          (later as { data: { correlationId: string } }).data.correlationId
        )
      }).pipe(Effect.provide(layer))
    })
  }

  it.effect("a client handler that dies (sampling)", () => {
    const { logs, layer } = capture()
    return Effect.gen(function* () {
      const { server, client } = yield* linked({
        codec: true,
        clientVersions: ["2025-06-18"],
        client: { capabilities: { sampling: {} }, handlers: new Map([["sampling/createMessage", dies(true)]]) }
      })
      // The server is ready once `notifications/initialized` arrived: the client sent it before
      // its ping, and the server handles frames in order, so it has once it answers the ping.
      yield* client.request("ping")
      assert.strictEqual(server.state.phase, "Ready")
      const error = yield* Effect.flip(server.request("sampling/createMessage", { messages: [], maxTokens: 1 }))
      checkReported(error, logs, "sampling/createMessage")
    }).pipe(Effect.provide(layer))
  })

  it.effect("a typed MCP error still travels as it is", () =>
    Effect.gen(function* () {
      const { InvalidParams } = yield* Effect.promise(() => import("@effect-mcp/protocol/McpError"))
      const { client } = yield* linked({
        clientVersions: ["2025-06-18"],
        server: {
          capabilities: { tools: {} },
          handlers: new Map([["tools/list", () => Effect.fail(new InvalidParams({ message: "bad cursor" }))]])
        }
      })
      const error = (yield* Effect.flip(client.request("tools/list", {}))) as { code: number; message: string }
      assert.strictEqual(error.message, "bad cursor")
    })
  )
})
