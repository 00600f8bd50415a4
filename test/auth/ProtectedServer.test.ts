/**
 * An MCP server protected with HttpProtection (NodeMcpServer's `auth`
 * option), end to end against a real OpenID provider (oidc-provider on
 * 127.0.0.1) issuing JWT access tokens for the server's endpoint (RFC 8707):
 * the challenges, the metadata documents, tokens refused for each reason,
 * per-tool scopes, sessions bound to their principal, legacy SSE, the
 * principal seen by a tool, and the official SDK client with a static token.
 */
import * as HttpProtection from "@effect-mcp/auth/HttpProtection"
import * as IntrospectionVerifier from "@effect-mcp/auth/IntrospectionVerifier"
import * as JwtVerifier from "@effect-mcp/auth/JwtVerifier"
import * as Principal from "@effect-mcp/auth/Principal"
import type * as TokenVerifier from "@effect-mcp/auth/TokenVerifier"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import {
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams
} from "@modelcontextprotocol/sdk/client/auth.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import * as Schema from "effect/Schema"
import * as OidcProvider from "../support/OidcProvider.ts"
import { initialize, post, postWithAuthorizations } from "./rawMcp.ts"

const other = { id: "other-client", secret: "other-client-secret-0123456789abcdef" }

const WhoAmI = Tool.make("whoami", {
  input: Schema.Struct({}),
  handler: () =>
    Effect.map(Principal.current, (caller) => `${caller.subject} ${caller.clientId} ${caller.scopes.join(",")}`).pipe(
      Effect.orDie
    )
})
const ReadNotes = Tool.make("read_notes", {
  input: Schema.Struct({}),
  scopes: ["notes:read"],
  handler: () => Effect.succeed("the notes")
})
const WriteNotes = Tool.make("write_notes", {
  input: Schema.Struct({}),
  scopes: ["notes:write"],
  handler: () => Effect.succeed("written")
})
const Server = Tool.layer(WhoAmI, ReadNotes, WriteNotes).pipe(
  Layer.provideMerge(McpServer.layer({ name: "protected", version: "1.0.0" }))
)

/**
 * The provider, and the server on a free port protected by it (its endpoint
 * URL is the audience); `skew` moves the verifier's clock (expiry without
 * waiting).
 */
const setup = Effect.gen(function* () {
  const provider = yield* OidcProvider.startWith({
    acceptResource: (indicator) => indicator.startsWith("http://127.0.0.1:"),
    extraClients: [other]
  })
  let skewMs = 0
  const real = yield* Clock.Clock
  const skewed: Clock.Clock = {
    currentTimeMillisUnsafe: () => real.currentTimeMillisUnsafe() + skewMs,
    currentTimeMillis: Effect.sync(() => real.currentTimeMillisUnsafe() + skewMs),
    currentTimeNanosUnsafe: () => real.currentTimeNanosUnsafe() + BigInt(skewMs) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => real.currentTimeNanosUnsafe() + BigInt(skewMs) * 1_000_000n),
    monotonicTimeNanosUnsafe: () => real.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: real.monotonicTimeNanos,
    sleep: (duration) => real.sleep(duration)
  }
  const auth = (endpoint: string) => {
    const jwt = JwtVerifier.make({ issuer: provider.issuer, audience: endpoint, allowInsecureRequests: true })
    const verifier: TokenVerifier.TokenVerifierShape = {
      verify: (token) => Effect.provideService(jwt.verify(token), Clock.Clock, skewed)
    }
    return HttpProtection.make({
      resource: endpoint,
      authorizationServers: [provider.issuer],
      scopesSupported: provider.scopes,
      verifier,
      authorizationServerMetadata: { allowInsecureRequests: true }
    })
  }
  const context = yield* Layer.build(NodeMcpServer.layerHttp(Server, { legacySse: true, auth }))
  const base = yield* Effect.provideContext(NodeMcpServer.url, context)
  const endpoint = `${base}/mcp`
  return {
    provider,
    base,
    endpoint,
    setSkew: (ms: number) => {
      skewMs = ms
    },
    token: (scope?: string, as?: typeof other) => provider.token(endpoint, scope, as)
  }
})

const callTool = (id: number, name: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: {} }
})

const getJson = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url)
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  })

/** Opens a session as `token`; returns its id. */
const openSession = (endpoint: string, token: string) =>
  Effect.gen(function* () {
    const init = yield* post(endpoint, initialize, token)
    assert.strictEqual(init.status, 200, init.text)
    const session = init.session!
    const headers = { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" }
    const initialized = yield* post(endpoint, { jsonrpc: "2.0", method: "notifications/initialized" }, token, headers)
    assert.strictEqual(initialized.status, 202)
    return headers
  })

describe("a protected MCP server (HttpProtection) against oidc-provider", () => {
  it.live("serves its metadata without a token and challenges an anonymous request with it", () =>
    Effect.gen(function* () {
      const { provider, base, endpoint } = yield* setup
      const anonymous = yield* post(endpoint, initialize, undefined)
      assert.strictEqual(anonymous.status, 401)
      const metadataUrl = `${base}/.well-known/oauth-protected-resource/mcp`
      assert.strictEqual(
        anonymous.challenge,
        `Bearer resource_metadata="${metadataUrl}", scope="${provider.scopes.join(" ")}"`
      )
      for (const url of [metadataUrl, `${base}/.well-known/oauth-protected-resource`]) {
        const metadata = yield* getJson(url)
        assert.strictEqual(metadata.status, 200)
        assert.strictEqual(metadata.body.resource, endpoint)
        assert.deepStrictEqual(metadata.body.authorization_servers, [provider.issuer])
        assert.deepStrictEqual(metadata.body.bearer_methods_supported, ["header"])
      }
      // 2025-03-26 clients ask the server's own origin for the authorization server's metadata.
      const asMetadata = yield* getJson(`${base}/.well-known/oauth-authorization-server`)
      assert.strictEqual(asMetadata.status, 200)
      assert.strictEqual(asMetadata.body.issuer, provider.issuer)
      assert.strictEqual(asMetadata.body.token_endpoint, `${provider.issuer}/token`)
    })
  )

  it.live("starts with its issuer down: the authorization server's metadata answers 503, a token 503", () =>
    Effect.gen(function* () {
      // Port 1 on loopback: nothing listens there.
      const issuer = "http://127.0.0.1:1"
      const auth = (endpoint: string) =>
        HttpProtection.make({
          resource: endpoint,
          authorizationServers: [issuer],
          verifier: JwtVerifier.make({ issuer, audience: endpoint, allowInsecureRequests: true }),
          authorizationServerMetadata: { allowInsecureRequests: true }
        })
      const context = yield* Layer.build(NodeMcpServer.layerHttp(Server, { auth }))
      const base = yield* Effect.provideContext(NodeMcpServer.url, context)
      const metadata = yield* Effect.promise(() => fetch(`${base}${HttpProtection.authorizationServerMetadataPath}`))
      assert.strictEqual(metadata.status, 503)
      const resourceMetadata = yield* Effect.promise(() => fetch(`${base}/.well-known/oauth-protected-resource/mcp`))
      assert.strictEqual(resourceMetadata.status, 200)
      const jws = [{ alg: "RS256", kid: "k" }, { sub: "x" }]
        .map((part) => Buffer.from(JSON.stringify(part)).toString("base64url"))
        .join(".")
      assert.strictEqual((yield* post(`${base}/mcp`, initialize, `${jws}.c2ln`)).status, 503)
    })
  )

  it.live(
    "refuses a garbage token, another audience's, an expired one, one in the query string and two headers",
    () => {
      const lines: Array<string> = []
      return Effect.gen(function* () {
        const { provider, endpoint, setSkew, token } = yield* setup
        const garbage = yield* post(endpoint, initialize, "not-a-jwt")
        assert.strictEqual(garbage.status, 401)
        assert.include(garbage.challenge, 'error="invalid_token"')
        assert.include(garbage.challenge, "resource_metadata=")
        const elsewhere = yield* provider.token(provider.otherResource)
        const wrongAudience = yield* post(endpoint, initialize, elsewhere)
        assert.strictEqual(wrongAudience.status, 401)
        assert.include(wrongAudience.challenge, 'error="invalid_token"')
        const good = yield* token()
        const inQuery = yield* post(`${endpoint}?access_token=${good}`, initialize, good)
        assert.strictEqual(inQuery.status, 400)
        assert.include(inQuery.challenge, 'error="invalid_request"')
        // Two Authorization headers (each a valid token) are refused, not served with the first.
        const twice = yield* postWithAuthorizations(endpoint, initialize, [`Bearer ${good}`, `Bearer ${good}`])
        assert.strictEqual(twice.status, 400)
        assert.include(twice.challenge, 'error="invalid_request"')
        // An hour later by the verifier's clock, the 5-minute token has expired.
        setSkew(60 * 60 * 1000)
        const expired = yield* post(endpoint, initialize, good)
        assert.strictEqual(expired.status, 401)
        assert.include(expired.challenge, "expired")
        setSkew(0)
        assert.strictEqual((yield* post(endpoint, initialize, good)).status, 200)
        // No answer and no log line (debug included) quotes a token.
        assert.isAbove(lines.length, 0, "the refusals are logged")
        for (const text of [
          ...[garbage, wrongAudience, inQuery, expired].map((a) => `${a.challenge} ${a.text}`),
          ...lines
        ]) {
          assert.notInclude(text, good)
          assert.notInclude(text, elsewhere)
        }
      }).pipe(
        Effect.provide(
          Logger.layer([
            Logger.make((options) => lines.push(`${String(options.message)} ${Cause.pretty(options.cause)}`))
          ])
        ),
        Effect.provideService(References.MinimumLogLevel, "All")
      )
    }
  )

  it.live(
    "a tool's scope is checked before dispatch: 403 insufficient_scope naming it, then a step-up token works",
    () =>
      Effect.gen(function* () {
        const { endpoint, token } = yield* setup
        const readOnly = yield* token("notes:read")
        const headers = yield* openSession(endpoint, readOnly)
        assert.strictEqual((yield* post(endpoint, callTool(2, "read_notes"), readOnly, headers)).status, 200)
        const refused = yield* post(endpoint, callTool(3, "write_notes"), readOnly, headers)
        assert.strictEqual(refused.status, 403)
        assert.include(refused.challenge, 'error="insufficient_scope"')
        assert.include(refused.challenge, 'scope="notes:write notes:read"')
        // The same client with both scopes: same principal, so the same session serves it.
        const both = yield* token("notes:read notes:write")
        const written = yield* post(endpoint, callTool(4, "write_notes"), both, headers)
        assert.strictEqual(written.status, 200)
        assert.include(written.text, "written")
        const whoami = yield* post(endpoint, callTool(5, "whoami"), both, headers)
        assert.include(whoami.text, "test-client test-client notes:read,notes:write")
      })
  )

  it.live("a session id replayed with another principal's token is refused and reveals nothing", () =>
    Effect.gen(function* () {
      const { endpoint, token } = yield* setup
      const mine = yield* token()
      const theirs = yield* token(undefined, other)
      const headers = yield* openSession(endpoint, mine)
      const replayed = yield* post(endpoint, callTool(2, "whoami"), theirs, headers)
      const unknown = yield* post(endpoint, callTool(2, "whoami"), theirs, {
        ...headers,
        "mcp-session-id": "0".repeat(headers["mcp-session-id"].length)
      })
      assert.strictEqual(replayed.status, 404)
      // Exactly what a session that does not exist gets.
      assert.strictEqual(replayed.status, unknown.status)
      assert.strictEqual(replayed.text, unknown.text)
      const stream = yield* Effect.promise(() =>
        fetch(endpoint, { headers: { ...headers, accept: "text/event-stream", authorization: `Bearer ${theirs}` } })
      )
      assert.strictEqual(stream.status, 404)
      const deleted = yield* Effect.promise(() =>
        fetch(endpoint, { method: "DELETE", headers: { ...headers, authorization: `Bearer ${theirs}` } })
      )
      assert.strictEqual(deleted.status, 404)
      // Still the owner's.
      const own = yield* post(endpoint, callTool(3, "whoami"), mine, headers)
      assert.strictEqual(own.status, 200)
      assert.include(own.text, "test-client")
    })
  )

  it.live("the legacy HTTP+SSE endpoints are protected the same way", () =>
    Effect.gen(function* () {
      const { base, token } = yield* setup
      const anonymous = yield* Effect.promise(() => fetch(`${base}/sse`, { headers: { accept: "text/event-stream" } }))
      assert.strictEqual(anonymous.status, 401)
      assert.include(anonymous.headers.get("www-authenticate"), "resource_metadata=")
      const good = yield* token("notes:read")
      const controller = new AbortController()
      const stream = yield* Effect.promise(() =>
        fetch(`${base}/sse`, {
          headers: { accept: "text/event-stream", authorization: `Bearer ${good}` },
          signal: controller.signal
        })
      )
      assert.strictEqual(stream.status, 200)
      const reader = stream.body!.getReader()
      const first = new TextDecoder().decode((yield* Effect.promise(() => reader.read())).value)
      const endpoint = /data: (\S+)/.exec(first)![1]!
      const messages = `${base}${endpoint}`
      assert.strictEqual((yield* post(messages, initialize, undefined)).status, 401)
      assert.strictEqual((yield* post(messages, initialize, yield* token(undefined, other))).status, 404)
      assert.strictEqual((yield* post(messages, initialize, good)).status, 202)
      assert.strictEqual((yield* post(messages, callTool(2, "write_notes"), good)).status, 403)
      controller.abort()
    })
  )

  it.live("opaque tokens are verified by introspection the same way", () =>
    Effect.gen(function* () {
      const provider = yield* OidcProvider.start
      // The opaque resource's identifier stands for this server (its tokens name it), whatever its port.
      const resource = provider.opaqueResource
      const protection = HttpProtection.make({
        resource,
        authorizationServers: [provider.issuer],
        verifier: IntrospectionVerifier.make({
          issuer: provider.issuer,
          audience: resource,
          clientId: provider.introspector.id,
          clientSecret: provider.introspector.secret,
          allowInsecureRequests: true
        })
      })
      const context = yield* Layer.build(NodeMcpServer.layerHttp(Server, { auth: protection }))
      const endpoint = `${yield* Effect.provideContext(NodeMcpServer.url, context)}/mcp`
      const opaque = yield* provider.token(resource, "notes:read")
      assert.notInclude(opaque, ".", "an opaque token, not a JWT")
      const headers = yield* openSession(endpoint, opaque)
      const whoami = yield* post(endpoint, callTool(2, "whoami"), opaque, headers)
      assert.include(whoami.text, "test-client test-client notes:read")
      const refused = yield* post(endpoint, callTool(3, "write_notes"), opaque, headers)
      assert.strictEqual(refused.status, 403)
      const jwt = yield* provider.token(provider.resource)
      assert.strictEqual((yield* post(endpoint, initialize, jwt)).status, 401)
    })
  )

  it.live("the official SDK client reads the challenge and works with a static bearer token", () =>
    Effect.gen(function* () {
      const { base, endpoint, provider, token } = yield* setup
      const anonymous = yield* Effect.promise(() => fetch(endpoint, { method: "POST" }))
      const params = extractWWWAuthenticateParams(anonymous)
      assert.strictEqual(params.resourceMetadataUrl?.href, `${base}/.well-known/oauth-protected-resource/mcp`)
      // The SDK's own discovery reads the metadata document as served.
      const discovered = yield* Effect.promise(() => discoverOAuthProtectedResourceMetadata(endpoint))
      assert.strictEqual(discovered.resource, endpoint)
      assert.deepStrictEqual(discovered.authorization_servers, [provider.issuer])
      const readOnly = yield* token("notes:read")
      const client = new Client({ name: "sdk", version: "1.0.0" })
      const transport = new StreamableHTTPClientTransport(new URL(endpoint), {
        requestInit: { headers: { authorization: `Bearer ${readOnly}` } }
      })
      yield* Effect.acquireRelease(
        Effect.promise(() => client.connect(transport)),
        () => Effect.promise(() => client.close())
      )
      const whoami = yield* Effect.promise(() => client.callTool({ name: "whoami", arguments: {} }))
      assert.deepStrictEqual(whoami.content, [{ type: "text", text: "test-client test-client notes:read" }])
      const refused = yield* Effect.promise(() =>
        client.callTool({ name: "write_notes", arguments: {} }).then(
          () => undefined,
          (error: { readonly code?: unknown }) => error.code
        )
      )
      assert.strictEqual(refused, 403)
    })
  )
})
