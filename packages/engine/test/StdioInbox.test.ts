import { assert, describe, it } from "@effect/vitest"
import type * as Transport from "@effect-mcp/engine/Transport"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { type DirectHandlers, Inbox } from "../src/internal/stdioInbox.ts"
import { forkIdle } from "./fixtures.ts"

/** A push source the test drives by hand; it records pause/resume/stop and signals resume. */
const fakeReader = () => {
  const state = { handlers: undefined as DirectHandlers | undefined, events: [] as Array<string> }
  const resumed = Deferred.makeUnsafe<void>()
  const reader = {
    start: (handlers: DirectHandlers) => {
      state.handlers = handlers
      state.events.push("start")
      return {
        pause: () => state.events.push("pause"),
        resume: () => {
          state.events.push("resume")
          Deferred.doneUnsafe(resumed, Exit.void)
        },
        stop: () => state.events.push("stop")
      }
    }
  }
  const bytes = (text: string) => state.handlers!.chunk(new TextEncoder().encode(text))
  // As a reader that knows an ASCII chunk's text (platform-node's) reports it: bytes and text.
  const ascii = (text: string) => state.handlers!.chunk(new TextEncoder().encode(text), text)
  const raw = (bytes: ReadonlyArray<number>) => state.handlers!.chunk(new Uint8Array(bytes))
  return { reader, state, bytes, ascii, raw, resumed: Deferred.await(resumed) }
}

const line = (id: number) => `${JSON.stringify({ jsonrpc: "2.0", id, method: "ping" })}\n`

const idOf = (frame: Transport.Incoming): unknown =>
  Result.isSuccess(frame) ? (frame.success as { readonly id?: unknown }).id : "failure"

const makeInbox = (reader: ReturnType<typeof fakeReader>["reader"], capacity = 16) =>
  Effect.map(
    Effect.scope,
    (scope) => new Inbox<never>(reader, { maxFrameBytes: 1024, capacity, scope, failureMessage: "reading failed" })
  )

describe("stdio inbox over a DirectReader", () => {
  it.effect(
    "starts reading on the first pull; frames split across chunks arrive in order, the last line at the end",
    () =>
      Effect.gen(function* () {
        const fake = fakeReader()
        const inbox = yield* makeInbox(fake.reader)
        assert.deepStrictEqual(fake.state.events, [], "nothing is read before the stream is")
        // Returns once the reader waits for frames, its source started.
        const reader = yield* forkIdle(Stream.runCollect(inbox.stream))
        assert.deepStrictEqual(fake.state.events, ["start"])
        const two = line(2)
        fake.bytes(line(1) + two.slice(0, 10))
        fake.bytes(two.slice(10) + line(3).trimEnd())
        fake.state.handlers!.end()
        assert.deepStrictEqual((yield* Fiber.join(reader)).map(idOf), [1, 2, 3])
      })
  )

  it.effect("lines mixing chunks reported as text with chunks of bytes decode as if all were bytes", () =>
    Effect.gen(function* () {
      const fake = fakeReader()
      const inbox = yield* makeInbox(fake.reader)
      const reader = yield* forkIdle(Stream.runCollect(inbox.stream))
      const accented = `${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping", params: { _meta: { n: "caf\u00e9" } } })}\n`
      const utf8 = [...new TextEncoder().encode(accented)]
      const cut = utf8.indexOf(0xc3) + 1
      // Line 1 whole as text; line 2 begun as text, its character split over two byte chunks, ended as text.
      fake.ascii(line(1) + accented.slice(0, 10))
      fake.raw(utf8.slice(10, cut))
      fake.raw(utf8.slice(cut, cut + 2))
      fake.ascii(accented.slice(accented.indexOf("\u00e9") + 2) + line(3).slice(0, 5))
      // Line 3 ended by a text chunk after its start as text; line 4 is not UTF-8; line 5, as text, exceeds 1024.
      fake.ascii(line(3).slice(5))
      fake.raw([...new TextEncoder().encode('{"jsonrpc":"2.0","id":4,"method":"x"'), 0xff, 0x7d, 0x0a])
      fake.ascii(`${JSON.stringify({ jsonrpc: "2.0", id: 5, method: "ping", params: { pad: "x".repeat(1100) } })}\n`)
      fake.ascii(line(6))
      fake.state.handlers!.end()
      const frames = yield* Fiber.join(reader)
      assert.deepStrictEqual(frames.map(idOf), [1, 2, 3, "failure", "failure", 6])
      const second = frames[1]!
      const params = Result.isSuccess(second) ? (second.success as { readonly params?: unknown }).params : undefined
      assert.deepStrictEqual(params, { _meta: { n: "caf\u00e9" } })
      const failures = [frames[3]!, frames[4]!].map((frame) => (Result.isFailure(frame) ? frame.failure.code : 0))
      assert.deepStrictEqual(failures, [-32700, -32600])
    })
  )

  it.effect("pauses the source once `capacity` frames wait and resumes it when they are taken", () =>
    Effect.gen(function* () {
      const fake = fakeReader()
      const inbox = yield* makeInbox(fake.reader, 2)
      const taken: Array<unknown> = []
      const allTaken = Deferred.makeUnsafe<void>()
      const reader = yield* forkIdle(
        Stream.runForEach(inbox.stream, (frame) =>
          Effect.sync(() => {
            if (taken.push(idOf(frame)) === 3) Deferred.doneUnsafe(allTaken, Exit.void)
          })
        )
      )
      fake.bytes(line(1) + line(2) + line(3))
      assert.deepStrictEqual(fake.state.events, ["start", "pause"])
      yield* Deferred.await(allTaken)
      yield* fake.resumed
      assert.deepStrictEqual(taken, [1, 2, 3])
      assert.deepStrictEqual(fake.state.events, ["start", "pause", "resume"])
      fake.state.handlers!.end()
      yield* Fiber.join(reader)
    })
  )

  it.effect("a failure of the source fails the stream with an Io error, after the frames read before it", () =>
    Effect.gen(function* () {
      const fake = fakeReader()
      const inbox = yield* makeInbox(fake.reader)
      const taken: Array<unknown> = []
      const reader = yield* forkIdle(
        Effect.exit(Stream.runForEach(inbox.stream, (frame) => Effect.sync(() => taken.push(idOf(frame)))))
      )
      fake.bytes(line(7) + '{"partial')
      fake.state.handlers!.fail(new Error("EIO"))
      const exit = yield* Fiber.join(reader)
      assert.deepStrictEqual(taken, [7], "the partial line of a failed source is dropped")
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
      assert.strictEqual(error?._tag, "Fail")
      if (error?._tag === "Fail") {
        assert.strictEqual(error.error.reason, "Io")
        assert.strictEqual(error.error.message, "reading failed")
      }
    })
  )

  it.effect("halt ends the stream at once, drops what was not taken and stops the source", () =>
    Effect.gen(function* () {
      const fake = fakeReader()
      const inbox = yield* makeInbox(fake.reader)
      const pull = yield* forkIdle(Stream.runCollect(inbox.stream))
      yield* inbox.halt()
      fake.bytes(line(1))
      assert.deepStrictEqual(yield* Fiber.join(pull), [])
      assert.deepStrictEqual(fake.state.events, ["start", "stop"])
    })
  )
})
