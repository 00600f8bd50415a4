/**
 * When the Streamable HTTP client reconnects an SSE stream, on the TestClock:
 * the wait before a reconnection (the server's `retry`, else `initialDelay`),
 * the retry schedule after failed attempts (growing by `factor`, capped at
 * `maxDelay`, `maxRetries` of them), and what ends the attempts. The server
 * is a script of canned responses, so every GET's time is exact.
 */
import { assert, describe, it } from "@effect/vitest"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import * as HttpClientSse from "../src/internal/httpClientSse.ts"

const reconnect = (options: Partial<HttpClientSse.Reconnect> = {}): HttpClientSse.Reconnect => ({
  initialDelay: Duration.seconds(1),
  maxDelay: Duration.seconds(30),
  factor: 1.5,
  maxRetries: 2,
  ...options
})

/** Every delay a schedule yields, in order, until it is done. */
const delaysOf = (schedule: Schedule.Schedule<Duration.Duration>) =>
  Effect.gen(function* () {
    const step = yield* Schedule.toStep(schedule)
    const delays: Array<number> = []
    for (let i = 0; i < 100; i++) {
      const next = yield* Effect.result(step(0, undefined))
      if (Result.isFailure(next)) break
      delays.push(Duration.toMillis(next.success[1]))
    }
    return delays
  })

// Only what the reader touches: the status, the headers, and a body read whole (it has a length).
const response = (status: number, body = ""): HttpClientResponse.HttpClientResponse =>
  ({
    status,
    headers: status === 200 ? { "content-type": "text/event-stream", "content-length": String(body.length) } : {},
    text: Effect.succeed(body),
    stream: Stream.die("the body has a length: it is read whole")
  }) as unknown as HttpClientResponse.HttpClientResponse

/** A stream that announces an event id (so it can be resumed) and the `retry` hint, then ends. */
const primed = (retryMs?: number) =>
  response(200, `id: e1\n${retryMs === undefined ? "" : `retry: ${retryMs}\n`}data: \n\n`)

/**
 * Runs the reader against a server whose GETs answer `statuses` in turn
 * (503 after them), records when each GET came, and what was delivered.
 */
const harness = (options: {
  readonly reconnect?: HttpClientSse.Reconnect
  readonly statuses?: ReadonlyArray<number>
  readonly first?: HttpClientResponse.HttpClientResponse
  readonly pending?: ReadonlyArray<JsonRpc.RequestId>
  /** The `retry` each stream opened with status 200 announces. */
  readonly retryMs?: number
}) =>
  Effect.gen(function* () {
    const start = yield* Clock.currentTimeMillis
    const gets: Array<number> = []
    const delivered: Array<JsonRpc.Message> = []
    let expired = false
    const pending = options.pending === undefined ? undefined : new Set(options.pending)
    const config: HttpClientSse.Config = {
      reconnect: options.reconnect ?? reconnect(),
      deliver: (event) =>
        Effect.sync(() => {
          const message = JSON.parse(event.data) as JsonRpc.Message
          delivered.push(message)
          return JsonRpc.isResponse(message) && message.id !== null ? [message.id] : []
        }),
      get: () =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          gets.push(now - start)
          const status = options.statuses?.[gets.length - 1] ?? 503
          return status === 200 ? primed(options.retryMs) : response(status)
        }),
      expired: Effect.sync(() => {
        expired = true
      }),
      isClosed: () => false,
      maxEventBytes: HttpClientSse.defaultMaxEventBytes,
      failed: () => Effect.die("no event is too large here")
    }
    const fiber = yield* Effect.forkChild(HttpClientSse.run(config, options.first, pending))
    // The clock stops at every sleep's deadline on the way, so each GET is timed exactly.
    yield* TestClock.adjust("10 minutes")
    assert.isDefined(fiber.pollUnsafe(), "the reader gave up")
    // A reply stream given up fails (the transport then answers its requests with that failure); nothing is
    // delivered as if the server had answered.
    const outcome = yield* Effect.result(Fiber.join(fiber))
    const errors = delivered.map((m) => (JsonRpc.isFailure(m) ? m.error.message : "not an error"))
    if (outcome._tag === "Failure") errors.push(`${outcome.failure.reason}: ${outcome.failure.message}`)
    return { gets, errors, expired: () => expired }
  })

describe("SSE reconnection: the schedule", () => {
  it.effect("the first wait is the server's retry, else initialDelay; never over maxDelay", () =>
    Effect.sync(() => {
      const ms = (hint: number | undefined, options?: Partial<HttpClientSse.Reconnect>) =>
        Duration.toMillis(
          HttpClientSse.reconnectDelay(reconnect(options), hint === undefined ? undefined : Duration.millis(hint))
        )
      assert.strictEqual(ms(500), 500)
      assert.strictEqual(ms(undefined), 1000)
      // A server's retry is taken as at least 100 ms (before, 0 reopened the stream in a loop).
      assert.strictEqual(ms(0), 100)
      assert.strictEqual(ms(99), 100)
      assert.strictEqual(ms(5000, { maxDelay: Duration.seconds(2) }), 2000)
    })
  )

  it.effect("failed attempts are retried maxRetries times, growing by factor from the first wait, capped", () =>
    Effect.gen(function* () {
      const hint = Duration.millis(500)
      assert.deepStrictEqual(yield* delaysOf(HttpClientSse.retrySchedule(reconnect(), undefined)), [1500, 2250])
      assert.deepStrictEqual(yield* delaysOf(HttpClientSse.retrySchedule(reconnect(), hint)), [750, 1125])
      assert.deepStrictEqual(
        yield* delaysOf(HttpClientSse.retrySchedule(reconnect({ maxRetries: 4, maxDelay: Duration.seconds(1) }), hint)),
        [750, 1000, 1000, 1000]
      )
      assert.deepStrictEqual(yield* delaysOf(HttpClientSse.retrySchedule(reconnect({ maxRetries: 0 }), hint)), [])
    })
  )
})

describe("SSE reconnection: a stream that ends at once", () => {
  it.effect("asking for retry: 0, it is reopened every 100 ms, not in a loop", () =>
    Effect.gen(function* () {
      // The GET stream: two hundred opens that each end at once, then a server that refuses (the reader gives up).
      const { gets } = yield* harness({ statuses: Array.from({ length: 200 }, () => 200), retryMs: 0 })
      assert.isAtLeast(gets.length, 200)
      for (let i = 1; i < 200; i++) assert.isAtLeast(gets[i]! - gets[i - 1]!, 100, `GET ${i + 1}`)
    })
  )
})

describe("SSE reconnection: a reply stream that ended early", () => {
  it.effect("is resumed after the server's retry, then retried on the backoff; given up, its requests fail", () =>
    Effect.gen(function* () {
      const { gets, errors } = yield* harness({
        reconnect: reconnect({ maxDelay: Duration.seconds(1) }),
        first: primed(500),
        pending: [1]
      })
      // 500 (the hint), then 750 and 1125 capped at 1000.
      assert.deepStrictEqual(gets, [500, 1250, 2250])
      assert.deepStrictEqual(errors, [
        "Io: the connection was lost: the response stream ended and could not be resumed"
      ])
    })
  )

  it.effect("without a retry from the server, waits initialDelay first", () =>
    Effect.gen(function* () {
      const { gets, errors } = yield* harness({ first: primed(), pending: [1] })
      assert.deepStrictEqual(gets, [1000, 2500, 4750])
      assert.strictEqual(errors.length, 1)
    })
  )

  it.effect("a successful reconnection starts the backoff over", () =>
    Effect.gen(function* () {
      // The second GET opens a stream that ends at once without the response: it is resumed again.
      const { gets } = yield* harness({ first: primed(500), statuses: [503, 200], pending: [1] })
      assert.deepStrictEqual(gets, [500, 1250, 1750, 2500, 3625])
    })
  )

  it.effect("a refusal (4xx) ends it at once; 404 expires the session", () =>
    Effect.gen(function* () {
      const refused = yield* harness({ first: primed(500), statuses: [403], pending: [1] })
      assert.deepStrictEqual(refused.gets, [500])
      assert.deepStrictEqual(refused.errors, [
        "Io: the connection was lost: the response stream ended and resuming it was refused (HTTP 403)"
      ])
      const expired = yield* harness({ first: primed(500), statuses: [503, 404], pending: [1] })
      assert.deepStrictEqual(expired.gets, [500, 1250])
      assert.isTrue(expired.expired())
      assert.deepStrictEqual(expired.errors, [])
    })
  )

  it.effect("a stream without an event id is not resumed", () =>
    Effect.gen(function* () {
      const { gets, errors } = yield* harness({ first: response(200, "retry: 500\n\n"), pending: [1] })
      assert.deepStrictEqual(gets, [])
      assert.deepStrictEqual(errors, [
        "Io: the connection was lost: the response stream ended before the response, and the server offers no resumption"
      ])
    })
  )
})

describe("SSE reconnection: the GET stream", () => {
  it.effect("is opened at once; a failed open is retried on the backoff, then given up quietly", () =>
    Effect.gen(function* () {
      const { gets, errors } = yield* harness({})
      assert.deepStrictEqual(gets, [0, 1500, 3750])
      assert.deepStrictEqual(errors, [])
    })
  )
})
