/**
 * End to end with a real OpenID provider (issue 13, acceptance 2): the
 * everything server runs as a real process with `--auth`, its tokens issued by
 * oidc-provider on 127.0.0.1; effect-mcp's McpClient logs in through
 * OAuthHttpClient under the Streamable HTTP transport (authorization code +
 * PKCE, the provider's login and consent forms filled headlessly), calls
 * tools, and never notices an expired token being refreshed, a token for
 * another audience being refused (401) and replaced, or a tool needing a scope
 * it lacked (403, step-up). No token appears in the server's output, the
 * client's log lines or its errors.
 */
import * as ClientRegistration from "@effect-mcp/auth/ClientRegistration"
import * as OAuthClient from "@effect-mcp/auth/OAuthClient"
import * as OAuthHttpClient from "@effect-mcp/auth/OAuthHttpClient"
import * as TokenStore from "@effect-mcp/auth/TokenStore"
import * as UserAgent from "@effect-mcp/auth/UserAgent"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import * as OidcProvider from "../support/OidcProvider.ts"
import * as ServerProcess from "../support/ServerProcess.ts"
import * as Headless from "./headlessUserAgent.ts"

const redirectUri = "http://127.0.0.1:1/callback"

const textOf = (result: { readonly content: ReadonlyArray<{ readonly type: string }> }) =>
  result.content.map((block) => ("text" in block ? String(block.text) : "")).join("")

describe("effect-mcp's client and the protected everything server", () => {
  it.live(
    "logs in, refreshes an expired token, replaces another audience's, steps up for a tool's scope",
    () =>
      Effect.gen(function* () {
        const provider = yield* OidcProvider.startWith({
          publicClient: { id: "mcp-host", redirectUri },
          acceptResource: (indicator) => indicator.startsWith("http://127.0.0.1:")
        })
        const server = yield* ServerProcess.spawnHttp([
          "--auth",
          "--auth-issuer",
          provider.issuer,
          "--auth-scopes",
          "notes:read,notes:write",
          "--auth-tool-scope",
          "test_simple_text=notes:write"
        ])
        const browser = Headless.make(redirectUri)
        const store = TokenStore.makeMemory()
        // What reached the server and what it answered, as the transport's HTTP client saw it.
        const statuses: Array<number> = []
        const recording = Layer.effect(
          HttpClient.HttpClient,
          Effect.map(Effect.service(HttpClient.HttpClient), (client) =>
            client.pipe(HttpClient.tap((response) => Effect.sync(() => statuses.push(response.status))))
          )
        ).pipe(Layer.provide(NodeHttpClient.layer))
        const auth = OAuthClient.layer({ allowInsecureRequests: true }).pipe(
          Layer.provide([
            Layer.succeed(TokenStore.TokenStore, store),
            ClientRegistration.layer({ preRegistered: { clientId: "mcp-host" }, allowInsecureRequests: true }),
            Layer.succeed(UserAgent.UserAgent, browser.userAgent)
          ])
        )
        const client = McpClient.layer({ clientInfo: { name: "e2e-host", version: "1.0.0" } }).pipe(
          Layer.provide(StreamableHttpClient.layer({ url: server.url })),
          Layer.provide(OAuthHttpClient.layer({ serverUrl: server.url })),
          Layer.provide([recording, auth])
        )
        const lines: Array<string> = []
        const logger = Logger.layer([
          Logger.make((options) => {
            lines.push(`${String(options.message)} ${Cause.pretty(options.cause)}`)
          })
        ])
        const seenTokens: Array<string> = []
        const stored = Effect.map(store.get(server.url), (tokens) => {
          if (tokens === undefined) throw new Error("no tokens stored")
          seenTokens.push(tokens.accessToken)
          return tokens
        })

        yield* Effect.gen(function* () {
          const mcp = yield* McpClient.McpClient
          // The first request was refused (401) and the user logged in once.
          assert.strictEqual(statuses[0], 401)
          assert.strictEqual(browser.visits(), 1)
          const first = yield* stored
          assert.includeMembers([...(first.scope ?? [])], ["notes:read", "notes:write"])
          assert.isDefined(first.refreshToken)
          assert.strictEqual((yield* mcp.callTool("test_image_content", {})).content[0]?.type, "image")

          // The token expires: the next request goes with a refreshed one, no login.
          yield* store.set(server.url, { ...first, expiresAt: Date.now() - 60_000 })
          assert.strictEqual((yield* mcp.callTool("test_image_content", {})).content[0]?.type, "image")
          const refreshed = yield* stored
          assert.notStrictEqual(refreshed.accessToken, first.accessToken)
          assert.strictEqual(browser.visits(), 1)

          // A token for another audience is refused with 401; the refresh token replaces it, no login.
          const elsewhere = yield* provider.token(provider.otherResource, "notes:read")
          yield* store.set(server.url, { ...refreshed, accessToken: elsewhere, expiresAt: undefined })
          statuses.length = 0
          assert.strictEqual((yield* mcp.callTool("test_image_content", {})).content[0]?.type, "image")
          assert.strictEqual(statuses[0], 401)
          assert.notStrictEqual((yield* stored).accessToken, elsewhere)
          assert.strictEqual(browser.visits(), 1)

          // test_simple_text needs notes:write, which the tokens lost: 403, a step-up login, then served.
          yield* store.set(server.url, {
            ...(yield* stored),
            accessToken: yield* provider.token(server.url, "notes:read"),
            refreshToken: undefined,
            expiresAt: undefined
          })
          statuses.length = 0
          assert.include(textOf(yield* mcp.callTool("test_simple_text", {})), "simple text")
          assert.strictEqual(statuses[0], 403)
          assert.strictEqual(browser.visits(), 2)
          assert.includeMembers([...((yield* stored).scope ?? [])], ["notes:read", "notes:write"])
        }).pipe(
          Effect.provide(client),
          Effect.provide(logger),
          Effect.provideService(References.MinimumLogLevel, "All")
        )

        for (const token of seenTokens) {
          assert.notInclude(server.stderr(), token)
          for (const line of lines) assert.notInclude(line, token)
        }
      }),
    60_000
  )
})
