/**
 * A server Layer served as a web-standard handler (`WebHandler.make`), driven
 * in-process with real web `Request` objects and read from real `Response`s
 * (SSE bodies read event by event from their `ReadableStream`): a stateful
 * 2025-11-25 session, a stateless 2026-07-28 call, the stateless 2025 mode,
 * the protections NodeMcpServer has (Host from the URL, Origin, body limit,
 * auth with the items' scopes), and the official 2.x SDK client talking to
 * the handler through its `fetch` option, with no socket.
 */
import type * as HttpAuthentication from "@effect-mcp/http/HttpAuthentication"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Resource from "@effect-mcp/server/Resource"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as WebHandler from "@effect-mcp/server/WebHandler"
import { assert, describe, it } from "@effect/vitest"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { Obj } from "./fixtures.ts"

const released = Deferred.makeUnsafe<void>()

const Server = Tool.layer(
  Tool.make("greet", {
    input: Schema.Struct({ name: Schema.String }),
    handler: ({ name }) => Effect.succeed(`hello, ${name}`)
  }),
  Tool.make("steps", {
    input: Schema.Struct({}),
    handler: () =>
      Effect.gen(function* () {
        for (let i = 1; i <= 3; i++) yield* ServerRequest.progress({ progress: i, total: 3 })
        return "stepped"
      })
  }),
  // Reports progress, then waits for the test: its progress can only be read while the call is running.
  Tool.make("gated", {
    input: Schema.Struct({}),
    handler: () =>
      Effect.gen(function* () {
        yield* ServerRequest.progress({ progress: 1, total: 2 })
        yield* Deferred.await(released)
        return "released"
      })
  }),
  Tool.make("admin", {
    input: Schema.Struct({}),
    scopes: ["admin"],
    handler: () => Effect.succeed("done")
  })
).pipe(Layer.provideMerge(McpServer.layer({ name: "web", version: "1.0.0" })))

// A resource to subscribe to, and a tool that says it changed.
const Watched = Layer.mergeAll(
  Resource.layer(Resource.make({ uri: "test://watched", name: "watched", read: Effect.succeed("now") })),
  Tool.layer(
    Tool.make("touch", {
      input: Schema.Struct({}),
      handler: () => Effect.as(McpServer.resourceUpdated("test://watched"), "touched")
    })
  )
).pipe(Layer.provideMerge(McpServer.layer({ name: "watched", version: "1.0.0" })))

const URL_MCP = "http://localhost/mcp"

/** A handler for the test's scope (of `Server`, or of `options.server`), disposed at its end. */
const serve = (options?: WebHandler.Options & { readonly server?: Layer.Layer<McpServer.McpServer> }) =>
  Effect.acquireRelease(
    Effect.sync(() => WebHandler.make(options?.server ?? Server, options)),
    (web) => Effect.promise(() => web.dispose())
  )

const send = (web: WebHandler.WebHandler, request: Request) => Effect.promise(() => web.handler(request))

const post = (body: unknown, headers: Record<string, string> = {}, url = URL_MCP) =>
  new Request(url, {
    method: "POST",
    headers: { accept: "application/json, text/event-stream", "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })

const initialize = (id: number, version = "2025-11-25") => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "raw", version: "1" } }
})

const call = (id: number, name: string, args: Obj = {}, meta: Obj = {}) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args, _meta: meta }
})

const statelessMeta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {}
}

/** The JSON data of an SSE block, or undefined when it has none (a priming event, a comment). */
const dataOf = (block: string): Obj | undefined => {
  const data = block
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).trimStart())
    .join("\n")
  return data === "" ? undefined : JSON.parse(data)
}

/** Reads an SSE body from its stream as it comes: `next` is the data of the next event with data, undefined at its end. */
const eventsOf = (response: Response) => {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  const next = async (): Promise<Obj | undefined> => {
    for (;;) {
      const end = buffer.indexOf("\n\n")
      if (end >= 0) {
        const data = dataOf(buffer.slice(0, end))
        buffer = buffer.slice(end + 2)
        if (data !== undefined) return data
        continue
      }
      const chunk = await reader.read()
      if (chunk.done) return undefined
      buffer += decoder.decode(chunk.value, { stream: true })
    }
  }
  return { next: Effect.promise(next) }
}

/** Every message of a reply, JSON or SSE, read to its end. */
const messagesOf = (response: Response) =>
  Effect.map(
    Effect.promise(() => response.text()),
    (text): ReadonlyArray<Obj> =>
      (response.headers.get("content-type") ?? "").startsWith("application/json")
        ? [JSON.parse(text)]
        : text.split("\n\n").flatMap((block) => dataOf(block) ?? [])
  )

const textOf = (message: Obj | undefined): string => message?.result?.content?.[0]?.text

describe("WebHandler", () => {
  it.effect(
    "stateful 2025-11-25: initialize, a call streamed as it runs, the GET stream, DELETE ends the session",
    () =>
      Effect.gen(function* () {
        const web = yield* serve()
        const init = yield* send(web, post(initialize(1)))
        assert.strictEqual(init.status, 200)
        assert.match(init.headers.get("content-type") ?? "", /^text\/event-stream/)
        const sessionId = init.headers.get("mcp-session-id")
        assert.match(sessionId ?? "", /^[0-9a-f]{32}$/)
        const initEvents = eventsOf(init)
        assert.strictEqual((yield* initEvents.next)?.result?.protocolVersion, "2025-11-25")
        assert.isUndefined(yield* initEvents.next)
        const session = { "mcp-session-id": sessionId!, "mcp-protocol-version": "2025-11-25" }
        const initialized = yield* send(web, post({ jsonrpc: "2.0", method: "notifications/initialized" }, session))
        assert.strictEqual(initialized.status, 202)

        // The progress event is read while the tool still waits: the reply streams as the call runs.
        const running = yield* send(web, post(call(2, "gated", {}, { progressToken: "p" }), session))
        assert.strictEqual(running.status, 200)
        const reply = eventsOf(running)
        const progress = yield* reply.next
        assert.strictEqual(progress?.method, "notifications/progress")
        assert.deepStrictEqual(progress?.params, { progressToken: "p", progress: 1, total: 2 })
        yield* Deferred.succeed(released, undefined)
        const result = yield* reply.next
        assert.strictEqual(result?.id, 2)
        assert.strictEqual(textOf(result), "released")
        assert.isUndefined(yield* reply.next)

        // The same instance keeps the session between requests: a second call, and the GET stream.
        const again = yield* messagesOf(yield* send(web, post(call(3, "greet", { name: "Ada" }), session)))
        assert.strictEqual(textOf(again.at(-1)), "hello, Ada")
        const get = yield* send(web, new Request(URL_MCP, { headers: { accept: "text/event-stream", ...session } }))
        assert.strictEqual(get.status, 200)
        assert.match(get.headers.get("content-type") ?? "", /^text\/event-stream/)

        const deleted = yield* send(web, new Request(URL_MCP, { method: "DELETE", headers: session }))
        assert.strictEqual(deleted.status, 200)
        // Ending the session ended its GET stream, and the id is gone.
        assert.isUndefined(yield* eventsOf(get).next)
        const after = yield* send(web, post(call(4, "greet", { name: "Ada" }), session))
        assert.strictEqual(after.status, 404)
      })
  )

  it.effect("dispose closes every session: an open GET stream ends", () =>
    Effect.gen(function* () {
      const web = WebHandler.make(Server)
      const init = yield* send(web, post(initialize(1)))
      yield* messagesOf(init)
      const session = { "mcp-session-id": init.headers.get("mcp-session-id")!, "mcp-protocol-version": "2025-11-25" }
      assert.strictEqual(
        (yield* send(web, post({ jsonrpc: "2.0", method: "notifications/initialized" }, session))).status,
        202
      )
      const get = yield* send(web, new Request(URL_MCP, { headers: { accept: "text/event-stream", ...session } }))
      assert.strictEqual(get.status, 200)
      yield* Effect.promise(() => web.dispose())
      assert.isUndefined(yield* eventsOf(get).next)
    })
  )

  it.effect("stateless 2026-07-28: a call answered by a handler that has seen nothing before", () =>
    Effect.gen(function* () {
      for (const _ of [1, 2]) {
        const web = yield* serve()
        const response = yield* send(
          web,
          post(call(7, "greet", { name: "Grace" }, statelessMeta), {
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "greet"
          })
        )
        assert.strictEqual(response.status, 200)
        assert.isNull(response.headers.get("mcp-session-id"))
        const messages = yield* messagesOf(response)
        assert.strictEqual(messages.at(-1)?.id, 7)
        assert.strictEqual(textOf(messages.at(-1)), "hello, Grace")
      }
    })
  )

  it.effect("the stateless 2025 mode: no initialize, no session id, no GET stream", () =>
    Effect.gen(function* () {
      for (const _ of [1, 2]) {
        const web = yield* serve({ stateless: true })
        const response = yield* send(
          web,
          post(call(1, "greet", { name: "Alan" }), { "mcp-protocol-version": "2025-11-25" })
        )
        assert.strictEqual(response.status, 200)
        assert.isNull(response.headers.get("mcp-session-id"))
        assert.strictEqual(textOf((yield* messagesOf(response)).at(-1)), "hello, Alan")
        const get = yield* send(web, new Request(URL_MCP, { headers: { accept: "text/event-stream" } }))
        assert.strictEqual(get.status, 405)
      }
    })
  )

  it.effect(
    "the stateless 2025 mode promises no notifications it has no channel for; 2026-07-28 still gets them on its listen stream",
    () =>
      Effect.gen(function* () {
        const capabilitiesOf = (message: Obj | undefined) => {
          const { resources, tools } = message?.result?.capabilities ?? {}
          return { resources, tools }
        }
        const promised = { resources: { subscribe: true, listChanged: true }, tools: { listChanged: true } }
        // The control: a stateful session, which has its GET stream for them.
        const stateful = yield* serve({ server: Watched })
        assert.deepStrictEqual(
          capabilitiesOf((yield* messagesOf(yield* send(stateful, post(initialize(1))))).at(-1)),
          promised
        )

        const web = yield* serve({ server: Watched, stateless: true })
        const init = (yield* messagesOf(yield* send(web, post(initialize(1))))).at(-1)
        assert.deepStrictEqual(capabilitiesOf(init), { resources: {}, tools: {} })
        // Refused as any undeclared capability is: the request names its revision, the one-shot session
        // starts in it without a handshake.
        const subscribe = { jsonrpc: "2.0", id: 2, method: "resources/subscribe", params: { uri: "test://watched" } }
        const refused = yield* messagesOf(yield* send(web, post(subscribe, { "mcp-protocol-version": "2025-11-25" })))
        assert.strictEqual(refused.at(-1)?.error?.code, -32601)

        // 2026-07-28 on the same server: the updates come on the `subscriptions/listen` stream.
        const stateless2026 = (method: string, name?: string) => ({
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": method,
          ...(name === undefined ? {} : { "mcp-name": name })
        })
        const discover = { jsonrpc: "2.0", id: 3, method: "server/discover", params: { _meta: statelessMeta } }
        const discovered = yield* messagesOf(yield* send(web, post(discover, stateless2026("server/discover"))))
        assert.deepStrictEqual(capabilitiesOf(discovered.at(-1)), promised)
        const listen = {
          jsonrpc: "2.0",
          id: 4,
          method: "subscriptions/listen",
          params: { notifications: { resourceSubscriptions: ["test://watched"] }, _meta: statelessMeta }
        }
        const stream = eventsOf(yield* send(web, post(listen, stateless2026("subscriptions/listen"))))
        const acknowledged = yield* stream.next
        assert.strictEqual(acknowledged?.method, "notifications/subscriptions/acknowledged")
        assert.deepStrictEqual(acknowledged?.params?.notifications, { resourceSubscriptions: ["test://watched"] })
        const touched = yield* messagesOf(
          yield* send(web, post(call(5, "touch", {}, statelessMeta), stateless2026("tools/call", "touch")))
        )
        assert.strictEqual(textOf(touched.at(-1)), "touched")
        const updated = yield* stream.next
        assert.strictEqual(updated?.method, "notifications/resources/updated")
        assert.strictEqual(updated?.params?.uri, "test://watched")
      })
  )

  it.effect("responseMode json: a subscriptions/listen is answered as its stream all the same", () =>
    Effect.gen(function* () {
      const web = yield* serve({ server: Watched, responseMode: "json" })
      const headers = (method: string, name?: string) => ({
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        ...(name === undefined ? {} : { "mcp-name": name })
      })
      const listen = {
        jsonrpc: "2.0",
        id: 1,
        method: "subscriptions/listen",
        params: { notifications: { resourceSubscriptions: ["test://watched"] }, _meta: statelessMeta }
      }
      // Before, the reply waited for the listen to end, which it never does: nothing came, not even the status line.
      const response = yield* send(web, post(listen, headers("subscriptions/listen")))
      assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/)
      const stream = eventsOf(response)
      assert.strictEqual((yield* stream.next)?.method, "notifications/subscriptions/acknowledged")
      const touched = yield* messagesOf(
        yield* send(web, post(call(2, "touch", {}, statelessMeta), headers("tools/call", "touch")))
      )
      assert.strictEqual(textOf(touched.at(-1)), "touched")
      assert.strictEqual((yield* stream.next)?.method, "notifications/resources/updated")
    })
  )

  it.effect("checks the host of the URL and the Origin: loopback names by default, else allowedHosts", () =>
    Effect.gen(function* () {
      const local = yield* serve()
      const status = (web: WebHandler.WebHandler, request: Request) =>
        Effect.map(send(web, request), (response) => response.status)
      assert.strictEqual(yield* status(local, post(initialize(1), {}, "http://evil.example.com/mcp")), 403)
      assert.strictEqual(yield* status(local, post(initialize(1), { origin: "https://evil.example.com" })), 403)
      const page = yield* send(local, post(initialize(1), { origin: "http://localhost:5173" }))
      assert.strictEqual(page.status, 200)
      assert.strictEqual(page.headers.get("access-control-allow-origin"), "http://localhost:5173")
      assert.strictEqual(yield* status(local, post(initialize(1), {}, "http://127.0.0.1:8787/mcp")), 200)

      const deployed = yield* serve({ allowedHosts: ["mcp.example.com"] })
      assert.strictEqual(yield* status(deployed, post(initialize(1), {}, "https://mcp.example.com/mcp")), 200)
      assert.strictEqual(yield* status(deployed, post(initialize(1))), 403)
    })
  )

  it.effect("refuses a body over maxBodyBytes with 413, with or without Content-Length", () =>
    Effect.gen(function* () {
      const web = yield* serve({ maxBodyBytes: 1024 })
      const big = JSON.stringify(call(1, "greet", { name: "x".repeat(4096) }))
      const declared = yield* send(web, post(big, { "content-length": String(big.length) }))
      assert.strictEqual(declared.status, 413)
      const bytes = new TextEncoder().encode(big)
      const streamed = new Request(URL_MCP, {
        method: "POST",
        headers: { accept: "application/json, text/event-stream", "content-type": "application/json" },
        body: new ReadableStream<Uint8Array>({
          start: (controller) => {
            for (let at = 0; at < bytes.length; at += 512) controller.enqueue(bytes.slice(at, at + 512))
            controller.close()
          }
        }),
        duplex: "half"
      } as RequestInit)
      assert.isNull(streamed.headers.get("content-length"))
      assert.strictEqual((yield* send(web, streamed)).status, 413)
      // Within the limit, the same handler answers.
      assert.strictEqual((yield* send(web, post(initialize(2)))).status, 200)
    })
  )

  it.effect("auth: no token gets the hook's 401, a token without a tool's scope its 403", () =>
    Effect.gen(function* () {
      const authentication: HttpAuthentication.Authentication = {
        authenticate: (request) => {
          const header = request.headers["authorization"]
          return header === undefined
            ? Effect.fail(HttpServerResponse.empty({ status: 401, headers: { "www-authenticate": "Bearer" } }))
            : Effect.succeed({ owner: header, scopes: header === "Bearer admin" ? ["admin"] : [], value: header })
        },
        insufficientScope: () => HttpServerResponse.empty({ status: 403 })
      }
      const web = yield* serve({ stateless: true, auth: { authentication } })
      const version = { "mcp-protocol-version": "2025-11-25" }
      assert.strictEqual((yield* send(web, post(call(1, "greet", { name: "A" }), version))).status, 401)
      const user = { ...version, authorization: "Bearer user" }
      const greeted = yield* send(web, post(call(2, "greet", { name: "A" }), user))
      assert.strictEqual(textOf((yield* messagesOf(greeted)).at(-1)), "hello, A")
      assert.strictEqual((yield* send(web, post(call(3, "admin"), user))).status, 403)
      const admin = yield* send(web, post(call(4, "admin"), { ...version, authorization: "Bearer admin" }))
      assert.strictEqual(textOf((yield* messagesOf(admin)).at(-1)), "done")
    })
  )

  describe("the official 2.x SDK client, its fetch calling the handler (no socket)", () => {
    const session = (negotiation: "legacy" | "auto", expected: string) =>
      it.effect(`${negotiation} negotiation -> ${expected}: connects, lists and calls tools, reads progress`, () =>
        Effect.gen(function* () {
          const web = yield* serve()
          const transport = new StreamableHTTPClientTransport(new URL(URL_MCP), {
            fetch: (input, init) => web.handler(new Request(input, init))
          })
          const client = new Client(
            { name: "sdk2-web", version: "2.4.0" },
            { versionNegotiation: { mode: negotiation } }
          )
          yield* Effect.acquireRelease(
            Effect.promise(() => client.connect(transport)),
            () => Effect.promise(() => client.close())
          )
          assert.strictEqual(client.getNegotiatedProtocolVersion?.(), expected)
          assert.strictEqual(client.getServerVersion()?.name, "web")
          const tools = yield* Effect.promise(() => client.listTools())
          assert.deepStrictEqual(
            tools.tools.map((tool) => tool.name),
            ["admin", "gated", "greet", "steps"]
          )
          const greeted = yield* Effect.promise(() => client.callTool({ name: "greet", arguments: { name: "Ada" } }))
          assert.deepStrictEqual(greeted.content, [{ type: "text", text: "hello, Ada" }])
          const progress: Array<number> = []
          const stepped = yield* Effect.promise(() =>
            client.callTool({ name: "steps", arguments: {} }, { onprogress: (p) => progress.push(p.progress) })
          )
          assert.deepStrictEqual(stepped.content, [{ type: "text", text: "stepped" }])
          assert.deepStrictEqual(progress, [1, 2, 3])
        })
      )
    session("legacy", "2025-11-25")
    session("auto", "2026-07-28")
  })
})
