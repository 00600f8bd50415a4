/**
 * The official SDK client (`@modelcontextprotocol/sdk` 1.x) and its OAuth
 * provider against the protected everything server (issue 13, acceptance 4):
 * the server runs as a real process with `--auth`, its tokens issued by a
 * real oidc-provider on 127.0.0.1, the login and consent forms filled by the
 * same headless user agent as effect-mcp's own client tests.
 *
 * The SDK's flow: its transport meets the 401, discovers through the RFC 9728
 * document, registers (dynamically, or a pre-registered client), sends the
 * user to the authorization URL (`redirectToAuthorization`) and throws
 * `UnauthorizedError`; the application finishes with `finishAuth(code)` and
 * connects again. A 403 `insufficient_scope` makes the transport authorize
 * again with the challenge's scope (a step-up): 1.x tries its refresh token
 * first, 2.x (`@modelcontextprotocol/client`) logs in for the union of scopes.
 * Every token and secret the run saw is then looked for in the server's
 * stderr and the SDK's errors: none may appear.
 */
import {
  Client as Client2,
  type OAuthClientProvider as OAuthClientProvider2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransport2,
  UnauthorizedError as UnauthorizedError2
} from "@modelcontextprotocol/client"
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Headless from "./headlessUserAgent.ts"
import * as Sdk from "./sdkOAuth.ts"

const publicClient = { id: "sdk-host", redirectUri: Sdk.redirectUri }

describe("the official SDK client and the protected everything server", () => {
  it.live(
    "registers dynamically, logs in with PKCE, calls tools; a refresh renews an expired token",
    () =>
      Effect.gen(function* () {
        const { provider, server } = yield* Sdk.start("notes:read,notes:write", false, { registration: true })
        const sdk = Sdk.provider({ refresh: true })
        const browser = Headless.make(Sdk.redirectUri)
        const errors: Sdk.Errors = []
        const http = Sdk.recordingFetch()
        const { client } = yield* Sdk.connect(server.url, sdk, browser, errors, { fetch: http.fetch })
        assert.strictEqual(browser.visits(), 1)
        // Discovery went through the server's RFC 9728 document (the challenge's URL) to the issuer's metadata,
        // then registration and the code's exchange at the issuer.
        assert.includeMembers(http.seen, [
          `POST ${server.url} 401`,
          `GET ${server.base}/.well-known/oauth-protected-resource/mcp 200`,
          `POST ${provider.issuer}/reg 201`,
          `POST ${provider.issuer}/token 200`
        ])
        assert.isTrue(http.seen.some((line) => line.startsWith(`GET ${provider.issuer}/.well-known/`)))
        assert.isDefined(sdk.information()?.client_id)
        const first = sdk.tokens()
        assert.isDefined(first?.refresh_token)
        assert.includeMembers(first?.scope?.split(" ") ?? [], ["notes:read", "notes:write"])
        const tools = yield* Effect.promise(() => client.listTools())
        assert.isTrue(tools.tools.some((tool) => tool.name === "test_simple_text"))
        const echo = yield* Effect.promise(() => client.callTool({ name: "test_simple_text", arguments: {} }))
        assert.include(Sdk.textOf(echo), "simple text")

        // The server refuses the stored token (401 invalid_token: expired, revoked, another audience's): the SDK
        // refreshes and sends the request again, no login.
        const elsewhere = yield* provider.token(provider.otherResource, "notes:read")
        sdk.secrets.add(elsewhere)
        sdk.setTokens({ ...first!, access_token: elsewhere })
        const again = yield* Effect.promise(() => client.callTool({ name: "test_simple_text", arguments: {} }))
        assert.include(Sdk.textOf(again), "simple text")
        const refreshed = sdk.tokens()
        assert.notStrictEqual(refreshed?.access_token, first?.access_token)
        assert.notStrictEqual(refreshed?.refresh_token, first?.refresh_token)
        assert.strictEqual(browser.visits(), 1)

        // The only errors were the login's UnauthorizedError (thrown, and reported to onerror).
        assert.isNotEmpty(errors)
        for (const error of errors) assert.match(error, /^Error: Unauthorized/)
        Sdk.assertNoSecret(sdk.secrets, [server.stderr(), ...errors])
      }),
    60_000
  )

  it.live(
    "a tool needing a scope: 403, and the SDK's step-up (by refresh: refused again; by a login: served)",
    () =>
      Effect.gen(function* () {
        // The challenge asks for notes:read only; test_simple_text needs notes:write.
        const { server } = yield* Sdk.start("notes:read", true, { publicClient })
        const sdk = Sdk.provider({ clientId: "sdk-host", refresh: true })
        const browser = Headless.make(Sdk.redirectUri)
        const errors: Sdk.Errors = []
        const { client, transport } = yield* Sdk.connect(server.url, sdk, browser, errors)
        assert.deepStrictEqual(sdk.tokens()?.scope?.split(" "), ["notes:read"])
        const image = yield* Effect.promise(() => client.callTool({ name: "test_image_content", arguments: {} }))
        assert.strictEqual((image.content as ReadonlyArray<{ type: string }>)[0]?.type, "image")
        const call = () => client.callTool({ name: "test_simple_text", arguments: {} })

        // SDK 1.x steps up through auth(), which uses a stored refresh token first: a refresh never adds a
        // scope, so the request is refused again with the same challenge, and the transport gives up.
        const byRefresh = yield* Effect.promise(() =>
          call().then(
            () => undefined,
            (error: unknown) => error
          )
        )
        assert.instanceOf(byRefresh, Error)
        assert.include((byRefresh as Error).message, "403 after trying upscoping")
        errors.push(Sdk.describeError(byRefresh))
        assert.strictEqual(browser.visits(), 1)

        // Without a refresh token the step-up is a login with the challenge's scope: UnauthorizedError, the
        // application sends the user to the authorization URL and finishes; the call then succeeds, in the same
        // session (the same principal, with more scopes).
        // (The transport refuses at once any 403 with the challenge it already tried, until a request succeeds.)
        const repeated = yield* Effect.promise(() =>
          call().then(
            () => undefined,
            (error: unknown) => error
          )
        )
        assert.include((repeated as Error).message, "403 after trying upscoping")
        yield* Effect.promise(() => client.ping())
        sdk.setTokens({ ...sdk.tokens()!, refresh_token: undefined })
        const byLogin = yield* Effect.promise(() =>
          call().then(
            () => undefined,
            (error: unknown) => error
          )
        )
        assert.instanceOf(byLogin, UnauthorizedError)
        errors.push(Sdk.describeError(byLogin))
        const asked = sdk.takePending()
        assert.isDefined(asked)
        assert.includeMembers(asked!.searchParams.get("scope")?.split(" ") ?? [], ["notes:read", "notes:write"])
        yield* Effect.promise(() => Sdk.login(browser, asked!, (code) => transport.finishAuth(code)))
        assert.strictEqual(browser.visits(), 2)
        assert.includeMembers(sdk.tokens()?.scope?.split(" ") ?? [], ["notes:read", "notes:write"])
        const sessionBefore = transport.sessionId
        assert.include(Sdk.textOf(yield* Effect.promise(call)), "simple text")
        assert.strictEqual(transport.sessionId, sessionBefore)

        Sdk.assertNoSecret(sdk.secrets, [server.stderr(), ...errors])
      }),
    60_000
  )

  it.live(
    "SDK 2.x: login (finishAuth given the callback's parameters, iss checked), step-up by a login for the union of scopes",
    () =>
      Effect.gen(function* () {
        const { server } = yield* Sdk.start("notes:read", true, { publicClient })
        // With refresh_token among its grant types 2.x adds offline_access to the scope, which this
        // pre-registered client (notes:read notes:write) may not ask for.
        const sdk = Sdk.provider({ clientId: "sdk-host", refresh: false })
        // The 2.x provider interface is 1.x's with optional context arguments; the same object serves.
        const authProvider = sdk.provider as unknown as OAuthClientProvider2
        const browser = Headless.make(Sdk.redirectUri)
        const errors: Sdk.Errors = []
        const open = () => new StreamableHTTPClientTransport2(new URL(server.url), { authProvider })
        const failure = (run: () => Promise<unknown>) =>
          Effect.promise(() =>
            run().then(
              () => undefined,
              (error: unknown) => {
                errors.push(Sdk.describeError(error))
                return error
              }
            )
          )
        let transport = open()
        const client = new Client2({ name: "sdk2-e2e", version: "1.0.0" })
        assert.instanceOf(yield* failure(() => client.connect(transport)), UnauthorizedError2)
        const finish = (_code: string, callback: URLSearchParams) => transport.finishAuth(callback)
        yield* Effect.promise(() => Sdk.login(browser, sdk.takePending(), finish))
        transport = open()
        yield* Effect.acquireRelease(
          Effect.promise(() => client.connect(transport)),
          () => Effect.promise(() => client.close())
        )
        assert.deepStrictEqual(sdk.tokens()?.scope?.split(" "), ["notes:read"])
        const image = yield* Effect.promise(() => client.callTool({ name: "test_image_content", arguments: {} }))
        assert.strictEqual((image.content as ReadonlyArray<{ type: string }>)[0]?.type, "image")

        // 403 insufficient_scope: 2.x asks for the union of its scopes and the challenge's with a new login
        // (a refresh could not add a scope), so the application logs the user in and the call is served.
        const session = transport.sessionId
        assert.instanceOf(yield* failure(() => client.callTool({ name: "test_simple_text" })), UnauthorizedError2)
        const asked = sdk.takePending()
        assert.includeMembers(asked?.searchParams.get("scope")?.split(" ") ?? [], ["notes:read", "notes:write"])
        yield* Effect.promise(() => Sdk.login(browser, asked, finish))
        assert.include(Sdk.textOf(yield* Effect.promise(() => client.callTool({ name: "test_simple_text" }))), "simple")
        assert.strictEqual(transport.sessionId, session)
        assert.strictEqual(browser.visits(), 2)
        Sdk.assertNoSecret(sdk.secrets, [server.stderr(), ...errors])
      }),
    60_000
  )
})
