/**
 * The authentication hook of the HTTP server transports (HttpAuthentication):
 * requests are refused as the hook says before anything else is read, a
 * session belongs to the principal that opened it, the per-client quota
 * counts principals, messages needing scopes the principal lacks get the
 * hook's 403, and handlers see the principal. The hook is written here: a
 * token `owner/scope,scope` stands for a verified principal.
 */
import { assert, describe, it } from "@effect/vitest"
import * as CurrentHttpSession from "@effect-mcp/http/CurrentHttpSession"
import type * as HttpAuthentication from "@effect-mcp/http/HttpAuthentication"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as SseServer from "@effect-mcp/http/SseServer"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { serverInfo } from "../../engine/test/fixtures.ts"
import {
  inMemoryClient,
  initialize,
  openEvents,
  rawPost,
  rawRequest,
  serve,
  serverOptions,
  sseData,
  tools
} from "./StreamableHttpFixtures.ts"

/** Counts the hook's calls, so a test can tell it ran (or did not). */
let calls = 0

const authentication: HttpAuthentication.Authentication = {
  authenticate: (request) =>
    Effect.suspend(() => {
      calls++
      const header = request.headers["authorization"]
      if (header === undefined || !header.startsWith("Bearer ")) {
        return Effect.fail(
          HttpServerResponse.empty({ status: 401, headers: { "www-authenticate": 'Bearer resource_metadata="m"' } })
        )
      }
      const [owner = "", scopes = ""] = header.slice("Bearer ".length).split("/")
      return Effect.succeed({ owner, scopes: scopes.split(",").filter((s) => s !== ""), value: { subject: owner } })
    }),
  insufficientScope: (_authenticated, required) =>
    HttpServerResponse.empty({
      status: 403,
      headers: { "www-authenticate": `Bearer error="insufficient_scope", scope="${required.join(" ")}"` }
    })
}

/** `secret` needs `files:read`, the resource `file:///secret` needs `files:read` and `files:list`. */
const requiredScopes: HttpAuthentication.RequiredScopes = (method, target) =>
  method === "tools/call" && target === "secret"
    ? ["files:read"]
    : method === "resources/read" && target === "file:///secret"
      ? ["files:read", "files:list"]
      : undefined

/** Tools that answer who called them: the principal the session's HTTP view holds. */
const whoami: Session.Handler = (params) =>
  Effect.gen(function* () {
    const name = (params as { readonly name: string }).name
    if (name !== "whoami" && name !== "secret") return yield* tools(params, undefined as never)
    const caller = yield* CurrentHttpSession.authenticated
    return { content: [{ type: "text", text: caller === undefined ? "nobody" : `${caller.owner} ${caller.scopes}` }] }
  })

const handlers = new Map<string, Session.Handler>([
  ["tools/call", whoami],
  ["resources/read", () => Effect.succeed({ contents: [] })]
])

const statelessMeta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {}
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

const call = (id: number, name: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: {} }
})

const textOf = (body: string) => {
  const [message] = body.startsWith("{") ? [JSON.parse(body)] : sseData(body)
  return (message as { result: { content: Array<{ text: string }> } }).result.content[0]!.text
}

/** Opens a session as `token`; returns its id. */
const open = (http: Parameters<typeof rawPost>[0], token: string) =>
  Effect.gen(function* () {
    const init = yield* rawPost(http, initialize(1), bearer(token))
    assert.strictEqual(init.status, 200, init.text)
    const id = init.headers["mcp-session-id"]!
    const notified = yield* rawPost(
      http,
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { ...bearer(token), "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" }
    )
    assert.strictEqual(notified.status, 202)
    return id
  })

const sessionHeaders = (token: string, id: string) => ({
  ...bearer(token),
  "mcp-session-id": id,
  "mcp-protocol-version": "2025-11-25"
})

describe("Streamable HTTP server with an authentication hook", () => {
  it.effect("a request without credentials gets the hook's refusal before its body is read", () =>
    Effect.gen(function* () {
      const { server, http } = yield* serve({ authentication, server: { handlers } })
      const refused = yield* rawPost(http, "not even JSON")
      assert.strictEqual(refused.status, 401)
      assert.strictEqual(refused.headers["www-authenticate"], 'Bearer resource_metadata="m"')
      const get = yield* rawRequest(http, "GET", { accept: "text/event-stream", "mcp-session-id": "x" })
      assert.strictEqual(get.status, 401)
      assert.strictEqual(server.sessionCount(), 0)
    })
  )

  it.effect("a session belongs to its principal: another one naming it gets 404 on POST, GET and DELETE", () =>
    Effect.gen(function* () {
      const { server, http } = yield* serve({ authentication, server: { handlers } })
      const id = yield* open(http, "alice/")
      const post = yield* rawPost(http, call(2, "whoami"), sessionHeaders("bob/", id))
      assert.strictEqual(post.status, 404)
      assert.notInclude(post.text, "alice")
      const get = yield* rawRequest(http, "GET", { ...sessionHeaders("bob/", id), accept: "text/event-stream" })
      assert.strictEqual(get.status, 404)
      const del = yield* rawRequest(http, "DELETE", sessionHeaders("bob/", id))
      assert.strictEqual(del.status, 404)
      assert.strictEqual(server.sessionCount(), 1)
      // Its owner still has it, and its handlers see the owner.
      const own = yield* rawPost(http, call(3, "whoami"), sessionHeaders("alice/", id))
      assert.strictEqual(own.status, 200)
      assert.strictEqual(textOf(own.text), "alice ")
      const ended = yield* rawRequest(http, "DELETE", sessionHeaders("alice/", id))
      assert.strictEqual(ended.status, 200)
      assert.strictEqual(server.sessionCount(), 0)
    })
  )

  it.effect("a message needing a scope the principal lacks gets the hook's 403; a step-up token is served", () =>
    Effect.gen(function* () {
      const { http } = yield* serve({ authentication, requiredScopes, server: { handlers } })
      const id = yield* open(http, "alice/")
      const refused = yield* rawPost(http, call(2, "secret"), sessionHeaders("alice/", id))
      assert.strictEqual(refused.status, 403)
      assert.strictEqual(refused.headers["www-authenticate"], 'Bearer error="insufficient_scope", scope="files:read"')
      const read = { jsonrpc: "2.0", id: 3, method: "resources/read", params: { uri: "file:///secret" } }
      const partly = yield* rawPost(http, read, sessionHeaders("alice/files:read", id))
      assert.strictEqual(partly.status, 403)
      assert.include(partly.headers["www-authenticate"], 'scope="files:read files:list"')
      // The same owner with more scopes: same session, and handlers see the new scopes.
      const stepped = yield* rawPost(http, call(4, "secret"), sessionHeaders("alice/files:read", id))
      assert.strictEqual(stepped.status, 200)
      assert.strictEqual(textOf(stepped.text), "alice files:read")
      // Messages naming nothing that needs scopes pass as before.
      const plain = yield* rawPost(http, call(5, "echo"), sessionHeaders("alice/", id))
      assert.strictEqual(plain.status, 200)
    })
  )

  it.effect("the per-client quota counts principals, not addresses", () =>
    Effect.gen(function* () {
      const { http } = yield* serve({ authentication, maxSessionsPerClient: 1, server: { handlers } })
      yield* open(http, "alice/")
      const second = yield* rawPost(http, initialize(1), bearer("alice/"))
      assert.strictEqual(second.status, 429)
      yield* open(http, "bob/")
    })
  )

  it.effect("a stateless 2026-07-28 request runs as its own principal", () =>
    Effect.gen(function* () {
      const { http } = yield* serve({ authentication, requiredScopes, server: { handlers } })
      const stateless = (token: string, name: string) =>
        rawPost(
          http,
          { ...call(1, name), params: { name, arguments: {}, _meta: statelessMeta } },
          { ...bearer(token), "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": name }
        )
      const served = yield* stateless("carol/x", "whoami")
      assert.strictEqual(served.status, 200, served.text)
      assert.strictEqual(textOf(served.text), "carol x")
      const refused = yield* stateless("carol/x", "secret")
      assert.strictEqual(refused.status, 403)
    })
  )

  it.effect("a CORS preflight is answered without credentials; without a hook nothing is authenticated", () =>
    Effect.gen(function* () {
      const { http } = yield* serve({ authentication, server: { handlers } })
      const preflight = yield* http
        .execute(
          HttpClientRequest.make("OPTIONS")("http://localhost/mcp").pipe(
            HttpClientRequest.setHeaders({ origin: "http://localhost:3000", "access-control-request-method": "POST" })
          )
        )
        .pipe(Effect.orDie)
      assert.strictEqual(preflight.status, 204)
      const before = calls
      const plain = yield* serve({ server: { handlers } })
      const id = yield* open(plain.http, "ignored/")
      const served = yield* rawPost(plain.http, call(2, "whoami"), sessionHeaders("ignored/", id))
      assert.strictEqual(textOf(served.text), "nobody")
      assert.strictEqual(calls, before)
    })
  )
})

describe("legacy HTTP+SSE server with an authentication hook", () => {
  const make = Effect.gen(function* () {
    const server = yield* SseServer.make({
      session: ServerSession.make({ ...serverOptions(handlers), serverInfo }),
      authentication,
      requiredScopes
    })
    const app = yield* HttpRouter.toHttpEffect(
      HttpRouter.addAll([
        HttpRouter.route("GET", "/sse", server.sse),
        HttpRouter.route("POST", "/messages", server.messages)
      ])
    )
    return { server, http: inMemoryClient(app) }
  })

  it.effect("the event stream and every message need credentials; the session is its principal's", () =>
    Effect.gen(function* () {
      const { server, http } = yield* make
      const anonymous = yield* rawRequest(http, "GET", { accept: "text/event-stream" }, "http://localhost/sse")
      assert.strictEqual(anonymous.status, 401)
      assert.strictEqual(server.sessionCount(), 0)
      const stream = yield* rawRequest(
        http,
        "GET",
        { accept: "text/event-stream", ...bearer("alice/") },
        "http://localhost/sse"
      )
      assert.strictEqual(stream.status, 200)
      const events = yield* openEvents(stream)
      const endpoint = (yield* events.next).data
      const url = `http://localhost${endpoint}`
      const post = (token: string | undefined, body: unknown) =>
        rawPost(http, body, token === undefined ? {} : bearer(token), url)
      assert.strictEqual((yield* post(undefined, initialize(1))).status, 401)
      assert.strictEqual((yield* post("bob/", initialize(1))).status, 404)
      assert.strictEqual((yield* post("alice/", initialize(1))).status, 202)
      yield* events.next
      assert.strictEqual((yield* post("alice/", { jsonrpc: "2.0", method: "notifications/initialized" })).status, 202)
      const refused = yield* post("alice/", call(2, "secret"))
      assert.strictEqual(refused.status, 403)
      assert.strictEqual((yield* post("alice/files:read", call(3, "secret"))).status, 202)
      const answer = JSON.parse((yield* events.next).data) as {
        id: number
        result: { content: Array<{ text: string }> }
      }
      assert.strictEqual(answer.id, 3)
      assert.strictEqual(answer.result.content[0]!.text, "alice files:read")
    })
  )
})
