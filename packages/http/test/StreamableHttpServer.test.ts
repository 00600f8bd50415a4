import { assert, describe, it } from "@effect/vitest"
import * as EventStore from "@effect-mcp/http/EventStore"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as Transport from "@effect-mcp/engine/Transport"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import { TestClock } from "effect/testing"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import {
  inMemoryClient,
  initialize,
  openEvents,
  openSession,
  rawPost,
  rawRequest,
  readAll,
  serve,
  serverOptions,
  sseData,
  tools
} from "./StreamableHttpFixtures.ts"
import { forkIdle, runIdle } from "../../engine/test/fixtures.ts"
import * as Wire from "../src/internal/httpWire.ts"

const call = (id: number, name: string, text = "") => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: { text } }
})

const session = (id: string, version = "2025-11-25") => ({ "mcp-session-id": id, "mcp-protocol-version": version })

describe("Streamable HTTP server: requests", () => {
  it.effect("initialize opens a session with a visible-ASCII id; notifications get 202", () =>
    Effect.gen(function* () {
      const { http, server } = yield* serve()
      const init = yield* rawPost(http, initialize(1))
      assert.strictEqual(init.status, 200)
      assert.strictEqual(init.headers["content-type"], "text/event-stream")
      const id = init.headers["mcp-session-id"]!
      assert.match(id, /^[\x21-\x7e]{32}$/)
      assert.strictEqual(
        (sseData(init.text)[0] as { result: { protocolVersion: string } }).result.protocolVersion,
        "2025-11-25"
      )
      const notified = yield* rawPost(http, { jsonrpc: "2.0", method: "notifications/initialized" }, session(id))
      assert.strictEqual(notified.status, 202)
      assert.strictEqual(notified.text, "")
      assert.strictEqual(server.sessionCount(), 1)
      const other = yield* openSession(http)
      assert.notStrictEqual(other, id)
    })
  )

  it.effect("JSON-response mode answers with application/json", () =>
    Effect.gen(function* () {
      const { http } = yield* serve({ responseMode: "json" })
      const id = yield* openSession(http)
      const reply = yield* rawPost(http, call(2, "echo", "x"), session(id))
      assert.strictEqual(reply.status, 200)
      assert.strictEqual(reply.headers["content-type"], "application/json")
      assert.deepStrictEqual(JSON.parse(reply.text), {
        jsonrpc: "2.0",
        id: 2,
        result: { content: [{ type: "text", text: "echo:x" }] }
      })
    })
  )

  it.effect("unknown session -> 404, missing session id -> 400, bad protocol version -> 400", () =>
    Effect.gen(function* () {
      const { http } = yield* serve()
      const id = yield* openSession(http)
      assert.strictEqual((yield* rawPost(http, call(2, "echo"), session("no-such-session"))).status, 404)
      assert.strictEqual((yield* rawPost(http, call(2, "echo"))).status, 400)
      const badVersion = yield* rawPost(http, call(2, "echo"), session(id, "1999-01-01"))
      assert.strictEqual(badVersion.status, 400)
      assert.strictEqual(JSON.parse(badVersion.text).error.code, -32022)
      assert.strictEqual(
        (yield* rawRequest(http, "GET", { accept: "text/event-stream", "mcp-session-id": "nope" })).status,
        404
      )
      assert.strictEqual((yield* rawRequest(http, "DELETE", { "mcp-session-id": "nope" })).status, 404)
    })
  )

  it.effect("refuses a wrong Accept (406), Content-Type (415), method (405) and invalid JSON (400, -32700)", () =>
    Effect.gen(function* () {
      const { http } = yield* serve()
      assert.strictEqual((yield* rawPost(http, initialize(1), { accept: "application/json" })).status, 406)
      assert.strictEqual((yield* rawPost(http, initialize(1), { "content-type": "text/plain" })).status, 415)
      const put = yield* rawRequest(http, "PUT", {})
      assert.strictEqual(put.status, 405)
      assert.strictEqual(put.headers["allow"], "GET, POST, DELETE")
      const parse = yield* rawPost(http, "{not json")
      assert.strictEqual(parse.status, 400)
      assert.strictEqual(JSON.parse(parse.text).error.code, -32700)
    })
  )

  it.effect("Host and Origin are checked against DNS rebinding", () =>
    Effect.gen(function* () {
      const { http } = yield* serve()
      const evilHost = yield* rawPost(http, initialize(1), { host: "evil.example.com" })
      assert.strictEqual(evilHost.status, 403)
      const evilOrigin = yield* rawPost(http, initialize(1), { origin: "http://evil.example.com" })
      assert.strictEqual(evilOrigin.status, 403)
      const evilGet = yield* rawRequest(http, "GET", { host: "evil.example.com:8080", accept: "text/event-stream" })
      assert.strictEqual(evilGet.status, 403)
      assert.strictEqual((yield* rawPost(http, initialize(1), { host: "127.0.0.1:3000" })).status, 200)
      assert.strictEqual((yield* rawPost(http, initialize(1), { host: "[::1]:3000" })).status, 200)
      const local = yield* rawPost(http, initialize(1), { host: "localhost:3000", origin: "http://localhost:5173" })
      assert.strictEqual(local.status, 200)
    })
  )

  it.effect("rebinding protection can allow other hosts or be turned off", () =>
    Effect.gen(function* () {
      const allowed = yield* serve({ allowedHosts: ["mcp.example.com"] })
      assert.strictEqual((yield* rawPost(allowed.http, initialize(1), { host: "mcp.example.com" })).status, 200)
      assert.strictEqual((yield* rawPost(allowed.http, initialize(1), { host: "localhost" })).status, 403)
      const open = yield* serve({ dnsRebindingProtection: false })
      assert.strictEqual((yield* rawPost(open.http, initialize(1), { host: "evil.example.com" })).status, 200)
    })
  )

  it.effect("a body over the limit gets 413 and the server keeps serving", () =>
    Effect.gen(function* () {
      const { http } = yield* serve({ maxBodyBytes: 1024 })
      const id = yield* openSession(http)
      const big = yield* rawPost(http, call(2, "echo", "x".repeat(5000)), session(id))
      assert.strictEqual(big.status, 413)
      const after = yield* rawPost(http, call(3, "echo", "ok"), session(id))
      assert.strictEqual(after.status, 200)
      assert.deepStrictEqual(sseData(after.text), [
        { jsonrpc: "2.0", id: 3, result: { content: [{ type: "text", text: "echo:ok" }] } }
      ])
    })
  )

  it.effect("batches work on 2025-03-26 and are refused on later revisions", () =>
    Effect.gen(function* () {
      const { http } = yield* serve({ responseMode: "json" })
      const old = yield* openSession(http, "2025-03-26")
      const batch = yield* rawPost(
        http,
        [
          call(2, "echo", "a"),
          { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "x", progress: 1 } },
          call(3, "echo", "b")
        ],
        session(old, "2025-03-26")
      )
      assert.strictEqual(batch.status, 200)
      const replies = (JSON.parse(batch.text) as Array<{ id: number }>).sort((a, b) => a.id - b.id)
      assert.deepStrictEqual(
        replies.map((r) => r.id),
        [2, 3]
      )
      const recent = yield* openSession(http, "2025-11-25")
      const refused = yield* rawPost(http, [call(2, "echo")], session(recent))
      assert.strictEqual(refused.status, 400)
      assert.strictEqual((yield* rawPost(http, [initialize(9, "2025-03-26")])).status, 400)
    })
  )

  it.effect("a batch's entries that are no JSON-RPC message are answered beside the others, which are served", () =>
    Effect.gen(function* () {
      // SSE replies by default: a batch with a bad entry is answered in one JSON body all the same.
      const { http } = yield* serve()
      const old = yield* openSession(http, "2025-03-26")
      const mixed = yield* rawPost(
        http,
        [call(2, "echo", "a"), { foo: "bar" }, call(3, "echo", "b")],
        session(old, "2025-03-26")
      )
      assert.strictEqual(mixed.status, 200)
      assert.match(mixed.headers["content-type"] ?? "", /^application\/json/)
      const replies = JSON.parse(mixed.text) as Array<{ id: number | null; error?: { code: number } }>
      assert.deepStrictEqual(
        replies.map((r) => r.id),
        [2, 3, null]
      )
      assert.strictEqual(replies[2]!.error!.code, -32600)
      // Only a bad entry and a notification: the error is the answer.
      const noRequest = yield* rawPost(
        http,
        [{ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "x", progress: 1 } }, 7],
        session(old, "2025-03-26")
      )
      assert.strictEqual(noRequest.status, 200)
      assert.deepStrictEqual(
        (JSON.parse(noRequest.text) as Array<{ error: { code: number } }>).map((r) => r.error.code),
        [-32600]
      )
      // Nothing to serve: 400, an array for a batch and one object for a single message.
      const none = yield* rawPost(http, [1, 2], session(old, "2025-03-26"))
      assert.strictEqual(none.status, 400)
      assert.strictEqual((JSON.parse(none.text) as Array<unknown>).length, 2)
      const single = yield* rawPost(http, { jsonrpc: "2.0", id: 5 }, session(old, "2025-03-26"))
      assert.strictEqual(single.status, 400)
      assert.strictEqual(JSON.parse(single.text).error.code, -32600)
    })
  )

  it.effect("an initialize answered with an error makes no session and holds no slot of the limits", () =>
    Effect.gen(function* () {
      for (const responseMode of ["sse", "json"] as const) {
        const { http } = yield* serve({ maxSessionsPerClient: 1, responseMode })
        const bad = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25" } }
        for (let i = 0; i < 3; i++) {
          const refused = yield* rawPost(http, bad)
          const answer = responseMode === "json" ? JSON.parse(refused.text) : sseData(refused.text)[0]
          assert.strictEqual((answer as { error: { code: number } }).error.code, -32602, responseMode)
          assert.isUndefined(refused.headers["mcp-session-id"], responseMode)
        }
        // The client's one slot is still free.
        const id = yield* openSession(http)
        assert.strictEqual((yield* rawPost(http, call(2, "echo", "ok"), session(id))).status, 200)
      }
    })
  )

  it.effect("GET and DELETE with an MCP-Protocol-Version the server does not speak get 400 and leave the session", () =>
    Effect.gen(function* () {
      const { http } = yield* serve()
      const id = yield* openSession(http)
      const get = yield* rawRequest(http, "GET", { ...session(id, "banana"), accept: "text/event-stream" })
      assert.strictEqual(get.status, 400)
      assert.strictEqual(JSON.parse(yield* get.text).error.code, -32022)
      const del = yield* rawRequest(http, "DELETE", session(id, "banana"))
      assert.strictEqual(del.status, 400)
      assert.strictEqual(JSON.parse(yield* del.text).error.code, -32022)
      // Still open: a call is served, then the DELETE with the session's revision ends it.
      assert.strictEqual((yield* rawPost(http, call(2, "echo", "ok"), session(id))).status, 200)
      assert.strictEqual((yield* rawRequest(http, "DELETE", session(id))).status, 200)
    })
  )

  it.effect("JSON replies: a cancelled request's reply ends blank and its id may be used again", () =>
    Effect.gen(function* () {
      const { http } = yield* serve({ responseMode: "json" })
      const id = yield* openSession(http)
      // Returns once the request is in flight (its handler waiting).
      const slow = yield* forkIdle(rawPost(http, call(7, "never"), session(id)))
      const cancel = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7 } }
      assert.strictEqual((yield* rawPost(http, cancel, session(id))).status, 202)
      const reply = yield* Fiber.join(slow)
      assert.strictEqual(reply.status, 200)
      assert.strictEqual(reply.text.trim(), "")
      const again = yield* rawPost(http, call(7, "echo", "again"), session(id))
      assert.strictEqual(again.status, 200)
      assert.strictEqual((JSON.parse(again.text) as { id: number }).id, 7)
    })
  )

  it.effect("a request id already in flight in the session is refused", () =>
    Effect.gen(function* () {
      const { http } = yield* serve()
      const id = yield* openSession(http)
      // Returns once the first request is in flight (its handler waiting).
      const slow = yield* forkIdle(rawPost(http, call(2, "never"), session(id)))
      const duplicate = yield* rawPost(http, call(2, "echo"), session(id))
      assert.strictEqual(duplicate.status, 400)
      yield* Fiber.interrupt(slow)
    })
  )

  it.effect("notifications/cancelled ends the stream that waited for the cancelled request", () =>
    Effect.gen(function* () {
      const { http } = yield* serve()
      const id = yield* openSession(http)
      // Returns once the request is in flight (its handler waiting).
      const pending = yield* forkIdle(rawPost(http, call(2, "never"), session(id)))
      const cancel = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2, reason: "user" } }
      assert.strictEqual((yield* rawPost(http, cancel, session(id))).status, 202)
      const reply = yield* Fiber.join(pending)
      assert.deepStrictEqual(sseData(reply.text), [])
    })
  )

  it.effect("at the session limit a new initialize gets 503", () =>
    Effect.gen(function* () {
      const { http } = yield* serve({ maxSessions: 2 })
      yield* openSession(http)
      yield* openSession(http)
      assert.strictEqual((yield* rawPost(http, initialize(1))).status, 503)
    })
  )
})

describe("Streamable HTTP server: 2026-07-28 headers", () => {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {}
  }
  const statelessCall = (name: string) => ({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name, arguments: {}, _meta: meta }
  })
  const headers = (method: string, name?: string) => ({
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
    ...(name === undefined ? {} : { "mcp-name": name })
  })

  it.effect("matching headers are served without a session", () =>
    Effect.gen(function* () {
      const { http, server } = yield* serve({ responseMode: "json" })
      const reply = yield* rawPost(http, statelessCall("echo"), headers("tools/call", "echo"))
      assert.strictEqual(reply.status, 200)
      assert.isUndefined(reply.headers["mcp-session-id"])
      assert.deepStrictEqual(JSON.parse(reply.text).result.content, [{ type: "text", text: "echo:" }])
      assert.strictEqual(server.sessionCount(), 0)
    })
  )

  it.effect("Mcp-Method / Mcp-Name / MCP-Protocol-Version that disagree with the body get 400 and -32020", () =>
    Effect.gen(function* () {
      const { http } = yield* serve({ responseMode: "json" })
      const cases = [
        headers("tools/list", "echo"),
        headers("tools/call", "other"),
        headers("tools/call"),
        { "mcp-method": "tools/call", "mcp-name": "echo" },
        { ...headers("tools/call", "echo"), "mcp-protocol-version": "2025-11-25" }
      ]
      for (const h of cases) {
        const reply = yield* rawPost(http, statelessCall("echo"), h)
        assert.strictEqual(reply.status, 400, JSON.stringify(h))
        assert.strictEqual(JSON.parse(reply.text).error.code, -32020, JSON.stringify(h))
        assert.strictEqual(JSON.parse(reply.text).id, 1)
      }
    })
  )

  it.effect("non-ASCII names travel base64-encoded", () =>
    Effect.gen(function* () {
      const { http } = yield* serve({ responseMode: "json" })
      const encoded = `=?base64?${btoa(String.fromCharCode(...new TextEncoder().encode("échø")))}?=`
      const reply = yield* rawPost(http, statelessCall("échø"), headers("tools/call", encoded))
      assert.strictEqual(reply.status, 200)
    })
  )

  it.effect("a request without _meta, or without its protocolVersion, gets 400 and -32602 with its id", () =>
    Effect.gen(function* () {
      const { http } = yield* serve()
      const bodies = [
        { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "echo", arguments: {} } },
        {
          jsonrpc: "2.0",
          id: 7,
          method: "tools/call",
          params: { name: "echo", arguments: {}, _meta: { "io.modelcontextprotocol/clientCapabilities": {} } }
        }
      ]
      for (const body of bodies) {
        const reply = yield* rawPost(http, body, headers("tools/call", "echo"))
        assert.strictEqual(reply.status, 400)
        assert.strictEqual(reply.headers["content-type"], "application/json")
        const error = JSON.parse(reply.text)
        assert.strictEqual(error.error.code, -32602)
        assert.strictEqual(error.id, 7)
      }
    })
  )

  it.effect("an unsupported MCP-Protocol-Version is refused with the request's id", () =>
    Effect.gen(function* () {
      const { http } = yield* serve({ supportedVersions: ["2025-11-25"] })
      const reply = yield* rawPost(http, statelessCall("echo"), headers("tools/call", "echo"))
      assert.strictEqual(reply.status, 400)
      const body = JSON.parse(reply.text)
      assert.strictEqual(body.error.code, -32022)
      assert.strictEqual(body.id, 1)
    })
  )

  const statelessRequest = (id: number, method: string) => ({ jsonrpc: "2.0", id, method, params: { _meta: meta } })

  it.effect("unknown and removed methods get 404 with a JSON -32601, in either response mode", () =>
    Effect.gen(function* () {
      for (const responseMode of ["sse", "json"] as const) {
        const { http } = yield* serve({ responseMode })
        for (const method of ["unknown/method", "ping", "initialize", "logging/setLevel"]) {
          const reply = yield* rawPost(http, statelessRequest(9, method), headers(method))
          assert.strictEqual(reply.status, 404, `${responseMode} ${method}`)
          assert.strictEqual(reply.headers["content-type"], "application/json")
          const body = JSON.parse(reply.text)
          assert.strictEqual(body.error.code, -32601, method)
          assert.strictEqual(body.id, 9)
        }
      }
    })
  )

  // A handler failing with -32021 (MissingRequiredClientCapability), after progress when asked.
  const demanding: Session.Handler = (params) =>
    Effect.gen(function* () {
      const p = params as { readonly name: string }
      if (p.name === "progress-then-fail") {
        const current = yield* CurrentRequest.CurrentRequest
        yield* current.progress({ progress: 1, total: 2 })
      }
      if (p.name === "echo") return { content: [{ type: "text", text: "ok" }] }
      return yield* Effect.fail(
        new McpError.MissingRequiredClientCapability({ data: { requiredCapabilities: { sampling: {} } } })
      )
    })
  const demandingServer = (responseMode: "sse" | "json") =>
    serve({ responseMode, server: { handlers: new Map([["tools/call", demanding]]) } })

  it.effect("an error raised in a handler holds the status back: -32021 is a JSON 400", () =>
    Effect.gen(function* () {
      for (const responseMode of ["sse", "json"] as const) {
        const { http } = yield* demandingServer(responseMode)
        const reply = yield* rawPost(http, statelessCall("needs-sampling"), headers("tools/call", "needs-sampling"))
        assert.strictEqual(reply.status, 400, responseMode)
        assert.strictEqual(reply.headers["content-type"], "application/json")
        const body = JSON.parse(reply.text)
        assert.strictEqual(body.error.code, -32021)
        assert.deepStrictEqual(body.error.data, { requiredCapabilities: { sampling: {} } })
        assert.strictEqual(body.id, 1)
      }
    })
  )

  it.effect("a reply whose first message is progress or a result streams with 200 as before", () =>
    Effect.gen(function* () {
      const { http } = yield* demandingServer("sse")
      const withProgress = yield* rawPost(
        http,
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "progress-then-fail", arguments: {}, _meta: { ...meta, progressToken: "p" } }
        },
        headers("tools/call", "progress-then-fail")
      )
      assert.strictEqual(withProgress.status, 200)
      assert.strictEqual(withProgress.headers["content-type"], "text/event-stream")
      const events = sseData(withProgress.text) as ReadonlyArray<{ method?: string; error?: { code: number } }>
      assert.deepStrictEqual(
        events.map((e) => e.method ?? e.error?.code),
        ["notifications/progress", -32021]
      )
      const ok = yield* rawPost(http, statelessCall("echo"), headers("tools/call", "echo"))
      assert.strictEqual(ok.status, 200)
      assert.strictEqual(ok.headers["content-type"], "text/event-stream")
      assert.deepStrictEqual((sseData(ok.text)[0] as { result: { content: unknown } }).result.content, [
        { type: "text", text: "ok" }
      ])
    })
  )

  it.effect("the error status table is data: the codes the revision names, nothing else", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(
        [-32600, -32601, -32602, -32020, -32021, -32022, -32603, -32002].map((code) =>
          Wire.errorStatusOf({ jsonrpc: "2.0", id: 1, error: { code, message: "x" } })
        ),
        [400, 404, 400, 400, 400, 400, undefined, undefined]
      )
      assert.isUndefined(Wire.errorStatusOf({ jsonrpc: "2.0", id: 1, result: {} }))
    })
  )

  it.effect("GET is not offered on the stateless revision", () =>
    Effect.gen(function* () {
      const { http } = yield* serve()
      const get = yield* rawRequest(http, "GET", { accept: "text/event-stream", "mcp-protocol-version": "2026-07-28" })
      assert.strictEqual(get.status, 405)
    })
  )
})

describe("Streamable HTTP server: Mcp-Param headers (SEP-2243)", () => {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {}
  }
  const callWith = (args: Record<string, unknown>) => ({
    jsonrpc: "2.0",
    id: 3,
    method: "tools/call",
    params: { name: "echo", arguments: args, _meta: meta }
  })
  const headers = (params: Record<string, string>) => ({
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "echo",
    ...params
  })
  const declared = StreamableHttpServer.paramHeadersOf({
    type: "object",
    properties: {
      text: { type: "string", "x-mcp-header": "Region" },
      n: { type: "integer", "x-mcp-header": "Count" },
      other: { type: "string" }
    }
  })
  const withParams = () =>
    serve({ responseMode: "json", paramHeaders: (tool) => (tool === "echo" ? declared : undefined) })
  const hello = `=?base64?${btoa("Hello")}?=`

  it.effect("paramHeadersOf reads x-mcp-header from the top-level properties", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(declared, [
        { header: "Region", argument: "text" },
        { header: "Count", argument: "n" }
      ])
      assert.deepStrictEqual(StreamableHttpServer.paramHeadersOf({ type: "object" }), [])
    })
  )

  it.effect("headers that mirror the arguments are accepted: plain, base64, any name case, literal look-alikes", () =>
    Effect.gen(function* () {
      const { http } = yield* withParams()
      const cases: ReadonlyArray<readonly [Record<string, unknown>, Record<string, string>]> = [
        [
          { text: "eu-west", n: 3 },
          { "mcp-param-region": "eu-west", "mcp-param-count": "3" }
        ],
        [{ text: "Hello" }, { "Mcp-Param-Region": hello }],
        [{ text: btoa("Hello") }, { "mcp-param-region": btoa("Hello") }],
        [{ text: `=?base64?${btoa("Hello")}` }, { "mcp-param-region": `=?base64?${btoa("Hello")}` }],
        [{ other: "x" }, {}],
        // Numbers compare as numbers.
        [{ n: 42 }, { "mcp-param-count": "42.0" }],
        [{ n: 42 }, { "mcp-param-count": "042" }],
        [{ n: 42 }, { "mcp-param-count": "4.2e1" }]
      ]
      for (const [args, params] of cases) {
        const reply = yield* rawPost(http, callWith(args), headers(params))
        assert.strictEqual(reply.status, 200, JSON.stringify(params))
        assert.isDefined(JSON.parse(reply.text).result, JSON.stringify(params))
      }
    })
  )

  it.effect("missing, malformed or disagreeing Mcp-Param headers get 400 and -32020", () =>
    Effect.gen(function* () {
      const { http } = yield* withParams()
      const cases: ReadonlyArray<readonly [Record<string, unknown>, Record<string, string>]> = [
        [{ text: "Hello" }, {}],
        [{ text: "Hello" }, { "mcp-param-region": "=?base64?SGVsbG8?=" }],
        [{ text: "Hello" }, { "mcp-param-region": "=?base64?SGVs!!!bG8=?=" }],
        [{ text: "Hello" }, { "mcp-param-region": "Goodbye" }],
        [
          { text: "Hello", n: 3 },
          { "mcp-param-region": hello, "mcp-param-count": "4" }
        ],
        [{}, { "mcp-param-region": "Hello" }],
        // Not a decimal number, though JavaScript would read these as 42.
        [{ n: 42 }, { "mcp-param-count": "0x2a" }],
        [{ n: 42 }, { "mcp-param-count": "4 2" }],
        [{ n: 42 }, { "mcp-param-count": "42.5" }]
      ]
      for (const [args, params] of cases) {
        const reply = yield* rawPost(http, callWith(args), headers(params))
        assert.strictEqual(reply.status, 400, JSON.stringify(params))
        const body = JSON.parse(reply.text)
        assert.strictEqual(body.error.code, -32020, JSON.stringify(params))
        assert.strictEqual(body.id, 3)
      }
    })
  )

  it.effect("without the hook, Mcp-Param headers are not checked", () =>
    Effect.gen(function* () {
      const { http } = yield* serve({ responseMode: "json" })
      const reply = yield* rawPost(http, callWith({ text: "Hello" }), headers({ "mcp-param-region": "Goodbye" }))
      assert.strictEqual(reply.status, 200)
    })
  )
})

describe("Streamable HTTP server: session lifetime", () => {
  it.effect("DELETE ends the session and interrupts its in-flight work", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const finalized = yield* Deferred.make<void>()
      const slow: Session.Handler = () =>
        Effect.acquireRelease(Deferred.succeed(started, undefined), () => Deferred.succeed(finalized, undefined)).pipe(
          Effect.andThen(Effect.never),
          Effect.scoped
        )
      const { http, server } = yield* serve({ server: serverOptions(new Map([["tools/call", slow]])) })
      const id = yield* openSession(http)
      const pending = yield* rawPost(http, call(2, "slow"), session(id)).pipe(Effect.forkChild)
      yield* Deferred.await(started)
      const deleted = yield* rawRequest(http, "DELETE", session(id))
      assert.strictEqual(deleted.status, 200)
      assert.isTrue(yield* Deferred.isDone(finalized))
      assert.strictEqual(server.sessionCount(), 0)
      // The POST's stream ends (no response ever comes) and the session is gone.
      const reply = yield* Fiber.join(pending)
      assert.strictEqual(reply.status, 200)
      assert.deepStrictEqual(sseData(reply.text), [])
      assert.strictEqual((yield* rawPost(http, call(3, "echo"), session(id))).status, 404)
    })
  )

  it.effect("1,000 idle sessions are expired by the idle timer and released", () =>
    Effect.gen(function* () {
      let released = 0
      const server = yield* StreamableHttpServer.make({
        session: ServerSession.make(serverOptions()).pipe(
          Effect.andThen(Effect.addFinalizer(() => Effect.sync(() => released++)))
        ),
        sessionIdleTimeout: "10 minutes"
      })
      const http = inMemoryClient(server.handler)
      for (let i = 0; i < 1000; i++) {
        const init = yield* rawPost(http, initialize(1))
        assert.strictEqual(init.status, 200)
      }
      assert.strictEqual(server.sessionCount(), 1000)
      yield* TestClock.adjust("9 minutes")
      assert.strictEqual(server.sessionCount(), 1000)
      // A session used meanwhile stays; the others go.
      const kept = yield* openSession(http)
      yield* TestClock.adjust("2 minutes")
      assert.strictEqual(server.sessionCount(), 1)
      assert.strictEqual(released, 1000)
      assert.strictEqual((yield* rawPost(http, call(2, "echo"), session(kept))).status, 200)
    })
  )

  it.effect("an open but silent GET stream does not keep its session alive; events it reads do", () =>
    Effect.gen(function* () {
      const sessions: Array<Session.SessionShape> = []
      const server = yield* StreamableHttpServer.make({
        session: ServerSession.make(serverOptions()).pipe(Effect.tap((s) => Effect.sync(() => sessions.push(s)))),
        sessionIdleTimeout: "1 minute"
      })
      const http = inMemoryClient(server.handler)
      const id = yield* openSession(http)
      const events = yield* openEvents(yield* rawRequest(http, "GET", { ...session(id), accept: "text/event-stream" }))
      yield* events.next
      // Events the client reads are activity.
      for (let i = 0; i < 3; i++) {
        yield* TestClock.adjust("50 seconds")
        yield* sessions[0]!.peer.notify("notifications/message", { level: "info", data: i })
        yield* events.next
      }
      assert.strictEqual(server.sessionCount(), 1)
      // Silence (keepalive comments aside) on an open stream: the session expires and the stream ends.
      yield* TestClock.adjust("2 minutes")
      assert.strictEqual(server.sessionCount(), 0)
      assert.strictEqual(yield* Fiber.join(events.fiber), undefined)
      assert.strictEqual((yield* rawPost(http, call(2, "echo"), session(id))).status, 404)
    })
  )

  it.effect(
    "sessions per client are capped (429) while other clients still get theirs; closing one frees a place",
    () =>
      Effect.gen(function* () {
        const { http, server } = yield* serve({
          maxSessionsPerClient: 2,
          clientOf: (request) => request.headers["x-client"]
        })
        const init = (client: string) => rawPost(http, initialize(1), { "x-client": client })
        const first = yield* init("mallory")
        assert.strictEqual(first.status, 200)
        assert.strictEqual((yield* init("mallory")).status, 200)
        const refused = yield* init("mallory")
        assert.strictEqual(refused.status, 429)
        assert.strictEqual(JSON.parse(refused.text).error.code, -32000)
        assert.isDefined(refused.headers["retry-after"])
        assert.strictEqual((yield* init("alice")).status, 200)
        assert.strictEqual(server.sessionCount(), 3)
        assert.isTrue(yield* server.closeSession(first.headers["mcp-session-id"]!))
        assert.strictEqual((yield* init("mallory")).status, 200)
      })
  )

  it.effect("sessions disabled: each request is served on its own and GET/DELETE get 405", () =>
    Effect.gen(function* () {
      const { http, server } = yield* serve({ stateless: true, responseMode: "json" })
      const reply = yield* rawPost(http, call(5, "echo", "solo"), { "mcp-protocol-version": "2025-06-18" })
      assert.strictEqual(reply.status, 200)
      assert.deepStrictEqual(JSON.parse(reply.text), {
        jsonrpc: "2.0",
        id: 5,
        result: { content: [{ type: "text", text: "echo:solo" }] }
      })
      assert.isUndefined(reply.headers["mcp-session-id"])
      assert.strictEqual((yield* rawRequest(http, "GET", { accept: "text/event-stream" })).status, 405)
      assert.strictEqual((yield* rawRequest(http, "DELETE", {})).status, 405)
      assert.strictEqual(server.sessionCount(), 0)
    })
  )
})

describe("Streamable HTTP server: stateless requests on stateful revisions", () => {
  it.effect("the one-shot session gets the request alone: no synthetic initialize is sent to it", () =>
    Effect.gen(function* () {
      const seen: Array<string> = []
      // A session that records every message it gets and answers each request with what it saw.
      const recorder = Effect.gen(function* () {
        const transport = yield* Transport.Transport
        yield* transport.incoming.pipe(
          Stream.runForEach((frame) => {
            if (Result.isFailure(frame)) return Effect.void
            const message = frame.success as { readonly id?: JsonRpc.RequestId; readonly method?: string }
            seen.push(message.method ?? "(response)")
            return message.id === undefined || message.method === undefined
              ? Effect.void
              : transport.send({ jsonrpc: "2.0", id: message.id, result: { seen: [...seen] } })
          }),
          Effect.ignore,
          Effect.forkScoped
        )
      })
      const server = yield* StreamableHttpServer.make({ session: recorder, stateless: true, responseMode: "json" })
      const http = inMemoryClient(server.handler)
      const reply = yield* rawPost(http, call(7, "echo", "solo"), { "mcp-protocol-version": "2025-06-18" })
      assert.strictEqual(reply.status, 200)
      assert.deepStrictEqual(JSON.parse(reply.text).result, { seen: ["tools/call"] })
    })
  )

  it.effect(
    "CurrentHttpSession.carriesUnsolicited: only a stateful session offered a GET stream has a channel outside requests",
    () =>
      Effect.gen(function* () {
        const seen: Array<boolean | undefined> = []
        const session = Effect.gen(function* () {
          seen.push((yield* StreamableHttpServer.CurrentHttpSession).carriesUnsolicited)
          return yield* ServerSession.make(serverOptions())
        })
        const served = (options: Partial<StreamableHttpServer.Options<never, never>>) =>
          Effect.map(StreamableHttpServer.make({ session, responseMode: "json", ...options }), (server) =>
            inMemoryClient(server.handler)
          )
        const stateful = yield* served({})
        yield* openSession(stateful)
        // A 2026-07-28 request, on the same server: its one-shot session has no GET stream (its client listens
        // with `subscriptions/listen` instead).
        const meta = {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": {}
        }
        const discovered = yield* rawPost(
          stateful,
          { jsonrpc: "2.0", id: 2, method: "server/discover", params: { _meta: meta } },
          { "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover" }
        )
        assert.strictEqual(discovered.status, 200, discovered.text)
        yield* openSession(yield* served({ standaloneStream: false }))
        const stateless = yield* served({ stateless: true })
        const reply = yield* rawPost(stateless, call(3, "echo"), { "mcp-protocol-version": "2025-06-18" })
        assert.strictEqual(reply.status, 200)
        assert.deepStrictEqual(seen, [true, false, false, false])
      })
  )

  it.effect("the one-shot session starts Ready in the revision the request names", () =>
    Effect.gen(function* () {
      const handlers = new Map<string, Session.Handler>([
        [
          "tools/call",
          (_params, info) =>
            Effect.succeed({
              content: [{ type: "text", text: `${info.state.phase} ${info.revision.version} ${info.peerInfo?.name}` }]
            })
        ]
      ])
      const { http } = yield* serve({ stateless: true, responseMode: "json", server: { handlers } })
      const reply = yield* rawPost(http, call(8, "echo"), { "mcp-protocol-version": "2025-03-26" })
      assert.strictEqual(reply.status, 200)
      assert.strictEqual(JSON.parse(reply.text).result.content[0].text, "Ready 2025-03-26 stateless-http-client")
    })
  )
})

describe("Streamable HTTP server: streams", () => {
  it.effect("server-initiated messages go to the GET stream; a second GET gets 409", () =>
    Effect.gen(function* () {
      const sessions: Array<Session.SessionShape> = []
      const server = yield* StreamableHttpServer.make({
        session: ServerSession.make(serverOptions()).pipe(Effect.tap((s) => Effect.sync(() => sessions.push(s))))
      })
      const http = inMemoryClient(server.handler)
      const id = yield* openSession(http)
      const get = yield* rawRequest(http, "GET", { ...session(id), accept: "text/event-stream" })
      assert.strictEqual(get.status, 200)
      const events = yield* openEvents(get)
      const priming = yield* events.next
      assert.strictEqual(priming.data, "")
      assert.isDefined(priming.id)
      assert.strictEqual(priming.retryMs, 1000)
      yield* sessions[0]!.peer.notify("notifications/message", { level: "info", data: "hello" })
      const message = yield* events.next
      assert.deepStrictEqual(JSON.parse(message.data), {
        jsonrpc: "2.0",
        method: "notifications/message",
        params: { level: "info", data: "hello" }
      })
      const second = yield* rawRequest(http, "GET", { ...session(id), accept: "text/event-stream" })
      assert.strictEqual(second.status, 409)
      yield* Fiber.interrupt(events.fiber)
    })
  )

  it.effect("messages sent before any GET stream is open arrive on the first one", () =>
    Effect.gen(function* () {
      const sessions: Array<Session.SessionShape> = []
      const server = yield* StreamableHttpServer.make({
        session: ServerSession.make(serverOptions()).pipe(Effect.tap((s) => Effect.sync(() => sessions.push(s)))),
        eventStore: false
      })
      const http = inMemoryClient(server.handler)
      const id = yield* openSession(http)
      yield* sessions[0]!.peer.notify("notifications/message", { level: "info", data: "early" })
      const events = yield* openEvents(yield* rawRequest(http, "GET", { ...session(id), accept: "text/event-stream" }))
      const first = yield* events.next
      assert.strictEqual(JSON.parse(first.data).params.data, "early")
      assert.isUndefined(first.id)
      yield* Fiber.interrupt(events.fiber)
    })
  )

  it.effect("Last-Event-ID replays the events missed while disconnected, and only those", () =>
    Effect.gen(function* () {
      const sessions: Array<Session.SessionShape> = []
      const server = yield* StreamableHttpServer.make({
        session: ServerSession.make(serverOptions()).pipe(Effect.tap((s) => Effect.sync(() => sessions.push(s))))
      })
      const http = inMemoryClient(server.handler)
      const id = yield* openSession(http)
      const notify = (data: string) => sessions[0]!.peer.notify("notifications/message", { level: "info", data })
      const first = yield* openEvents(yield* rawRequest(http, "GET", { ...session(id), accept: "text/event-stream" }))
      yield* first.next
      yield* notify("one")
      const one = yield* first.next
      yield* Fiber.interrupt(first.fiber)
      yield* notify("two")
      yield* notify("three")
      const resumed = yield* rawRequest(http, "GET", {
        ...session(id),
        accept: "text/event-stream",
        "last-event-id": one.id!
      })
      assert.strictEqual(resumed.status, 200)
      const second = yield* openEvents(resumed)
      const two = yield* second.next
      const three = yield* second.next
      assert.deepStrictEqual([JSON.parse(two.data).params.data, JSON.parse(three.data).params.data], ["two", "three"])
      yield* notify("four")
      assert.strictEqual(JSON.parse((yield* second.next).data).params.data, "four")
      yield* Fiber.interrupt(second.fiber)
      // Unknown ids, and ids of another session, are refused.
      const other = yield* openSession(http)
      const foreign = yield* rawRequest(http, "GET", {
        ...session(other),
        accept: "text/event-stream",
        "last-event-id": one.id!
      })
      assert.strictEqual(foreign.status, 400)
    })
  )

  it.effect("a POST stream closed mid-call is resumed with GET + Last-Event-ID and delivers the result", () =>
    Effect.gen(function* () {
      const release = yield* Deferred.make<void>()
      const reconnecting: Session.Handler = (params) =>
        (params as { name: string }).name === "test_reconnection"
          ? StreamableHttpServer.closeRequestStream.pipe(
              Effect.andThen(Deferred.await(release)),
              Effect.as({ content: [{ type: "text", text: "reconnected" }] })
            )
          : tools(params, undefined as never)
      const { http } = yield* serve({ server: serverOptions(new Map([["tools/call", reconnecting]])) })
      const id = yield* openSession(http)
      const reply = yield* rawPost(http, call(7, "test_reconnection"), session(id))
      // The server ended the stream after the priming event: nothing but its id arrived.
      assert.strictEqual(reply.status, 200)
      assert.deepStrictEqual(sseData(reply.text), [])
      const primingId = /id: (\S+)/.exec(reply.text)![1]!
      assert.match(reply.text, /retry: 1000/)
      // Returns once the released handler, and the answer it stores, have come to rest.
      yield* runIdle(Deferred.succeed(release, undefined))
      const resumed = yield* readAll(
        yield* rawRequest(http, "GET", { ...session(id), accept: "text/event-stream", "last-event-id": primingId })
      )
      assert.strictEqual(resumed.status, 200)
      assert.deepStrictEqual(sseData(resumed.text), [
        { jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "reconnected" }] } }
      ])
    })
  )
})

describe("EventStore (in memory)", () => {
  it.effect("replays after an id, bounds events per stream and streams, and forgets", () =>
    Effect.gen(function* () {
      const store = EventStore.makeMemory({ maxEventsPerStream: 3, maxStreams: 2 })
      const a1 = yield* store.append("a", "1")
      yield* store.append("a", "2")
      yield* store.append("b", "x")
      assert.deepStrictEqual(
        (yield* store.replayAfter(a1))?.events.map((e) => e.data),
        ["2"]
      )
      yield* store.append("a", "3")
      yield* store.append("a", "4")
      // "1" was evicted (3 per stream): resuming after it is impossible.
      assert.isUndefined(yield* store.replayAfter(a1))
      const b = yield* store.replayAfter((yield* store.append("b", "y")).replace(/_1$/, "_0"))
      assert.deepStrictEqual(b, { streamId: "b", events: [{ id: "b_1", data: "y" }] })
      // A third stream evicts the oldest one.
      const c = yield* store.append("c", "z")
      assert.isUndefined(yield* store.replayAfter("a_3"))
      assert.deepStrictEqual((yield* store.replayAfter(c))?.events, [])
      yield* store.forget("c")
      assert.isUndefined(yield* store.replayAfter(c))
    })
  )
})
