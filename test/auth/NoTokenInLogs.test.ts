/**
 * Issue 13's "tokens never appear in logs or error messages", over a whole
 * run: a protected everything server in this process (so its log lines are
 * caught at Debug level), oidc-provider on 127.0.0.1, and two clients going
 * through login, refusal, refresh and step-up: effect-mcp's McpClient (its
 * log lines at Debug level too) and the official SDK client registered as a
 * confidential client (`client_secret_post`, so a client secret travels).
 * Every access, refresh and ID token, authorization code, PKCE verifier and
 * client secret the run saw is then looked for in every log line, every
 * error and everything written to the console: none may appear.
 */
import * as ClientRegistration from "@effect-mcp/auth/ClientRegistration"
import * as HttpProtection from "@effect-mcp/auth/HttpProtection"
import * as JwtVerifier from "@effect-mcp/auth/JwtVerifier"
import * as OAuthClient from "@effect-mcp/auth/OAuthClient"
import * as OAuthHttpClient from "@effect-mcp/auth/OAuthHttpClient"
import * as TokenStore from "@effect-mcp/auth/TokenStore"
import * as UserAgent from "@effect-mcp/auth/UserAgent"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as EverythingServer from "@effect-mcp/everything-server/EverythingServer"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import * as OidcProvider from "../support/OidcProvider.ts"
import * as Headless from "./headlessUserAgent.ts"
import * as Sdk from "./sdkOAuth.ts"

/** A headless user agent that also records the authorization codes it carries back. */
const recordingBrowser = (secrets: Set<string>) => {
  const browser = Headless.make(Sdk.redirectUri)
  const userAgent = UserAgent.make(Sdk.redirectUri, (url) =>
    Effect.tap(browser.userAgent.authorize(url), (redirect) =>
      Effect.sync(() => {
        const code = redirect.searchParams.get("code")
        if (code !== null) secrets.add(code)
      })
    )
  )
  return { userAgent, visits: browser.visits }
}

/** Everything written to the console while `effect` runs. */
const capturingConsole = <A, E, R>(output: Array<string>, effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const saved = { ...console }
      for (const method of ["log", "info", "warn", "error", "debug", "trace"] as const) {
        console[method] = (...args: Array<unknown>) => {
          output.push(args.map((arg) => Sdk.describeError(arg)).join(" "))
        }
      }
      return saved
    }),
    () => effect,
    (saved) => Effect.sync(() => Object.assign(console, saved))
  )

describe("no secret in any log line or error of a protected run", () => {
  it.live(
    "effect-mcp's client and the SDK's: login, refusal, refresh, step-up",
    () => {
      const lines: Array<string> = []
      const consoleOutput: Array<string> = []
      const secrets = new Set<string>()
      const errors: Sdk.Errors = []
      return Effect.gen(function* () {
        const provider = yield* OidcProvider.startWith({
          registration: true,
          publicClient: { id: "mcp-host", redirectUri: Sdk.redirectUri },
          acceptResource: (indicator) => indicator.startsWith("http://127.0.0.1:")
        })
        secrets.add(provider.client.secret).add(provider.introspector.secret)
        // The challenge asks for notes:read; test_simple_text needs notes:write (a step-up).
        const auth = (endpoint: string) => ({
          ...HttpProtection.make({
            resource: endpoint,
            authorizationServers: [provider.issuer],
            scopesSupported: ["notes:read"],
            verifier: JwtVerifier.make({ issuer: provider.issuer, audience: endpoint, allowInsecureRequests: true }),
            authorizationServerMetadata: { allowInsecureRequests: true }
          }),
          requiredScopes: (method: string, target: string) =>
            method === "tools/call" && target === "test_simple_text" ? ["notes:write"] : undefined
        })
        const context = yield* Layer.build(NodeMcpServer.layerHttp(EverythingServer.layer(), { auth }))
        const url = `${yield* Effect.provideContext(NodeMcpServer.url, context)}/mcp`
        const elsewhere = yield* provider.token(provider.otherResource, "notes:read")
        secrets.add(elsewhere)

        // effect-mcp's client: login, an expired token refreshed, another audience's replaced, a step-up.
        const store = TokenStore.makeMemory()
        const remember = Effect.map(store.get(url), (tokens) => {
          if (tokens === undefined) throw new Error("no tokens stored")
          secrets.add(tokens.accessToken)
          if (tokens.refreshToken !== undefined) secrets.add(tokens.refreshToken)
          return tokens
        })
        const browser = recordingBrowser(secrets)
        const client = McpClient.layer({ clientInfo: { name: "no-token-in-logs", version: "1.0.0" } }).pipe(
          Layer.provide(StreamableHttpClient.layer({ url })),
          Layer.provide(OAuthHttpClient.layer({ serverUrl: url })),
          Layer.provide([
            NodeHttpClient.layer,
            OAuthClient.layer({ allowInsecureRequests: true }).pipe(
              Layer.provide([
                Layer.succeed(TokenStore.TokenStore, store),
                ClientRegistration.layer({ preRegistered: { clientId: "mcp-host" }, allowInsecureRequests: true }),
                Layer.succeed(UserAgent.UserAgent, browser.userAgent)
              ])
            )
          ])
        )
        yield* Effect.gen(function* () {
          const mcp = yield* McpClient.McpClient
          yield* mcp.callTool("test_image_content", {})
          const first = yield* remember
          yield* store.set(url, { ...first, expiresAt: Date.now() - 60_000 })
          yield* mcp.callTool("test_image_content", {})
          yield* store.set(url, { ...(yield* remember), accessToken: elsewhere, expiresAt: undefined })
          yield* mcp.callTool("test_image_content", {})
          yield* remember
          yield* mcp.callTool("test_simple_text", {})
          yield* remember
          assert.strictEqual(browser.visits(), 2)
        }).pipe(Effect.provide(client))

        // The SDK's client, confidential: registration, login, a refused token refreshed, a step-up (refused).
        const sdk = Sdk.provider({ refresh: true, authMethod: "client_secret_post" })
        const sdkBrowser = recordingBrowser(secrets)
        const { client: sdkClient, transport } = yield* Sdk.connect(url, sdk, sdkBrowser, errors)
        const information = sdk.information() as { client_secret?: string } | undefined
        assert.isString(information?.client_secret)
        const call = (name: string) =>
          Effect.promise(() =>
            sdkClient.callTool({ name }).then(
              () => undefined,
              (error: unknown) => {
                errors.push(Sdk.describeError(error))
                return error
              }
            )
          )
        sdk.setTokens({ ...sdk.tokens()!, access_token: elsewhere })
        assert.isUndefined(yield* call("test_image_content"))
        assert.include(String(yield* call("test_simple_text")), "upscoping")
        yield* Effect.promise(() => sdkClient.ping())
        sdk.setTokens({ ...sdk.tokens()!, refresh_token: undefined })
        assert.instanceOf(yield* call("test_simple_text"), Error)
        // The SDK registered with the 401 challenge's scope (notes:read), and oidc-provider holds a client to the
        // scope it registered: the step-up login is refused (invalid_scope), an error that quotes nothing either.
        const refused = yield* Effect.promise(() =>
          Sdk.login(sdkBrowser, sdk.takePending(), (code) => transport.finishAuth(code)).then(
            () => "logged in",
            (error: unknown) => Sdk.describeError(error)
          )
        )
        errors.push(refused)
        assert.include(refused, "invalid_scope")
        assert.strictEqual(sdkBrowser.visits(), 2)
        for (const secret of sdk.secrets) secrets.add(secret)

        // Refusals were logged (debug), and nothing anywhere quotes a secret.
        assert.isTrue(lines.some((line) => line.includes("bearer token refused")))
        assert.isAbove(secrets.size, 12)
        Sdk.assertNoSecret(secrets, [...lines, ...errors, ...consoleOutput])
      }).pipe(
        (run) => capturingConsole(consoleOutput, run),
        Effect.provide(
          Logger.layer([
            Logger.make((options) => {
              lines.push(`${String(options.message)} ${Cause.pretty(options.cause)}`)
            })
          ])
        ),
        Effect.provideService(References.MinimumLogLevel, "All")
      )
    },
    90_000
  )
})
