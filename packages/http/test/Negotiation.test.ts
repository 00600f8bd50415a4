import { assert, describe, it } from "@effect/vitest"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import type * as Session from "@effect-mcp/engine/Session"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import * as SseServer from "@effect-mcp/http/SseServer"
import * as HttpRouter from "effect/http/HttpRouter"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { clientInfo, initializeRequest, linked, rawAgainstServer, serverInfo } from "../../engine/test/fixtures.ts"
import { initialize, inMemoryClient, openEvents, rawPost, rawRequest, serverOptions } from "./StreamableHttpFixtures.ts"

type Version = ProtocolVersion.ProtocolVersion
const all = ProtocolVersion.all
const stateless = (v: Version) => v === "2026-07-28"

/** Every non-empty subset of the five revisions. */
const subsets: ReadonlyArray<ReadonlyArray<Version>> = Array.from({ length: 31 }, (_, mask) =>
  all.filter((_, i) => ((mask + 1) >> i) & 1)
)

/** What the spec says should happen, computed independently of the engine. */
const expected = (client: ReadonlyArray<Version>, server: ReadonlyArray<Version>): Version | "fail" => {
  if (client.some(stateless) && server.some(stateless)) return "2026-07-28"
  // A server without the stateless revision refuses the client's `server/discover` probe with -32022, listing
  // what it speaks: the client then offers the newest stateful revision of those it speaks too.
  const candidates = client.some(stateless) ? client.filter((v) => server.includes(v)) : client
  const offered = candidates
    .filter((v) => !stateless(v))
    .sort()
    .at(-1)
  if (offered === undefined) return "fail"
  const serverStateful = server.filter((v) => !stateless(v))
  const answered = serverStateful.includes(offered) ? offered : serverStateful.sort().at(-1)
  return answered !== undefined && client.includes(answered) ? answered : "fail"
}

describe("version negotiation", () => {
  it.effect("every pair of client/server revision sets gives the expected outcome (961 pairs)", () =>
    Effect.gen(function* () {
      let checked = 0
      for (const clientVersions of subsets) {
        for (const serverVersions of subsets) {
          const outcome = yield* linked({ clientVersions, server: { supportedVersions: serverVersions } }).pipe(
            Effect.map(({ client }) => client.state.revision?.version),
            Effect.exit,
            Effect.scoped
          )
          const want = expected(clientVersions, serverVersions)
          const got = Exit.isSuccess(outcome) ? outcome.value : "fail"
          assert.strictEqual(got, want, `client ${clientVersions} / server ${serverVersions}`)
          checked++
        }
      }
      assert.strictEqual(checked, 961)
    })
  )

  it.effect("a client that cannot speak the server's answer fails with a typed error", () =>
    Effect.gen(function* () {
      const error = yield* linked({
        clientVersions: ["2025-11-25"],
        server: { supportedVersions: ["2024-11-05"] }
      }).pipe(Effect.flip)
      assert.strictEqual(error._tag, "InitializeError")
      assert.strictEqual(error.reason, "UnsupportedVersion")
      assert.strictEqual(error.serverVersion, "2024-11-05")
    })
  )

  it.effect("one server serves stateless 2026-07-28 requests and a stateful session side by side", () =>
    Effect.gen(function* () {
      const handlers = new Map<string, Session.Handler>([
        ["tools/list", (_params, info) => Effect.succeed({ tools: [], revision: info.revision.version })]
      ])
      const server = { capabilities: { tools: {} }, handlers }
      const statelessPair = yield* linked({ server })
      const statefulPair = yield* linked({ server, clientVersions: ["2025-06-18"] })
      assert.strictEqual(statelessPair.client.state.revision?.version, "2026-07-28")
      assert.strictEqual(statefulPair.client.state.revision?.version, "2025-06-18")
      // Both ways of meeting the server learn who it is.
      assert.deepStrictEqual(statelessPair.client.state.peerInfo, serverInfo)
      assert.deepStrictEqual(statefulPair.client.state.peerInfo, serverInfo)
      const a = yield* statelessPair.client.request("tools/list", {})
      const b = yield* statefulPair.client.request("tools/list", {})
      assert.deepStrictEqual(a, { tools: [], revision: "2026-07-28", resultType: "complete" })
      assert.deepStrictEqual(b, { tools: [], revision: "2025-06-18" })
    })
  )

  it.effect("a stateless request with an unknown protocol version gets -32022 with the supported list", () =>
    Effect.gen(function* () {
      const { send, next } = yield* rawAgainstServer({ capabilities: { tools: {} } })
      yield* send({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: {
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2099-01-01",
            "io.modelcontextprotocol/clientCapabilities": {}
          }
        }
      })
      const response = (yield* next) as {
        error: { code: number; data: { requested: string; supported: Array<string> } }
      }
      assert.strictEqual(response.error.code, -32022)
      assert.strictEqual(response.error.data.requested, "2099-01-01")
      assert.deepStrictEqual(response.error.data.supported, [...ProtocolVersion.all])
    })
  )
})

/** A client session handshaking with a raw server end whose requests arrive in `inbox`. */
const clientAgainstRawServer = Effect.gen(function* () {
  const [clientEnd, rawEnd] = yield* MemoryTransport.makePair()
  const inbox = yield* Queue.unbounded<JsonRpc.Request>()
  yield* rawEnd.incoming.pipe(
    Stream.runForEach((frame) => (Result.isSuccess(frame) ? Queue.offer(inbox, frame.success as never) : Effect.void)),
    Effect.forkScoped
  )
  const clientFiber = yield* ClientSession.make({ clientInfo, capabilities: {} }).pipe(
    Effect.provideService(Transport.Transport, clientEnd),
    Effect.forkScoped
  )
  return { rawEnd, inbox, clientFiber }
})

describe("client fallback", () => {
  it.effect("a server refusing the stateless revision with -32022 is met with the initialize handshake", () =>
    Effect.gen(function* () {
      const { rawEnd, inbox, clientFiber } = yield* clientAgainstRawServer
      const discover = yield* Queue.take(inbox)
      assert.strictEqual(discover.method, "server/discover")
      yield* rawEnd.send({
        jsonrpc: "2.0",
        id: discover.id,
        error: { code: -32022, message: "unsupported", data: { requested: "2026-07-28", supported: ["2025-11-25"] } }
      })
      const initialize = yield* Queue.take(inbox)
      assert.strictEqual(initialize.method, "initialize")
      yield* rawEnd.send({
        jsonrpc: "2.0",
        id: initialize.id,
        result: { protocolVersion: "2025-11-25", capabilities: {}, serverInfo }
      })
      const client = yield* Fiber.join(clientFiber)
      assert.strictEqual(client.state.revision?.version, "2025-11-25")
    })
  )

  it.effect("a refused first choice is retried with a stateless revision the server lists", () =>
    Effect.gen(function* () {
      const { rawEnd, inbox, clientFiber } = yield* clientAgainstRawServer
      const first = yield* Queue.take(inbox)
      yield* rawEnd.send({
        jsonrpc: "2.0",
        id: first.id,
        error: { code: -32022, message: "unsupported", data: { requested: "x", supported: ["2026-07-28"] } }
      })
      const second = yield* Queue.take(inbox)
      assert.strictEqual(second.method, "server/discover")
      assert.notStrictEqual(second.id, first.id)
      assert.strictEqual(
        (second.params as { _meta: Record<string, unknown> })._meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
      )
      yield* rawEnd.send({
        jsonrpc: "2.0",
        id: second.id,
        result: { supportedVersions: ["2026-07-28"], capabilities: {}, ttlMs: 0, cacheScope: "private" }
      })
      const client = yield* Fiber.join(clientFiber)
      assert.strictEqual(client.state.revision?.version, "2026-07-28")
    })
  )

  it.effect("a repeated initialize negotiates again until initialized; then only an identical one is answered", () =>
    Effect.gen(function* () {
      const raw = yield* rawAgainstServer({ capabilities: { tools: {} }, instructions: "hi" })
      const capabilities = { roots: { listChanged: true } }
      yield* raw.send(initializeRequest(1, "2025-06-18", { sampling: {} }))
      const first = (yield* raw.next) as JsonRpc.SuccessResponse
      assert.strictEqual((first.result as { protocolVersion: string }).protocolVersion, "2025-06-18")
      // Before notifications/initialized (a bridge forwarding its own client's initialize): answered
      // again, in the version and with the capabilities it asks for now.
      yield* raw.send(initializeRequest(2, "2025-03-26", capabilities))
      const renegotiated = (yield* raw.next) as JsonRpc.SuccessResponse
      assert.strictEqual((renegotiated.result as { protocolVersion: string }).protocolVersion, "2025-03-26")
      assert.strictEqual(raw.server.state.revision?.version, "2025-03-26")
      assert.deepStrictEqual(raw.server.state.peerCapabilities, capabilities)
      yield* raw.send({ jsonrpc: "2.0", method: "notifications/initialized" })
      yield* raw.send(initializeRequest(3, "2025-03-26", { roots: { listChanged: true } }))
      const again = (yield* raw.next) as JsonRpc.Response
      assert.deepStrictEqual(again, { ...renegotiated, id: 3 })
      yield* raw.send(initializeRequest(4, "2025-06-18", capabilities))
      const otherVersion = (yield* raw.next) as JsonRpc.ErrorResponse
      assert.strictEqual(otherVersion.error.code, -32600)
      yield* raw.send(initializeRequest(5, "2025-03-26", { sampling: {} }))
      const otherCapabilities = (yield* raw.next) as JsonRpc.ErrorResponse
      assert.strictEqual(otherCapabilities.error.code, -32600)
      assert.strictEqual(raw.server.state.revision?.version, "2025-03-26")
    })
  )

  it.effect("over legacy HTTP+SSE, a bridge's repeated initialize before initialized is negotiated again", () =>
    Effect.gen(function* () {
      const app = yield* HttpRouter.toHttpEffect(SseServer.layer({ session: ServerSession.make(serverOptions()) }))
      const http = inMemoryClient(app)
      const events = yield* openEvents(
        yield* rawRequest(http, "GET", { accept: "text/event-stream" }, "http://localhost/sse")
      )
      const endpoint = `http://localhost${(yield* events.next).data}`
      yield* rawPost(http, initialize(1, "2024-11-05"), {}, endpoint)
      const first = JSON.parse((yield* events.next).data) as JsonRpc.SuccessResponse
      // supergateway's SSE bridge: its own client initialized the session, then it forwards its user's.
      yield* rawPost(http, initialize(2, "2025-03-26"), {}, endpoint)
      const again = JSON.parse((yield* events.next).data) as JsonRpc.SuccessResponse
      assert.deepStrictEqual(again, {
        ...first,
        id: 2,
        result: { ...(first.result as object), protocolVersion: "2025-03-26" }
      })
      yield* Fiber.interrupt(events.fiber)
    })
  )
})
