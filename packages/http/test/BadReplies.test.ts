/**
 * A POST's reply that cannot answer its request fails the request at once,
 * with what came instead, and the session goes on: a body that is not
 * JSON-RPC (an HTML page, broken JSON), a JSON reply that leaves the request
 * out, a body over the size bound (declared, or streamed without a length:
 * read no further than the bound). No parse error is posted back for a
 * reply. The server is the engine's own, in memory; the bad replies replace
 * its answer to `tools/call` calls whose tool is named for the case. The
 * clock never moves: nothing here waits for a deadline.
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
import { clientInfo } from "../../engine/test/fixtures.ts"
import { inMemoryClient, serverOptions, tools, URL_MCP } from "./StreamableHttpFixtures.ts"

const LIMIT = 1000

/** A body of `chunks` chunks of 500 bytes with no declared length; `pulled` counts the chunks read. */
const endless = (chunks: number) => {
  const state = { pulled: 0 }
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.pulled === chunks) return controller.close()
      state.pulled++
      controller.enqueue(new TextEncoder().encode(" ".repeat(500)))
    }
  })
  return { state, stream }
}

const setup = Effect.gen(function* () {
  const server = yield* StreamableHttpServer.make({
    session: ServerSession.make({ ...serverOptions(new Map([["tools/call", tools]])), capabilities: { tools: {} } })
  })
  const posted: Array<string> = []
  const streamed = endless(10)
  const http = HttpClient.transform(inMemoryClient(server.handler), (response, request) => {
    const body = request.body
    const text = body._tag === "Uint8Array" ? new TextDecoder().decode(body.body) : ""
    posted.push(text)
    const bad = /"name":"(html|json|otherId|declared|streamed)"/.exec(text)?.[1]
    if (bad === undefined) return response
    const id = (JSON.parse(text) as { readonly id: number }).id
    const reply = (init: string | ReadableStream<Uint8Array>, headers: Record<string, string>) =>
      HttpClientResponse.fromWeb(request, new Response(init, { status: 200, headers }))
    switch (bad) {
      case "html":
        return Effect.succeed(reply("<html><body>Welcome</body></html>", { "content-type": "text/html" }))
      case "json":
        return Effect.succeed(reply("{not json", { "content-type": "application/json" }))
      case "otherId":
        return Effect.succeed(
          reply(JSON.stringify({ jsonrpc: "2.0", id: id + 100, result: {} }), { "content-type": "application/json" })
        )
      case "declared":
        return Effect.succeed(
          reply(" ".repeat(LIMIT + 1), { "content-type": "application/json", "content-length": String(LIMIT + 1) })
        )
      default:
        return Effect.succeed(reply(streamed.stream, { "content-type": "application/json" }))
    }
  })
  const transport = yield* StreamableHttpClient.make({ url: URL_MCP, maxEventBytes: LIMIT }).pipe(
    Effect.provideService(HttpClient.HttpClient, http)
  )
  const client = yield* ClientSession.make({ clientInfo, capabilities: {}, supportedVersions: ["2025-11-25"] }).pipe(
    Effect.provideService(Transport.Transport, transport)
  )
  const call = (name: string) => client.peer.request("tools/call", { name, arguments: {} }).pipe(Effect.exit)
  return { call, posted, streamed: streamed.state }
})

const failureText = (exit: Exit.Exit<unknown, unknown>): string => {
  assert.isTrue(Exit.isFailure(exit), "the call failed")
  return Exit.isFailure(exit) ? String(exit.cause) : ""
}

describe("Streamable HTTP client: replies that answer nothing", () => {
  it.effect("a body that is not JSON-RPC fails its request at once, quoting it; nothing is posted back", () =>
    Effect.gen(function* () {
      const { call, posted } = yield* setup
      const html = failureText(yield* call("html"))
      assert.include(
        html,
        `the server's reply is not JSON-RPC (HTTP 200, text/html): "<html><body>Welcome</body></html>"`
      )
      const json = failureText(yield* call("json"))
      assert.include(json, `is not JSON-RPC (HTTP 200, application/json): "{not json"`)
      // Before, each was answered with a parse error POSTed to the server, and the call waited for its deadline.
      assert.isFalse(
        posted.some((text) => text.includes("-32700")),
        posted.join("\n")
      )
      assert.isTrue(Exit.isSuccess(yield* call("echo")), "the session goes on")
    })
  )

  it.effect("a JSON reply without the request's response fails it at once", () =>
    Effect.gen(function* () {
      const { call } = yield* setup
      assert.match(
        failureText(yield* call("otherId")),
        /the server's reply \(HTTP 200\) has no response to request \d+/
      )
      assert.isTrue(Exit.isSuccess(yield* call("echo")))
    })
  )

  it.effect(
    "a body over the bound fails its request: declared, at once; streamed, read no further than the bound",
    () =>
      Effect.gen(function* () {
        const { call, streamed } = yield* setup
        assert.include(failureText(yield* call("declared")), `the server's reply exceeds the limit of ${LIMIT} bytes`)
        assert.include(failureText(yield* call("streamed")), `the server's reply exceeds the limit of ${LIMIT} bytes`)
        // Two chunks of 500 fit; the third passes the bound. Before, all ten were read and held.
        assert.isAtMost(streamed.pulled, 4)
        assert.isTrue(Exit.isSuccess(yield* call("echo")))
      })
  )
})
