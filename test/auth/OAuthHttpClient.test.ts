/**
 * OAuthHttpClient under the real transports: an MCP server (NodeMcpServer,
 * Streamable HTTP and legacy SSE) behind a small node:http gate that demands a
 * bearer token, and an OAuthClient double that hands out numbered tokens. The
 * gate records every request, so the tests see that each one the transports
 * make (POSTs, the GET stream, the DELETE, the legacy GET and message POSTs)
 * carried a token, that a 401 costs one login and one retry, that step-ups are
 * bounded, that a large (streamed) body is sent whole again on the retry, and
 * that no token reaches another origin, an error or a log line.
 */
import type { AddressInfo } from "node:net"
import type * as OAuthClient from "@effect-mcp/auth/OAuthClient"
import { AuthorizationFailed } from "@effect-mcp/auth/OAuthClientError"
import * as OAuthHttpClient from "@effect-mcp/auth/OAuthHttpClient"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as SseClient from "@effect-mcp/http/SseClient"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as Transport from "@effect-mcp/engine/Transport"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Schema from "effect/Schema"
import { inspect } from "node:util"
import * as Scope from "effect/Scope"
import * as ServerProcess from "../support/ServerProcess.ts"
import { listen } from "../support/Listen.ts"
import { forward } from "../support/ForwardToServer.ts"

const clientInfo = { name: "oauth-http-client-test", version: "1.0.0" }

const Echo = Tool.make("echo", {
  description: "Echoes its text",
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed({ content: [{ type: "text" as const, text: `echo:${text}` }] })
})
const Server = Tool.layer(Echo).pipe(Layer.provideMerge(McpServer.layer({ name: "echo", version: "1.0.0" })))

interface Seen {
  readonly method: string
  readonly path: string
  readonly authorization: string | undefined
}

/**
 * The MCP server behind a gate: a request without one of `valid` tokens gets
 * 401 with a challenge; with `stepUp` set, a tools/call gets 403
 * insufficient_scope unless its token is in `scoped`.
 */
const gatedServer = Effect.gen(function* () {
  const context = yield* Layer.build(NodeMcpServer.layerHttp(Server, { legacySse: true }))
  const target = new URL(yield* NodeMcpServer.url.pipe(Effect.provideContext(context)))
  const state = {
    valid: new Set<string>(),
    scoped: new Set<string>(),
    stepUp: false,
    seen: [] as Array<Seen>,
    bodies: [] as Array<number>,
    /** Fired after each request is added to `seen`. */
    arrived: ServerProcess.makeChanges()
  }
  const server = yield* listen((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = Buffer.concat(chunks)
      const authorization = request.headers.authorization
      state.seen.push({ method: request.method ?? "", path: request.url ?? "", authorization })
      state.arrived.notify()
      if (request.method === "POST") state.bodies.push(body.length)
      const token = authorization?.startsWith("Bearer ") === true ? authorization.slice(7) : undefined
      const metadata = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/oauth-protected-resource`
      if (request.url === "/drop" && token !== undefined && state.valid.has(token)) {
        // The connection breaks after a token was sent: the client's error holds that request.
        request.socket.destroy()
        return
      }
      if (token === undefined || !state.valid.has(token)) {
        response.writeHead(401, { "www-authenticate": `Bearer resource_metadata="${metadata}"` }).end()
        return
      }
      if (state.stepUp && body.includes('"tools/call"') && !state.scoped.has(token)) {
        response
          .writeHead(403, {
            "www-authenticate": `Bearer error="insufficient_scope", scope="notes:write", resource_metadata="${metadata}"`
          })
          .end()
        return
      }
      forward(target, request, response, body)
    })
  })
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { base, state }
})

/** An OAuthClient double: `authorize` issues token-1, token-2... (made valid at the gate by `issue`). */
const oauthDouble = (issue: (token: string) => void, fail = false) => {
  let current: string | undefined
  const calls: Array<{ readonly challenge: string | undefined; readonly refused: string | undefined }> = []
  const shape: OAuthClient.OAuthClientShape = {
    accessToken: () => Effect.succeed(Option.fromUndefinedOr(current)),
    authorize: (_server, wwwAuthenticate, refused) =>
      Effect.suspend(() => {
        calls.push({ challenge: typeof wwwAuthenticate === "string" ? wwwAuthenticate : undefined, refused })
        if (fail) {
          return Effect.fail(new AuthorizationFailed({ step: "user agent", detail: "the user closed the window" }))
        }
        current = `token-${calls.length}`
        issue(current)
        return Effect.succeed(current)
      })
  }
  return { shape, calls }
}

const undici = Effect.map(Layer.build(NodeHttpClient.layer), (context) => Context.get(context, HttpClient.HttpClient))

// A stateful revision: a session id, the GET stream and the DELETE at close.
const session = (transport: Transport.TransportShape) =>
  ClientSession.make({ clientInfo, capabilities: {}, supportedVersions: ["2025-11-25"] }).pipe(
    Effect.provideService(Transport.Transport, transport)
  )

const echo = (transport: Transport.TransportShape, text: string) =>
  Effect.flatMap(session(transport), (s) => s.request("tools/call", { name: "echo", arguments: { text } })).pipe(
    Effect.map((result) => (result as { readonly content: ReadonlyArray<{ readonly text: string }> }).content[0]?.text)
  )

const bearer = (seen: Seen) => seen.authorization?.startsWith("Bearer token-") === true

describe("OAuthHttpClient", () => {
  it.live(
    "Streamable HTTP: the first 401 costs one login; every POST, the GET stream and the DELETE carry the token",
    () =>
      Effect.gen(function* () {
        const { base, state } = yield* gatedServer
        const oauth = oauthDouble((token) => state.valid.add(token))
        const client = OAuthHttpClient.wrap(yield* undici, oauth.shape)
        const scope = yield* Scope.make()
        const transport = yield* StreamableHttpClient.make({ url: `${base}/mcp` }).pipe(
          Effect.provideService(HttpClient.HttpClient, client),
          Scope.provide(scope)
        )
        assert.strictEqual(yield* echo(transport, "hi"), "echo:hi")
        // The GET stream opens once the session is initialized, in the background.
        yield* ServerProcess.waitFor(
          () => state.seen.map((s) => s.method).join(" "),
          /\bGET\b/,
          undefined,
          state.arrived
        )
        yield* Scope.close(scope, Exit.void)
        assert.strictEqual(oauth.calls.length, 1)
        assert.include(oauth.calls[0]!.challenge, "resource_metadata=")
        assert.strictEqual(oauth.calls[0]!.refused, undefined)
        // The one refused request is the first, sent before any token existed.
        const [first, ...rest] = state.seen
        assert.strictEqual(first?.authorization, undefined)
        assert.isTrue(rest.every(bearer), JSON.stringify(rest))
        const methods = new Set(rest.map((s) => s.method))
        assert.deepStrictEqual([...methods].sort(), ["DELETE", "GET", "POST"])
      }).pipe(Effect.scoped),
    20_000
  )

  it.live(
    "legacy SSE: the event stream's GET and the message POSTs carry the event stream's token",
    () =>
      Effect.gen(function* () {
        const { base, state } = yield* gatedServer
        const oauth = oauthDouble((token) => state.valid.add(token))
        const client = OAuthHttpClient.wrap(yield* undici, oauth.shape)
        const transport = yield* SseClient.make({ url: `${base}/sse` }).pipe(
          Effect.provideService(HttpClient.HttpClient, client)
        )
        assert.strictEqual(yield* echo(transport, "legacy"), "echo:legacy")
        assert.strictEqual(oauth.calls.length, 1)
        const authorized = state.seen.slice(1)
        assert.isTrue(authorized.every(bearer), JSON.stringify(authorized))
        assert.isTrue(authorized.some((s) => s.method === "GET" && s.path === "/sse"))
        assert.isTrue(authorized.some((s) => s.method === "POST" && s.path.startsWith("/messages")))
      }).pipe(Effect.scoped),
    20_000
  )

  it.live(
    "a refused large body (streamed) is sent whole again with the new token",
    () =>
      Effect.gen(function* () {
        const { base, state } = yield* gatedServer
        const oauth = oauthDouble((token) => state.valid.add(token))
        const client = OAuthHttpClient.wrap(yield* undici, oauth.shape)
        const transport = yield* StreamableHttpClient.make({ url: `${base}/mcp` }).pipe(
          Effect.provideService(HttpClient.HttpClient, client)
        )
        const s = yield* session(transport)
        // The session started with a token; the server forgets it, so the large call is refused first.
        state.valid.clear()
        const text = "x".repeat(200_000)
        const result = yield* s.request("tools/call", { name: "echo", arguments: { text } })
        assert.strictEqual(
          (result as { readonly content: ReadonlyArray<{ readonly text: string }> }).content[0]?.text,
          `echo:${text}`
        )
        // (The GET stream, refused too when it reconnects, may log in on its own.)
        assert.isTrue(oauth.calls.slice(1).some((c) => c.refused === "token-1"))
        const large = state.bodies.filter((n) => n > text.length)
        // Refused once, then sent again, byte for byte the same length.
        assert.strictEqual(large.length, 2)
        assert.strictEqual(large[0], large[1])
      }).pipe(Effect.scoped),
    20_000
  )

  it.live(
    "a 403 insufficient_scope steps up and retries; a server that never accepts gets maxStepUps logins, then its 403",
    () =>
      Effect.gen(function* () {
        const { base, state } = yield* gatedServer
        state.stepUp = true
        let grantScope = false
        const oauth = oauthDouble((token) => {
          state.valid.add(token)
          if (grantScope) state.scoped.add(token)
        })
        const client = OAuthHttpClient.wrap(yield* undici, oauth.shape, { maxStepUps: 2 })
        const transport = yield* StreamableHttpClient.make({ url: `${base}/mcp` }).pipe(
          Effect.provideService(HttpClient.HttpClient, client)
        )
        const s = yield* session(transport)
        const before = oauth.calls.length
        const refused = yield* Effect.exit(s.request("tools/call", { name: "echo", arguments: { text: "no" } }))
        assert.isTrue(Exit.isFailure(refused))
        assert.include(Cause.pretty((refused as Exit.Failure<unknown, unknown>).cause), "403")
        assert.strictEqual(oauth.calls.length - before, 2)
        assert.isTrue(oauth.calls.slice(before).every((c) => c.challenge?.includes("insufficient_scope") === true))
        // Now the authorization server grants the scope: one step-up, and the call goes through.
        grantScope = true
        const granted = yield* s.request("tools/call", { name: "echo", arguments: { text: "yes" } })
        assert.deepStrictEqual((granted as { readonly content: unknown }).content, [{ type: "text", text: "echo:yes" }])
        assert.strictEqual(oauth.calls.length - before, 3)
      }).pipe(Effect.scoped),
    20_000
  )

  it.live(
    "no token for another origin; a failed login fails the request with the OAuth step, and no token is logged",
    () => {
      const lines: Array<string> = []
      const logger = Logger.layer([
        Logger.make((options) => {
          lines.push(`${String(options.message)} ${Cause.pretty(options.cause)}`)
        })
      ])
      return Effect.gen(function* () {
        const { base, state } = yield* gatedServer
        const other = yield* gatedServer
        const oauth = oauthDouble((token) => state.valid.add(token))
        const client = OAuthHttpClient.wrap(yield* undici, oauth.shape, { serverUrl: `${base}/mcp` })
        const transport = yield* StreamableHttpClient.make({ url: `${base}/mcp` }).pipe(
          Effect.provideService(HttpClient.HttpClient, client)
        )
        assert.strictEqual(yield* echo(transport, "hi"), "echo:hi")
        const elsewhere = yield* client.get(`${other.base}/mcp`)
        assert.strictEqual(elsewhere.status, 401)
        assert.deepStrictEqual(
          other.state.seen.map((s) => s.authorization),
          [undefined]
        )

        const failing = oauthDouble(() => {}, true)
        const refusing = OAuthHttpClient.wrap(yield* undici, failing.shape)
        const failed = yield* Effect.flip(
          StreamableHttpClient.make({ url: `${other.base}/mcp` }).pipe(
            Effect.provideService(HttpClient.HttpClient, refusing),
            Effect.flatMap((t) => session(t))
          )
        )
        assert.include(String(failed), "user agent")
        // A transport failure of a request that carried the token: the error keeps the request, never its token.
        const dropped = yield* Effect.flip(client.post(`${base}/drop`))
        const described = [String(dropped), JSON.stringify(dropped), inspect(dropped, { depth: 10 })]
        assert.include(described[0], "/drop")
        lines.push(...described, Cause.pretty(Cause.fail(dropped)))
        for (const text of [...lines, String(failed), Cause.pretty(Cause.fail(failed))]) {
          assert.notInclude(text, "token-1")
        }
      }).pipe(Effect.provideService(References.MinimumLogLevel, "Debug"), Effect.provide(logger), Effect.scoped)
    },
    20_000
  )
})
