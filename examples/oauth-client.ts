/**
 * A client logging in to a protected MCP server (docs/authorization.md,
 * "Logging in over HTTP"): OAuthHttpClient under the Streamable HTTP
 * transport, NodeLoopbackUserAgent for the browser step, and a step-up when a
 * tool needs a scope the first login did not ask for. Everything runs on
 * 127.0.0.1: the protected server (NodeMcpServer with HttpProtection), a small
 * authorization server written below (metadata, dynamic registration, an
 * authorization endpoint that approves at once, PKCE-checked token endpoint),
 * and the "browser", played by the `open` function.
 *
 *   node --conditions=@effect-mcp/source examples/oauth-client.ts
 *
 * Checks every answer and exits non-zero if one differs.
 */
import * as assert from "node:assert/strict"
import { createHash, randomBytes } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { InvalidToken } from "@effect-mcp/auth/AuthError"
import * as ClientRegistration from "@effect-mcp/auth/ClientRegistration"
import * as HttpProtection from "@effect-mcp/auth/HttpProtection"
import * as OAuthClient from "@effect-mcp/auth/OAuthClient"
import * as OAuthHttpClient from "@effect-mcp/auth/OAuthHttpClient"
import * as TokenStore from "@effect-mcp/auth/TokenStore"
import * as TokenVerifier from "@effect-mcp/auth/TokenVerifier"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as NodeLoopbackUserAgent from "@effect-mcp/platform-node/NodeLoopbackUserAgent"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

// --- An authorization server, just enough for the example (use a real one: Keycloak, Auth0, oidc-provider...).

interface Grant {
  readonly scopes: ReadonlyArray<string>
  readonly challenge: string
  readonly redirectUri: string
}

const authorizationServer = Effect.acquireRelease(
  Effect.callback<{ readonly issuer: string; readonly tokens: Map<string, ReadonlyArray<string>>; close: () => void }>(
    (resume) => {
      const codes = new Map<string, Grant>()
      const tokens = new Map<string, ReadonlyArray<string>>()
      const server = http.createServer((request, response) => {
        const url = new URL(request.url ?? "/", issuer)
        const json = (status: number, body: unknown) =>
          response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
        let body = ""
        request.on("data", (chunk: Buffer) => (body += chunk))
        request.on("end", () => {
          if (url.pathname === "/.well-known/oauth-authorization-server") {
            return json(200, {
              issuer,
              authorization_endpoint: `${issuer}/authorize`,
              token_endpoint: `${issuer}/token`,
              registration_endpoint: `${issuer}/register`,
              response_types_supported: ["code"],
              code_challenge_methods_supported: ["S256"],
              token_endpoint_auth_methods_supported: ["none"],
              authorization_response_iss_parameter_supported: true,
              scopes_supported: ["notes:read", "notes:write"]
            })
          }
          if (url.pathname === "/register") return json(201, { client_id: `client-${randomBytes(4).toString("hex")}` })
          if (url.pathname === "/authorize") {
            // A real server shows a login and a consent page here; this one approves at once.
            const code = randomBytes(16).toString("hex")
            const redirectUri = url.searchParams.get("redirect_uri")!
            codes.set(code, {
              scopes: (url.searchParams.get("scope") ?? "").split(" ").filter((s) => s !== ""),
              challenge: url.searchParams.get("code_challenge")!,
              redirectUri
            })
            const back = new URL(redirectUri)
            back.searchParams.set("code", code)
            back.searchParams.set("state", url.searchParams.get("state")!)
            back.searchParams.set("iss", issuer)
            return response.writeHead(302, { location: back.href }).end()
          }
          if (url.pathname === "/token") {
            const form = new URLSearchParams(body)
            const grant = codes.get(form.get("code") ?? "")
            codes.delete(form.get("code") ?? "")
            const verifier = form.get("code_verifier") ?? ""
            const computed = createHash("sha256").update(verifier).digest("base64url")
            if (grant === undefined || grant.challenge !== computed || grant.redirectUri !== form.get("redirect_uri")) {
              return json(400, { error: "invalid_grant" })
            }
            const token = randomBytes(24).toString("base64url")
            tokens.set(token, grant.scopes)
            return json(200, {
              access_token: token,
              token_type: "Bearer",
              expires_in: 3600,
              scope: grant.scopes.join(" ")
            })
          }
          json(404, { error: "not_found" })
        })
      })
      let issuer = ""
      server.listen(0, "127.0.0.1", () => {
        issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
        resume(Effect.succeed({ issuer, tokens, close: () => server.close() }))
      })
    }
  ),
  (as) => Effect.sync(() => as.close())
)

// --- The protected MCP server: reading notes needs notes:read (every request), writing needs notes:write too.

const notes: Array<string> = ["buy milk"]
const ListNotes = Tool.make("list_notes", {
  description: "Lists the notes",
  input: Schema.Struct({}),
  handler: () => Effect.succeed(notes.join("; "))
})
const WriteNote = Tool.make("write_note", {
  description: "Adds a note",
  input: Schema.Struct({ text: Schema.String }),
  scopes: ["notes:write"],
  handler: ({ text }) => Effect.sync(() => `${notes.push(text)} notes`)
})
const Server = Tool.layer(ListNotes, WriteNote).pipe(
  Layer.provideMerge(McpServer.layer({ name: "notes", version: "1.0.0" }))
)

const protectedServer = (issuer: string, tokens: Map<string, ReadonlyArray<string>>) =>
  Effect.flatMap(
    Layer.build(
      NodeMcpServer.layerHttp(Server, {
        auth: (endpoint) =>
          HttpProtection.make({
            resource: endpoint,
            authorizationServers: [issuer],
            scopesSupported: ["notes:read", "notes:write"],
            requiredScopes: ["notes:read"],
            // The example's tokens are opaque: the verifier looks them up (IntrospectionVerifier would ask the server).
            verifier: TokenVerifier.make((token) => {
              const scopes = tokens.get(token)
              return scopes === undefined
                ? Effect.fail(new InvalidToken({ reason: "Inactive" }))
                : Effect.succeed({
                    subject: "alice",
                    clientId: undefined,
                    issuer,
                    scopes,
                    audience: [endpoint],
                    expiresAt: undefined,
                    claims: {}
                  })
            })
          })
      })
    ),
    (context) => Effect.map(NodeMcpServer.url.pipe(Effect.provideContext(context)), (base) => `${base}/mcp`)
  )

// --- The client: what docs/authorization.md shows, with the browser played here.

const logins: Array<string> = []

/** One GET without keep-alive (a kept connection would hold the process open after the example ends). */
const get = (url: string) =>
  new Promise<{ readonly location: string | undefined; readonly body: string }>((resolve, reject) => {
    http
      .get(url, { agent: false }, (response) => {
        let body = ""
        response.on("data", (chunk: Buffer) => (body += chunk))
        response.on("end", () => resolve({ location: response.headers.location, body }))
      })
      .on("error", reject)
  })

/** The user's browser: visits the authorization URL and follows the redirect back to the loopback listener. */
const browser = (authorizationUrl: URL) =>
  Effect.promise(async () => {
    logins.push(authorizationUrl.searchParams.get("scope") ?? "")
    const answer = await get(authorizationUrl.href)
    const page = await get(answer.location!)
    assert.match(page.body, /Logged in/)
  }).pipe(Effect.forkDetach, Effect.asVoid)

const client = (url: string) =>
  McpClient.layer({ clientInfo: { name: "example-oauth-client", version: "1.0.0" } }).pipe(
    Layer.provide(StreamableHttpClient.layer({ url })),
    Layer.provide(OAuthHttpClient.layer({ serverUrl: url })),
    Layer.provide([
      NodeHttpClient.layer,
      OAuthClient.layer({ allowInsecureRequests: true }).pipe(
        Layer.provide([
          TokenStore.layerMemory,
          ClientRegistration.layer({ allowInsecureRequests: true }),
          NodeLoopbackUserAgent.layer({ open: browser })
        ])
      )
    ])
  )

const textOf = (result: { readonly content: ReadonlyArray<{ readonly type: string }> }) =>
  result.content.map((block) => ("text" in block ? String(block.text) : "")).join("")

const program = Effect.gen(function* () {
  const { issuer, tokens } = yield* authorizationServer
  const url = yield* protectedServer(issuer, tokens)
  yield* Effect.gen(function* () {
    const mcp = yield* McpClient.McpClient
    const listed = textOf(yield* mcp.callTool("list_notes", {}))
    yield* Console.log(`list_notes -> ${listed}`)
    assert.equal(listed, "buy milk")
    // write_note needs notes:write: the server answers 403 insufficient_scope, the client steps up.
    const written = textOf(yield* mcp.callTool("write_note", { text: "call bob" }))
    yield* Console.log(`write_note -> ${written}`)
    assert.equal(written, "2 notes")
  }).pipe(Effect.provide(client(url)))
  yield* Console.log(`logins: ${logins.map((scope) => `[${scope}]`).join(" then ")}`)
  assert.equal(logins.length, 2)
  assert.equal(logins[0], "notes:read")
  assert.deepEqual(logins[1]?.split(" ").sort(), ["notes:read", "notes:write"])
  yield* Console.log("ok: oauth-client")
}).pipe(Effect.scoped)

NodeRuntime.runMain(program)
