/**
 * CORS on the Streamable HTTP endpoint (found under attack, item 10: browsers
 * could not call the server; preflights got 405). Allowed origins get their
 * preflight answered and the MCP headers exposed; refused origins stay refused.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { initialize, rawPost, serve, URL_MCP } from "./StreamableHttpFixtures.ts"

const app = "https://app.example.com"

const options = (origin: string, requestHeaders: string) =>
  HttpClientRequest.make("OPTIONS")(URL_MCP).pipe(
    HttpClientRequest.setHeaders({
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": requestHeaders
    })
  )

describe("Streamable HTTP: CORS", () => {
  it.effect("a preflight from an allowed origin gets 204 with the methods and headers an MCP client sends", () =>
    Effect.gen(function* () {
      const { http } = yield* serve({ allowedOrigins: [app] })
      const response = yield* Effect.orDie(
        http.execute(options(app, "content-type, mcp-session-id, mcp-protocol-version, mcp-param-region"))
      )
      assert.strictEqual(response.status, 204)
      assert.strictEqual(response.headers["access-control-allow-origin"], app)
      assert.include(response.headers["access-control-allow-methods"], "POST")
      assert.include(response.headers["access-control-allow-methods"], "DELETE")
      const allowed = response.headers["access-control-allow-headers"]!.split(", ")
      for (const header of ["content-type", "mcp-session-id", "mcp-protocol-version", "mcp-param-region"]) {
        assert.include(allowed, header)
      }
      assert.strictEqual(response.headers.vary, "Origin")
    })
  )

  it.effect("a reply to an allowed origin exposes Mcp-Session-Id; a loopback page is allowed by default", () =>
    Effect.gen(function* () {
      const { http } = yield* serve()
      const init = yield* rawPost(http, initialize(1), { origin: "http://localhost:5173" })
      assert.strictEqual(init.status, 200)
      assert.isString(init.headers["mcp-session-id"])
      assert.strictEqual(init.headers["access-control-allow-origin"], "http://localhost:5173")
      assert.include(init.headers["access-control-expose-headers"], "mcp-session-id")
      assert.include(init.headers["access-control-expose-headers"], "mcp-protocol-version")
    })
  )

  it.effect("refused origins stay refused: the preflight and the request get 403 without CORS headers", () =>
    Effect.gen(function* () {
      const { http } = yield* serve({ allowedOrigins: [app] })
      const preflight = yield* Effect.orDie(http.execute(options("https://evil.example.com", "content-type")))
      assert.strictEqual(preflight.status, 403)
      assert.isUndefined(preflight.headers["access-control-allow-origin"])
      const post = yield* rawPost(http, initialize(1), { origin: "https://evil.example.com" })
      assert.strictEqual(post.status, 403)
      assert.isUndefined(post.headers["access-control-allow-origin"])
    })
  )

  it.effect("with the Host/Origin checks turned off only the listed origins get CORS headers", () =>
    Effect.gen(function* () {
      const { http } = yield* serve({ dnsRebindingProtection: false, allowedOrigins: [app] })
      const other = yield* rawPost(http, initialize(1), { origin: "https://other.example.com" })
      assert.strictEqual(other.status, 200)
      assert.isUndefined(other.headers["access-control-allow-origin"])
      const listed = yield* Effect.orDie(http.execute(options(app, "content-type")))
      assert.strictEqual(listed.status, 204)
    })
  )

  it.effect("a plain OPTIONS (no preflight) and a preflight for an unserved method get 405", () =>
    Effect.gen(function* () {
      const { http } = yield* serve({ allowedOrigins: [app] })
      const plain = yield* Effect.orDie(http.execute(HttpClientRequest.make("OPTIONS")(URL_MCP)))
      assert.strictEqual(plain.status, 405)
      const put = yield* Effect.orDie(
        http.execute(
          HttpClientRequest.make("OPTIONS")(URL_MCP).pipe(
            HttpClientRequest.setHeaders({ origin: app, "access-control-request-method": "PUT" })
          )
        )
      )
      assert.strictEqual(put.status, 405)
    })
  )
})
