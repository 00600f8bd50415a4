/**
 * A server's ask run as a task on the client (internal/askTask.ts), against
 * a scripted client on the TestClock: the client's `notifications/tasks/status`
 * ends the wait for the next `tasks/get` at once, whenever it arrives: before
 * the ask follows the task (a handler done at once), or while a `tasks/get`
 * is in flight (the wait after it is skipped). The poll interval is a minute,
 * so only the notification can end a wait in these tests.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as Session from "@effect-mcp/engine/Session"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import * as AskTask from "../src/internal/askTask.ts"

const task = (status: string) => ({
  taskId: "t1",
  status,
  createdAt: "2026-11-25T00:00:00.000Z",
  lastUpdatedAt: "2026-11-25T00:00:00.000Z",
  ttl: 60_000,
  pollInterval: 60_000
})

const answer = { role: "assistant", content: { type: "text", text: "done" }, model: "m" }

/** A session whose client runs the ask as task `t1`; `script` answers each `tasks/get` (and may notify). */
const scripted = (onCreate: (tell: Effect.Effect<void>) => Effect.Effect<void>, gets: ReadonlyArray<string>) => {
  const state = { phase: "Ready" } as unknown as Session.State
  const session = { state } as unknown as Session.SessionShape
  const tell = AskTask.statusNotification({ taskId: "t1", status: "completed" }, undefined as never, state)
  const sent: Array<string> = []
  let get = 0
  const send = (method: string) =>
    Effect.suspend((): Effect.Effect<unknown> => {
      sent.push(method)
      if (method === "sampling/createMessage") return Effect.as(onCreate(tell), { task: task("working") })
      if (method === "tasks/get") {
        const status = gets[get++] ?? "completed"
        // The status is told while this `tasks/get` is in flight, on the first one.
        return Effect.as(get === 1 && status === "working" ? tell : Effect.void, task(status))
      }
      return Effect.succeed(answer)
    })
  return { session, send, sent }
}

const runs = (client: ReturnType<typeof scripted>) =>
  Effect.gen(function* () {
    // Returns once the ask has come to rest: done, or waiting (for the clock).
    const fiber = yield* McpTest.forkIdle(
      AskTask.run(client.session, "sampling/createMessage", { messages: [], maxTokens: 1 }, {}, client.send)
    )
    assert.isDefined(fiber.pollUnsafe(), `still waiting after ${client.sent.join(", ")}`)
    return yield* Fiber.join(fiber)
  })

describe("a task ask hears the client's status notifications", () => {
  it.effect("told before the ask follows the task: the first wait is skipped", () =>
    Effect.gen(function* () {
      const client = scripted((tell) => tell, ["completed"])
      assert.deepStrictEqual(yield* runs(client), answer)
      assert.deepStrictEqual(client.sent, ["sampling/createMessage", "tasks/get", "tasks/result"])
    })
  )

  it.effect("told while a tasks/get is in flight: the wait after it is skipped, not the one after that", () =>
    Effect.gen(function* () {
      const client = scripted(() => Effect.void, ["working", "working", "completed"])
      const fiber = yield* McpTest.forkIdle(
        AskTask.run(client.session, "sampling/createMessage", { messages: [], maxTokens: 1 }, {}, client.send)
      )
      // Returns once the woken ask, and all it set going, has come to rest.
      yield* TestClock.adjust("1 minute")
      // The first poll (told during it), the second at once; the third waits its minute.
      assert.deepStrictEqual(client.sent, ["sampling/createMessage", "tasks/get", "tasks/get"])
      yield* TestClock.adjust("1 minute")
      assert.deepStrictEqual(yield* Fiber.join(fiber), answer)
      assert.deepStrictEqual(client.sent, [
        "sampling/createMessage",
        "tasks/get",
        "tasks/get",
        "tasks/get",
        "tasks/result"
      ])
    })
  )

  it.effect("never told: the ask waits for the poll interval", () =>
    Effect.gen(function* () {
      const client = scripted(() => Effect.void, ["completed"])
      const fiber = yield* McpTest.forkIdle(
        AskTask.run(client.session, "sampling/createMessage", { messages: [], maxTokens: 1 }, {}, client.send)
      )
      assert.isUndefined(fiber.pollUnsafe())
      assert.deepStrictEqual(client.sent, ["sampling/createMessage"])
      yield* Fiber.interrupt(fiber)
    })
  )
})
