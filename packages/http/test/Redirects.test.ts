/**
 * The redirects the Streamable HTTP client follows and the ones it reports:
 * a 307 or 308 to the same origin is followed for every request of the
 * session (POST, the GET stream, the DELETE at close), method, body and
 * headers kept, as a Python server mounted at `/mcp/` asks of a client that
 * was given `/mcp`; a redirect to another origin, a 301 and a loop fail the
 * handshake with a message that says which. The server is the engine's own,
 * in memory, behind an HttpClient that redirects as each case says.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import * as Transport from "@effect-mcp/engine/Transport"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Scope from "effect/Scope"
import { clientInfo } from "../../engine/test/fixtures.ts"
import { inMemoryClient, serverOptions, tools, URL_MCP } from "./StreamableHttpFixtures.ts"

/**
 * The engine's server at `/mcp/`; a request to `/mcp` is answered with `status` to `location`.
 * `seen` records every request as `METHOD path`.
 */
const redirecting = (status: number, location: string) =>
  Effect.gen(function* () {
    const server = yield* StreamableHttpServer.make({
      session: ServerSession.make({ ...serverOptions(new Map([["tools/call", tools]])), capabilities: { tools: {} } })
    })
    const served = inMemoryClient(server.handler)
    const seen: Array<string> = []
    const http = HttpClient.make((request, url) => {
      seen.push(`${request.method} ${url.pathname}`)
      if (url.pathname !== "/mcp") return served.execute(request)
      return Effect.succeed(HttpClientResponse.fromWeb(request, new Response(null, { status, headers: { location } })))
    })
    return { http, seen }
  })

const connect = (http: HttpClient.HttpClient) =>
  Effect.gen(function* () {
    const transport = yield* StreamableHttpClient.make({ url: URL_MCP }).pipe(
      Effect.provideService(HttpClient.HttpClient, http)
    )
    return yield* ClientSession.make({ clientInfo, capabilities: {}, supportedVersions: ["2025-11-25"] }).pipe(
      Effect.provideService(Transport.Transport, transport)
    )
  })

const handshakeFailure = (http: HttpClient.HttpClient) =>
  Effect.gen(function* () {
    const exit = yield* Effect.exit(Effect.scoped(connect(http)))
    assert.isTrue(Exit.isFailure(exit), "the handshake failed")
    return Exit.isFailure(exit) ? String(exit.cause) : ""
  })

describe("Streamable HTTP client: redirects", () => {
  it.effect("a 307 to the same origin is followed by every request of the session, the DELETE included", () =>
    Effect.gen(function* () {
      const { http, seen } = yield* redirecting(307, "/mcp/")
      const scope = yield* Scope.make()
      const client = yield* Scope.provide(connect(http), scope)
      const result = yield* client.peer.request("tools/call", { name: "echo", arguments: { text: "hi" } })
      assert.deepStrictEqual(result, { content: [{ type: "text", text: "echo:hi" }] })
      yield* Scope.close(scope, Exit.void)
      // Each request went to /mcp, was redirected, and went again to /mcp/ with its method.
      for (const method of ["POST", "GET", "DELETE"]) {
        assert.include(seen, `${method} /mcp`, method)
        assert.include(seen, `${method} /mcp/`, method)
      }
      assert.strictEqual(
        seen.filter((s) => s.endsWith(" /mcp")).length,
        seen.filter((s) => s.endsWith(" /mcp/")).length,
        seen.join(", ")
      )
    })
  )

  it.effect("a 308 to the same origin is followed too", () =>
    Effect.gen(function* () {
      const { http } = yield* redirecting(308, "http://localhost/mcp/")
      const client = yield* connect(http)
      const result = yield* client.peer.request("tools/call", { name: "echo", arguments: { text: "x" } })
      assert.deepStrictEqual(result, { content: [{ type: "text", text: "echo:x" }] })
    })
  )

  it.effect("another origin, a redirect that turns the POST into a GET, and a loop are reported, not followed", () =>
    Effect.gen(function* () {
      const away = yield* redirecting(307, "http://elsewhere.example/mcp")
      assert.include(
        yield* handshakeFailure(away.http),
        `the server redirected the POST: HTTP 307 to "http://elsewhere.example/mcp", another origin: not followed`
      )
      assert.isFalse(
        away.seen.some((s) => !s.endsWith(" /mcp")),
        "nothing left this origin's /mcp"
      )

      const moved = yield* redirecting(301, "/mcp/")
      assert.include(
        yield* handshakeFailure(moved.http),
        `the server redirected the POST: HTTP 301 to "/mcp/", which would turn the POST into a GET: not followed`
      )

      const loop = yield* redirecting(307, "/mcp")
      assert.include(yield* handshakeFailure(loop.http), `HTTP 307 to "/mcp", more than 5 redirects in a row`)
      assert.strictEqual(loop.seen.filter((s) => s === "POST /mcp").length, 6, "the request and five redirects")
    })
  )
})
