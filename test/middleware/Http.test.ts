/**
 * Server middleware behind a real Streamable HTTP endpoint that authenticates
 * requests: the principal the transport verified reaches the middleware, so
 * `hideUnauthorized` shows each caller the tools its scopes cover and
 * `rateLimit` counts the sessions of one principal together. The client sends
 * its token through `HttpHeaders`. The hook is written here: a token
 * `owner/scope,scope` stands for a verified principal.
 */
import * as HttpHeaders from "@effect-mcp/client/HttpHeaders"
import * as McpClient from "@effect-mcp/client/McpClient"
import type * as HttpAuthentication from "@effect-mcp/http/HttpAuthentication"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Middleware from "@effect-mcp/server/Middleware"
import * as Tool from "@effect-mcp/server/Tool"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

const authentication: HttpAuthentication.Authentication = {
  authenticate: (request) => {
    const header = request.headers["authorization"]
    if (header === undefined || !header.startsWith("Bearer "))
      return Effect.fail(HttpServerResponse.empty({ status: 401 }))
    const [owner = "", scopes = ""] = header.slice("Bearer ".length).split("/")
    return Effect.succeed({ owner, scopes: scopes.split(",").filter((s) => s !== ""), value: undefined })
  },
  insufficientScope: () => HttpServerResponse.empty({ status: 403 })
}

const Echo = Tool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})
const Admin = Tool.make("admin", { input: Schema.Struct({}), scopes: ["admin"], handler: () => Effect.succeed("ok") })

const Server = Layer.mergeAll(
  Tool.layer(Echo, Admin),
  Middleware.layer(Middleware.hideUnauthorized, Middleware.rateLimit({ capacity: 2, refillEvery: "1 hour" }))
).pipe(Layer.provideMerge(McpServer.layer({ name: "guarded", version: "1.0.0" })))

describe("Middleware over authenticated Streamable HTTP", () => {
  it.live("hideUnauthorized and rateLimit see the principal the transport verified", () =>
    Effect.gen(function* () {
      const server = yield* Layer.build(
        NodeMcpServer.layerHttp(Server, { host: "127.0.0.1", auth: { authentication } })
      )
      const endpoint = `${yield* Effect.provideContext(NodeMcpServer.url, server)}/mcp`
      const connect = (token: string) =>
        Effect.map(
          Layer.build(
            McpClient.layer({ clientInfo: { name: "c", version: "1.0.0" } }).pipe(
              Layer.provide(StreamableHttpClient.layer({ url: endpoint })),
              Layer.provide(HttpHeaders.layer({ authorization: `Bearer ${token}` })),
              Layer.provide(NodeHttpClient.layer)
            )
          ),
          (context) => Context.get(context, McpClient.McpClient)
        )
      const names = (client: McpClient.McpClientShape) =>
        Effect.map(client.listTools(), (page) => page.tools.map((t) => t.name).sort())
      const alice = yield* connect("alice/admin")
      const aliceAgain = yield* connect("alice/admin")
      const bob = yield* connect("bob/")
      assert.deepStrictEqual(yield* names(alice), ["admin", "echo"])
      assert.deepStrictEqual(yield* names(bob), ["echo"])
      // Alice's second session draws from the same bucket: her third request is refused.
      yield* aliceAgain.callTool("echo", { text: "x" })
      const refused = yield* Effect.flip(aliceAgain.callTool("echo", { text: "x" }))
      assert.strictEqual((refused as { readonly code?: number }).code, Middleware.Code.RateLimited)
      yield* bob.callTool("echo", { text: "x" })
    }).pipe(Effect.scoped)
  )
})
