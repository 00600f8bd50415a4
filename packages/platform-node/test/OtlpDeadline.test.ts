/**
 * The deadline of each OTLP export request (`OTEL_EXPORTER_OTLP_TIMEOUT`, per
 * signal, 10 s by default), against a real receiver on 127.0.0.1 that
 * accepts a request and never answers (or answers the headers and never the
 * body). effect's exporters bound none of their requests; without the
 * deadline each export to such a receiver stayed open, holding its batch.
 * Time is the TestClock's; the connection's end is the receiver's event.
 */
import { assert, describe, it } from "@effect/vitest"
import * as http from "node:http"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as Scope from "effect/Scope"
import * as TestClock from "effect/testing/TestClock"
import * as OtlpEnv from "../src/internal/otlpEnv.ts"

/** What the receiver saw of its n-th request (from 0). */
interface Exchange {
  /** Completed with the request's body once it has all arrived. */
  readonly arrived: Deferred.Deferred<Buffer>
  /** Completed when the exchange is over: answered, or its connection closed. */
  readonly closed: Deferred.Deferred<void>
}

/**
 * A receiver on 127.0.0.1 (port 0), closed with the scope: `answer(n, response)`
 * answers the n-th request, or does not.
 */
const receiver = (
  answer: (n: number, response: http.ServerResponse) => void
): Effect.Effect<{ readonly url: string; readonly exchange: (n: number) => Exchange }, never, Scope.Scope> =>
  Effect.gen(function* () {
    const exchanges: Array<Exchange> = []
    const exchange = (n: number): Exchange =>
      (exchanges[n] ??= { arrived: Deferred.makeUnsafe(), closed: Deferred.makeUnsafe() })
    let count = 0
    const server = http.createServer((request, response) => {
      const n = count++
      const chunks: Array<Buffer> = []
      response.on("close", () => Deferred.doneUnsafe(exchange(n).closed, Exit.void))
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        Deferred.doneUnsafe(exchange(n).arrived, Exit.succeed(Buffer.concat(chunks)))
        answer(n, response)
      })
    })
    yield* Effect.acquireRelease(
      Effect.callback<void>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.void))
      }),
      () =>
        Effect.callback<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    const { port } = server.address() as { readonly port: number }
    return { url: `http://127.0.0.1:${port}`, exchange }
  })

const never = () => {}
const ok = (_: number, response: http.ServerResponse) => {
  response.writeHead(200, { "content-type": "application/x-protobuf" })
  response.end()
}

describe("OTLP export deadline", () => {
  it("reads the timeout per signal, else the common one, else 10 s", () => {
    assert.deepStrictEqual(OtlpEnv.timeout({}, "TRACES"), Duration.seconds(10))
    const env = { OTEL_EXPORTER_OTLP_TIMEOUT: "2500", OTEL_EXPORTER_OTLP_LOGS_TIMEOUT: " 300 " }
    assert.deepStrictEqual(OtlpEnv.timeout(env, "TRACES"), Duration.millis(2500))
    assert.deepStrictEqual(OtlpEnv.timeout(env, "LOGS"), Duration.millis(300))
    // What is not a positive integer of milliseconds counts as unset.
    assert.deepStrictEqual(
      OtlpEnv.timeout({ ...env, OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "0" }, "TRACES"),
      Duration.millis(2500)
    )
    assert.deepStrictEqual(OtlpEnv.timeout({ OTEL_EXPORTER_OTLP_TIMEOUT: "1.5s" }, "METRICS"), Duration.seconds(10))
  })

  for (const silence of ["no answer", "headers and no body"] as const) {
    it.effect(`abandons a request at the deadline, closing its connection (${silence})`, () =>
      Effect.gen(function* () {
        const { url, exchange } = yield* receiver((_, response) => {
          if (silence === "no answer") return
          response.writeHead(200, { "content-type": "application/x-protobuf" })
          response.write("partial")
        })
        const client = OtlpEnv.withDeadline(Duration.seconds(10))(yield* HttpClient.HttpClient)
        const fiber = yield* client.execute(HttpClientRequest.post(`${url}/v1/traces`)).pipe(Effect.forkChild)
        yield* Deferred.await(exchange(0).arrived)
        yield* TestClock.adjust(Duration.millis(9_999))
        assert.isUndefined(fiber.pollUnsafe(), "before the deadline the request still waits")
        yield* TestClock.adjust(Duration.millis(1))
        const error = yield* Fiber.join(fiber).pipe(Effect.flip)
        assert.strictEqual(error.reason._tag, "TransportError")
        assert.match(error.message, /no answer within 10s \(OTEL_EXPORTER_OTLP_TIMEOUT\)/)
        // The receiver sees the connection end: nothing is left holding it.
        yield* Deferred.await(exchange(0).closed)
      }).pipe(Effect.provide(FetchHttpClient.layer))
    )
  }

  it.effect("an exporter abandons an export to a silent receiver at the deadline and sends again", () =>
    Effect.gen(function* () {
      // The first request is never answered; the others are.
      const { url, exchange } = yield* receiver((n, response) => (n === 0 ? never() : ok(n, response)))
      const env = {
        OTEL_EXPORTER_OTLP_ENDPOINT: url,
        OTEL_METRICS_EXPORTER: "none",
        OTEL_LOGS_EXPORTER: "none",
        OTEL_BSP_SCHEDULE_DELAY: "1000"
      }
      yield* Effect.gen(function* () {
        yield* Effect.void.pipe(Effect.withSpan("first"))
        yield* TestClock.adjust(Duration.seconds(1))
        const first = yield* Deferred.await(exchange(0).arrived)
        // The default deadline, 10 s: the receiver sees the connection closed (before: it stayed open).
        yield* TestClock.adjust(Duration.seconds(10))
        yield* Deferred.await(exchange(0).closed)
        // effect's exporter retries a transport error after 1 s: the same batch goes out again, and is answered.
        yield* TestClock.adjust(Duration.seconds(1))
        const again = yield* Deferred.await(exchange(1).arrived)
        assert.isTrue(again.equals(first))
        yield* Deferred.await(exchange(1).closed)
      }).pipe(Effect.provide(OtlpEnv.layer(env, { serviceName: "app" })))
    })
  )
})
