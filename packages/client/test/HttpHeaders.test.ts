/**
 * HttpHeaders: headers of your own on each HTTP request, computed per request
 * when given as an Effect, never replacing one the transport set.
 */
import { assert, describe, it } from "@effect/vitest"
import * as HttpHeaders from "@effect-mcp/client/HttpHeaders"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"

/** An HttpClient answering 200 to everything, recording the headers it was sent. */
const recording = () => {
  const sent: Array<{ readonly [name: string]: string }> = []
  const client = HttpClient.make((request) =>
    Effect.sync(() => {
      sent.push({ ...request.headers })
      return HttpClientResponse.fromWeb(request, new Response("{}"))
    })
  )
  return { sent, layer: Layer.succeed(HttpClient.HttpClient, client) }
}

const post = (headers: { readonly [name: string]: string }) =>
  Effect.gen(function* () {
    const http = yield* HttpClient.HttpClient
    return yield* http.execute(
      HttpClientRequest.post("http://127.0.0.1/mcp").pipe(HttpClientRequest.setHeaders(headers))
    )
  })

describe("HttpHeaders", () => {
  it.effect("adds the headers a request lacks and keeps those it has", () =>
    Effect.gen(function* () {
      const { sent, layer } = recording()
      const provided = <A, E>(effect: Effect.Effect<A, E, HttpClient.HttpClient>) =>
        Effect.provide(
          effect,
          HttpHeaders.layer({ "X-Tenant": "acme", "Mcp-Session-Id": "forged" }).pipe(Layer.provide(layer))
        )
      yield* provided(post({ "mcp-session-id": "s-1" }))
      assert.strictEqual(sent[0]!["x-tenant"], "acme")
      assert.strictEqual(sent[0]!["mcp-session-id"], "s-1")
    })
  )

  it.effect("an Effect of headers runs once per HTTP request", () =>
    Effect.gen(function* () {
      const { sent, layer } = recording()
      let n = 0
      const headers = Effect.sync(() => ({ "X-Request-Number": String(++n) }))
      const program = Effect.andThen(post({}), post({}))
      yield* Effect.provide(program, HttpHeaders.layer(headers).pipe(Layer.provide(layer)))
      assert.deepStrictEqual(
        sent.map((h) => h["x-request-number"]),
        ["1", "2"]
      )
    })
  )
})
