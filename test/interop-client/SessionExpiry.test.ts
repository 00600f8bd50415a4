/**
 * The McpClient when the server ends its Streamable HTTP session (issue 12,
 * found under attack 2 and 12): the spec says the client MUST start a new
 * session with a new `initialize` without a session id once the server
 * answers 404. A call in flight fails with `SessionExpired`; the next call
 * works on the new session. And a call made while the server is unreachable
 * fails with the transport's error, not with an `InternalError` that looks
 * like the server's own -32603.
 *
 * Over real sockets on 127.0.0.1: the effect-mcp server (NodeMcpServer) and
 * a server built with the official SDK (sdkServer.ts, a child process). The
 * session is ended from outside with DELETE, as another client holding the
 * id (or an operator) could.
 */
import * as http from "node:http"
import { fileURLToPath } from "node:url"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Middleware from "@effect-mcp/server/Middleware"
import * as Resource from "@effect-mcp/server/Resource"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import type * as Tools from "@effect-mcp/protocol/Tools"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { node, spawnChild, waitFor } from "../support/ServerProcess.ts"

const TIMEOUT = 30_000
const clientInfo = { name: "session-expiry-test", version: "1.0.0" }

const textOf = (result: Tools.CallToolResult): string => {
  const block = result.content[0]
  return block?.type === "text" ? block.text : ""
}

/**
 * What a test waits on: each start of `slow`, each `resources/subscribe` the server has answered, and each
 * `logging/setLevel` (its level).
 */
interface Signals {
  readonly slowStarted: Queue.Queue<void>
  readonly subscribed: Queue.Queue<string>
  readonly levels: Queue.Queue<string>
}

const Echo = Tool.make("echo", {
  description: "Echoes its text",
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed({ content: [{ type: "text" as const, text: `echo:${text}` }] })
})
const Touch = Tool.make("touch", {
  description: "Announces that the note changed",
  input: Schema.Struct({}),
  handler: () => Effect.as(McpServer.resourceUpdated("test://note"), { content: [] })
})
const Note = Resource.make({ uri: "test://note", name: "note", read: Effect.succeed("a note") })
const Whisper = Tool.make("whisper", {
  description: "Logs at debug, then at info",
  input: Schema.Struct({}),
  handler: () =>
    Effect.as(Effect.andThen(ServerRequest.log("debug", "psst"), ServerRequest.log("info", "loud")), { content: [] })
})
const serverWith = (signals: Signals) => {
  const Slow = Tool.make("slow", {
    description: "Waits far longer than the test",
    input: Schema.Struct({}),
    handler: () =>
      Queue.offer(signals.slowStarted, undefined).pipe(
        Effect.andThen(Effect.never),
        Effect.as({ content: [{ type: "text" as const, text: "never" }] })
      )
  })
  // Tells the test once the server has answered a subscription: updates announced after it reach the client.
  const Subscribed = Middleware.layer((request, next) =>
    request.method === "resources/subscribe"
      ? Effect.tap(next, () => Queue.offer(signals.subscribed, String(request.target)))
      : request.method === "logging/setLevel"
        ? Effect.tap(next, () => Queue.offer(signals.levels, String((request.params as { level?: unknown }).level)))
        : next
  )
  return Layer.mergeAll(Tool.layer(Echo, Slow, Touch, Whisper), Resource.layer(Note), Subscribed).pipe(
    Layer.provideMerge(McpServer.layer({ name: "expiry", version: "1.0.0" }))
  )
}

/** The effect-mcp server listening in a scope of its own (closed by the test or with it); its /mcp URL. */
const listen = Effect.gen(function* () {
  const signals: Signals = {
    slowStarted: yield* Queue.unbounded<void>(),
    subscribed: yield* Queue.unbounded<string>(),
    levels: yield* Queue.unbounded<string>()
  }
  const scope = yield* Scope.make()
  yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
  const context = yield* Layer.buildWithScope(NodeMcpServer.layerHttp(serverWith(signals)), scope)
  const base = yield* NodeMcpServer.url.pipe(Effect.provideContext(context))
  return { url: `${base}/mcp`, close: Scope.close(scope, Exit.void), signals }
})

/**
 * A client over its own Streamable HTTP transport, with the transport's HTTP
 * view (for the session id). Sessions exist up to 2025-11-25 (2026-07-28 is
 * stateless), so the client speaks that.
 */
const connect = (url: string, peer?: McpClient.Options["peer"], standaloneStream?: boolean) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(NodeHttpClient.layerStreamableHttp({ url, standaloneStream }))
    const client = yield* McpClient.make({ clientInfo, supportedVersions: ["2025-11-25"], peer }).pipe(
      Effect.provideContext(context)
    )
    return { client, http: Context.get(context, StreamableHttpClient.StreamableHttpClient) }
  })

/** Ends a session from outside, as the spec's DELETE does. */
const deleteSession = (url: string, sessionId: string, protocolVersion: string | undefined) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(NodeHttpClient.layer)
    const response = yield* Context.get(context, HttpClient.HttpClient).execute(
      HttpClientRequest.delete(url).pipe(
        HttpClientRequest.setHeaders({
          "mcp-session-id": sessionId,
          ...(protocolVersion === undefined ? {} : { "mcp-protocol-version": protocolVersion })
        })
      )
    )
    yield* response.text
    return response.status
  }).pipe(Effect.orDie)

const sdkFixture = fileURLToPath(new URL("./sdkServer.ts", import.meta.url))

describe("McpClient: a session the server ended", () => {
  it.live(
    "effect-mcp server: the call in flight fails with SessionExpired, the next call works on a new session",
    () =>
      Effect.gen(function* () {
        const server = yield* listen
        const { client, http } = yield* connect(server.url)
        assert.strictEqual(textOf(yield* client.callTool("echo", { text: "one" })), "echo:one")
        const first = http.sessionId()!
        const inFlight = yield* Effect.forkChild(client.callTool("slow", {}))
        yield* Queue.take(server.signals.slowStarted)
        assert.strictEqual(yield* deleteSession(server.url, first, http.protocolVersion()), 200)
        const exit = yield* Fiber.await(inFlight)
        assert.isTrue(Exit.isFailure(exit))
        const error = Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail")?.error : undefined
        assert.strictEqual((error as { readonly _tag?: string } | undefined)?._tag, "SessionExpired")
        assert.strictEqual(textOf(yield* client.callTool("echo", { text: "two" })), "echo:two")
        const second = http.sessionId()
        assert.isDefined(second)
        assert.notStrictEqual(second, first)
        assert.strictEqual(client.session.state.phase, "Ready")
      }),
    TIMEOUT
  )

  it.live(
    "McpClient.closed: an expired session is renewed, not the end; the server gone is (a keepalive ping refused)",
    () =>
      Effect.gen(function* () {
        const server = yield* listen
        const { client, http } = yield* connect(server.url, {
          keepalive: { schedule: Schedule.spaced("100 millis"), timeout: "5 seconds" }
        })
        const closed = yield* Effect.forkChild(client.closed)
        yield* client.setLoggingLevel("debug")
        assert.strictEqual(yield* Queue.take(server.signals.levels), "debug")
        assert.strictEqual(yield* deleteSession(server.url, http.sessionId()!, http.protocolVersion()), 200)
        // Renewed by whatever meets the 404 first (a ping, the GET stream): the new session is asked the level
        // again. A call made meanwhile could be in flight as the old session ends, and fail SessionExpired.
        assert.strictEqual(yield* Queue.take(server.signals.levels), "debug")
        assert.strictEqual(textOf(yield* client.callTool("echo", { text: "renewed" })), "echo:renewed")
        assert.isUndefined(closed.pollUnsafe(), "the renewal ended the connection")
        yield* server.close
        const exit = yield* Fiber.join(closed)
        const error = Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail")?.error : undefined
        assert.strictEqual(error?._tag, "KeepaliveFailed")
        assert.match(error?.message ?? "", /connection refused \(ECONNREFUSED\)/)
      }),
    TIMEOUT
  )

  it.live(
    "a keepalive ping that meets the ended session renews it, as a call would (no GET stream to see it first)",
    () =>
      Effect.gen(function* () {
        const server = yield* listen
        const { client, http } = yield* connect(
          server.url,
          { keepalive: { schedule: Schedule.spaced("100 millis"), timeout: "5 seconds" } },
          false
        )
        const closed = yield* Effect.forkChild(client.closed)
        yield* client.setLoggingLevel("debug")
        assert.strictEqual(yield* Queue.take(server.signals.levels), "debug")
        const first = http.sessionId()
        assert.strictEqual(yield* deleteSession(server.url, first!, http.protocolVersion()), 200)
        // No call is made: only the next ping meets the 404. The new session is asked the level again.
        assert.strictEqual(yield* Queue.take(server.signals.levels), "debug")
        assert.notStrictEqual(http.sessionId(), first)
        assert.isUndefined(closed.pollUnsafe(), "the expired session ended the connection")
        assert.strictEqual(textOf(yield* client.callTool("echo", { text: "renewed" })), "echo:renewed")
      }),
    TIMEOUT
  )

  it.live(
    "the logging level set is asked again of the new session",
    () =>
      Effect.gen(function* () {
        const server = yield* listen
        const { client, http } = yield* connect(server.url)
        yield* client.setLoggingLevel("debug")
        assert.strictEqual(yield* Queue.take(server.signals.levels), "debug")
        assert.strictEqual(yield* deleteSession(server.url, http.sessionId()!, http.protocolVersion()), 200)
        // Renewed on this call; the level is asked again of the new session (in a fiber of its own: waited for).
        yield* client.callTool("echo", { text: "renew" })
        assert.strictEqual(yield* Queue.take(server.signals.levels), "debug")
        const heard = yield* client.logMessages.pipe(
          Stream.takeUntil((message) => message.data === "loud"),
          Stream.runCollect,
          Effect.forkChild({ startImmediately: true })
        )
        yield* client.callTool("whisper", {})
        // Before, the new session logged at the server's default (info): the debug line was not sent.
        assert.deepStrictEqual(
          (yield* Fiber.join(heard)).map((message) => message.data),
          ["psst", "loud"]
        )
      }),
    TIMEOUT
  )

  it.live(
    "effect-mcp server: a call the server never took (its POST got 404) goes to the new session",
    () =>
      Effect.gen(function* () {
        const server = yield* listen
        const { client, http } = yield* connect(server.url)
        const first = http.sessionId()!
        assert.strictEqual(yield* deleteSession(server.url, first, http.protocolVersion()), 200)
        assert.strictEqual(textOf(yield* client.callTool("echo", { text: "after" })), "echo:after")
        assert.notStrictEqual(http.sessionId(), first)
        assert.strictEqual(textOf(yield* client.callTool("echo", { text: "again" })), "echo:again")
      }),
    TIMEOUT
  )

  it.live(
    "effect-mcp server: a resource followed with resourceUpdates is subscribed again on the new session",
    () =>
      Effect.gen(function* () {
        const server = yield* listen
        const { client, http } = yield* connect(server.url)
        const updates = yield* Queue.unbounded<string>()
        yield* client.resourceUpdates("test://note").pipe(
          Stream.runForEach((update) => Queue.offer(updates, update.uri)),
          Effect.forkScoped
        )
        // The subscription is in place once the server answered it: an update announced after that gets through.
        assert.strictEqual(yield* Queue.take(server.signals.subscribed), "test://note")
        yield* client.callTool("touch", {})
        assert.strictEqual(yield* Queue.take(updates), "test://note")
        yield* Queue.clear(updates)
        assert.strictEqual(yield* deleteSession(server.url, http.sessionId()!, http.protocolVersion()), 200)
        assert.strictEqual(textOf(yield* client.callTool("echo", { text: "renewed" })), "echo:renewed")
        // The client subscribes again on the new session by itself; updates flow there.
        assert.strictEqual(yield* Queue.take(server.signals.subscribed), "test://note")
        yield* client.callTool("touch", {})
        assert.strictEqual(yield* Queue.take(updates), "test://note", "updates flow on the new session")
      }),
    TIMEOUT
  )

  it.live(
    "official SDK server: after its session is deleted the client starts a new one",
    () =>
      Effect.gen(function* () {
        const child = yield* spawnChild(node, [sdkFixture, "--http"])
        const base = (yield* child.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+)/))[1]!
        const url = `${base}/mcp`
        const { client, http } = yield* connect(url)
        assert.strictEqual(textOf(yield* client.callTool("echo", { text: "one" })), "echo: one")
        const first = http.sessionId()!
        assert.strictEqual(yield* deleteSession(url, first, http.protocolVersion()), 200)
        assert.strictEqual(textOf(yield* client.callTool("echo", { text: "two" })), "echo: two")
        assert.notStrictEqual(http.sessionId(), first)
        // The in-flight case against the SDK: its stream ends when the session is deleted.
        const seen = child.stderr().length
        const call = yield* Effect.forkChild(client.callTool("slow", { ms: 60_000 }))
        yield* waitFor(() => child.stderr().slice(seen), /started \S+/, undefined, child.stderr)
        assert.strictEqual(yield* deleteSession(url, http.sessionId()!, http.protocolVersion()), 200)
        const exit = yield* Fiber.await(call)
        assert.isTrue(Exit.isFailure(exit), "the call in flight does not succeed")
        assert.strictEqual(textOf(yield* client.callTool("echo", { text: "three" })), "echo: three")
      }),
    TIMEOUT
  )
})

/**
 * A Streamable HTTP server that takes one session (s1), then forgets it: its event stream's GET is answered 404,
 * which expires the session, and every later `initialize` is refused (500), as a server going down would.
 */
const forgetfulServer = Effect.acquireRelease(
  Effect.callback<http.Server>((resume) => {
    let sessions = 0
    const server = http.createServer((request, response) => {
      if (request.method === "GET") return response.writeHead(404).end()
      if (request.method !== "POST") return response.writeHead(200).end()
      let body = ""
      request.on("data", (chunk: Buffer) => (body += chunk.toString()))
      request.on("end", () => {
        const message = JSON.parse(body) as { id?: number; method: string; params?: { protocolVersion?: string } }
        if (message.method !== "initialize") return response.writeHead(202).end()
        if (sessions++ > 0) return response.writeHead(500, { "content-type": "text/plain" }).end("going down")
        response.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s1" }).end(
          JSON.stringify({
            jsonrpc: "2.0",
            id: message.id,
            result: {
              protocolVersion: message.params?.protocolVersion,
              capabilities: { logging: {} },
              serverInfo: { name: "forgetful", version: "1.0.0" }
            }
          })
        )
      })
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) =>
    Effect.callback<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
).pipe(Effect.map((server) => `http://127.0.0.1:${(server.address() as { readonly port: number }).port}/mcp`))

describe("McpClient.closed when no new session can be made", () => {
  it.live(
    "the server ended the session and refuses a new one: closed completes, saying both",
    () =>
      Effect.gen(function* () {
        const url = yield* forgetfulServer
        const { client } = yield* connect(url)
        // Nothing is called: a client that only listens learns it from `closed` (before, it never completed).
        const exit = yield* client.closed
        const error = Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail")?.error : undefined
        assert.strictEqual(error?._tag, "TransportError")
        assert.match(
          error?.message ?? "",
          /^the server ended the session, and a new one could not be made: .*HTTP 500.*going down/
        )
      }).pipe(Effect.scoped),
    TIMEOUT
  )
})

describe("McpClient: an unreachable server", () => {
  it.live(
    "a call fails with TransportError (Io), not with the InternalError a server sends as -32603",
    () =>
      Effect.gen(function* () {
        const server = yield* listen
        const { client } = yield* connect(server.url)
        assert.strictEqual(textOf(yield* client.callTool("echo", { text: "up" })), "echo:up")
        yield* server.close
        const error = yield* client.callTool("echo", { text: "down" }).pipe(Effect.flip)
        assert.strictEqual(error._tag, "TransportError", String((error as { readonly message?: unknown }).message))
        assert.strictEqual((error as { readonly reason?: string }).reason, "Io")
      }),
    TIMEOUT
  )

  it.live(
    "the same on the stateless revision (2026-07-28)",
    () =>
      Effect.gen(function* () {
        const server = yield* listen
        const context = yield* Layer.build(NodeHttpClient.layerStreamableHttp({ url: server.url }))
        const client = yield* McpClient.make({ clientInfo }).pipe(Effect.provideContext(context))
        assert.strictEqual(client.revision, "2026-07-28")
        assert.strictEqual(textOf(yield* client.callTool("echo", { text: "up" })), "echo:up")
        yield* server.close
        const error = yield* client.callTool("echo", { text: "down" }).pipe(Effect.flip)
        assert.strictEqual(error._tag, "TransportError", String((error as { readonly message?: unknown }).message))
        assert.strictEqual((error as { readonly reason?: string }).reason, "Io")
      }),
    TIMEOUT
  )
})
