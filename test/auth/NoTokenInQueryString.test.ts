/**
 * 2025-03-26 authorization: "Access tokens MUST NOT be included in the URI
 * query string"; the client sends them in `Authorization: Bearer`. An
 * McpClient of that revision logs in through OAuthClient and OAuthHttpClient
 * under the Streamable HTTP transport, against one scripted origin on node:http
 * at 127.0.0.1 that is both the authorization server (the 2025-03-26 shape:
 * its metadata at the origin) and a gate in front of a real MCP server. The
 * first token expires at once, so the client also refreshes. Every URL the
 * client requested or handed to the user agent is recorded: none carries a
 * token issued (access or refresh), while every request to the MCP endpoint
 * after the first 401 (POSTs, the GET stream, the DELETE) carries one in its
 * `Authorization` header.
 */
import type { AddressInfo } from "node:net"
import * as ClientRegistration from "@effect-mcp/auth/ClientRegistration"
import * as OAuthClient from "@effect-mcp/auth/OAuthClient"
import * as OAuthHttpClient from "@effect-mcp/auth/OAuthHttpClient"
import * as TokenStore from "@effect-mcp/auth/TokenStore"
import * as UserAgent from "@effect-mcp/auth/UserAgent"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { listen } from "../support/Listen.ts"
import { forward } from "../support/ForwardToServer.ts"

const redirectUri = "http://127.0.0.1:9/callback"

const Echo = Tool.make("echo", {
  description: "Echoes its text",
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed({ content: [{ type: "text" as const, text: `echo:${text}` }] })
})
const Server = Tool.layer(Echo).pipe(Layer.provideMerge(McpServer.layer({ name: "echo", version: "1.0.0" })))

interface Seen {
  readonly method: string
  /** Path and query, as requested. */
  readonly url: string
  readonly authorization: string | undefined
  readonly form: URLSearchParams
}

/**
 * The authorization server and the gated MCP endpoint at one origin. Access
 * tokens are valid once issued; the first expires at once (so the next
 * request refreshes it). `getStream` is done when an authorized GET reaches the endpoint.
 */
const origin = Effect.gen(function* () {
  const context = yield* Layer.build(NodeMcpServer.layerHttp(Server))
  const target = new URL(yield* NodeMcpServer.url.pipe(Effect.provideContext(context)))
  const seen: Array<Seen> = []
  const issued: Array<string> = []
  const valid = new Set<string>()
  const getStream = yield* Deferred.make<void>()
  const issue = (expiresIn: number) => {
    const n = issued.length / 2 + 1
    const tokens = { access: `secret-access-${n}`, refresh: `secret-refresh-${n}` }
    issued.push(tokens.access, tokens.refresh)
    valid.add(tokens.access)
    return { access_token: tokens.access, refresh_token: tokens.refresh, token_type: "Bearer", expires_in: expiresIn }
  }
  const server = yield* listen((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = Buffer.concat(chunks)
      const url = new URL(request.url ?? "/", base)
      const authorization = request.headers.authorization
      const isForm = request.headers["content-type"]?.includes("x-www-form-urlencoded") === true
      seen.push({
        method: request.method ?? "",
        url: request.url ?? "",
        authorization,
        form: new URLSearchParams(isForm ? body.toString() : "")
      })
      const json = (status: number, value: unknown) =>
        response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value))
      switch (url.pathname) {
        case "/.well-known/oauth-authorization-server":
          return json(200, {
            issuer: base,
            authorization_endpoint: `${base}/authorize`,
            token_endpoint: `${base}/token`,
            registration_endpoint: `${base}/register`,
            response_types_supported: ["code"],
            code_challenge_methods_supported: ["S256"]
          })
        case "/register":
          return json(201, { client_id: "registered-client" })
        case "/token":
          // The code's token expires at once: the client's next request refreshes it.
          return json(200, issue(new URLSearchParams(body.toString()).get("grant_type") === "refresh_token" ? 3600 : 1))
        case "/mcp":
          break
        default:
          return json(404, {})
      }
      const token = authorization?.startsWith("Bearer ") === true ? authorization.slice(7) : undefined
      if (token === undefined || !valid.has(token)) {
        // A 2025-03-26 server's challenge names no metadata: the client looks at the origin.
        response.writeHead(401, { "www-authenticate": "Bearer" }).end()
        return
      }
      if (request.method === "GET") Deferred.doneUnsafe(getStream, Exit.void)
      forward(target, request, response, body)
    })
  })
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { base, seen, issued, getStream }
})

describe("2025-03-26: the client never puts a token in a query string", () => {
  it.live("logging in, refreshing, and every request of the session: tokens travel in Authorization only", () =>
    Effect.gen(function* () {
      const { base, seen, issued, getStream } = yield* origin
      const mcp = `${base}/mcp`
      const visited: Array<string> = []
      const auth = OAuthClient.layer({ allowInsecureRequests: true }).pipe(
        Layer.provide([
          TokenStore.layerMemory,
          ClientRegistration.layer({ allowInsecureRequests: true }),
          UserAgent.layer(redirectUri, (authorizationUrl) =>
            Effect.sync(() => {
              visited.push(authorizationUrl.href)
              const redirect = new URL(redirectUri)
              redirect.searchParams.set("code", "the-code")
              redirect.searchParams.set("state", authorizationUrl.searchParams.get("state") ?? "")
              redirect.searchParams.set("iss", base)
              return redirect
            })
          )
        ])
      )
      const clientLayer = McpClient.layer({
        clientInfo: { name: "no-token-in-query", version: "1.0.0" },
        supportedVersions: ["2025-03-26"]
      }).pipe(
        Layer.provide(StreamableHttpClient.layer({ url: mcp })),
        Layer.provide(OAuthHttpClient.layer({ serverUrl: mcp })),
        Layer.provide([NodeHttpClient.layer, auth])
      )
      const scope = yield* Scope.make()
      const client = yield* Layer.build(clientLayer).pipe(
        Effect.map((context) => Context.get(context, McpClient.McpClient)),
        Scope.provide(scope)
      )
      assert.strictEqual(client.revision, "2025-03-26")
      // The GET stream opens in the background once the session is initialized.
      yield* Deferred.await(getStream)
      const result = yield* client.callTool("echo", { text: "hi" })
      assert.deepStrictEqual(result.content, [{ type: "text", text: "echo:hi" }])
      // Closing the client sends the DELETE.
      yield* Scope.close(scope, Exit.void)

      // A login and a refresh happened: tokens were issued, the refresh token sent in a form body.
      assert.deepStrictEqual(issued, ["secret-access-1", "secret-refresh-1", "secret-access-2", "secret-refresh-2"])
      const refresh = seen.find((r) => r.url.startsWith("/token") && r.form.get("grant_type") === "refresh_token")
      assert.strictEqual(refresh?.form.get("refresh_token"), "secret-refresh-1")

      // No URL carries a token, or a parameter meant for one.
      const urls = [...seen.map((r) => r.url), ...visited]
      for (const url of urls) {
        for (const token of issued) assert.notInclude(url, token, url)
        const params = [...new URL(url, base).searchParams.keys()]
        assert.isFalse(
          params.some((name) => /token/i.test(name)),
          url
        )
      }

      // Every request to the endpoint but the first (refused, no token yet) carries one in Authorization.
      const [first, ...rest] = seen.filter((r) => new URL(r.url, base).pathname === "/mcp")
      assert.strictEqual(first?.authorization, undefined)
      for (const r of rest) {
        assert.isTrue(
          issued.some((token) => r.authorization === `Bearer ${token}`),
          `${r.method} ${r.authorization}`
        )
      }
      assert.deepStrictEqual([...new Set(rest.map((r) => r.method))].sort(), ["DELETE", "GET", "POST"])
      assert.isTrue(rest.some((r) => r.authorization === "Bearer secret-access-2"))
    }).pipe(Effect.scoped)
  )
})
