/**
 * A session handed from one server to another through its snapshot, as a
 * cluster moves a session when a process is lost (`@effect-mcp/cluster` does
 * this for you; this is the engine API underneath, for your own session
 * store). Two Streamable HTTP servers of the same McpServer:
 *
 * - a client opens a session on the first, sets its log level and subscribes
 *   to a resource;
 * - the first server's change stream brings the session's snapshot (what a
 *   cluster writes to its database), as JSON;
 * - the first lets the session go (`closeSession(id, "Released")`), the
 *   second reopens it from the snapshot (`restoreSession`), and the client
 *   goes on with the same `Mcp-Session-Id`: no new `initialize`, its log
 *   level and subscription still in force.
 *
 *   node --conditions=@effect-mcp/source examples/session-handoff.ts
 *
 * Requests are handed to each server's handler in memory (no sockets), the
 * way a cluster's runner hands it a forwarded request.
 */
import * as assert from "node:assert/strict"
import * as SessionSnapshot from "@effect-mcp/engine/SessionSnapshot"
import * as McpHeaders from "@effect-mcp/http/McpHeaders"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Resource from "@effect-mcp/server/Resource"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

// A tool that logs at two levels: a session that asked for "warning" hears only the second.
const Work = Tool.make("work", {
  description: "Works, and says so at two levels",
  input: Schema.Struct({}),
  handler: () =>
    Effect.gen(function* () {
      yield* ServerRequest.log("info", "working")
      yield* ServerRequest.log("warning", "almost out of coffee")
      return "done"
    })
})
const Status = Resource.make({ uri: "status://now", name: "status", read: Effect.succeed("all good") })
const Server = Layer.mergeAll(Tool.layer(Work), Resource.layer(Status)).pipe(
  Layer.provideMerge(McpServer.layer({ name: "handoff", version: "1.0.0" }))
)

/** What the example reads of a JSON-RPC message. */
interface Message {
  readonly id?: number
  readonly method?: string
  readonly params?: { readonly data?: unknown }
  readonly result?: { readonly content: ReadonlyArray<{ readonly text: string }> }
}

/** POSTs one JSON-RPC message to a server's handler; returns the JSON-RPC messages of its reply. */
const post = (server: StreamableHttpServer.StreamableHttpServer, message: object, sessionId?: string) =>
  Effect.gen(function* () {
    const headers: Record<string, string> = {
      host: "localhost",
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      ...(sessionId === undefined
        ? {}
        : { [McpHeaders.SESSION_ID]: sessionId, [McpHeaders.PROTOCOL_VERSION]: "2025-11-25" })
    }
    const request = HttpServerRequest.fromWeb(
      new Request("http://localhost/mcp", { method: "POST", headers, body: JSON.stringify(message) })
    )
    const response = yield* Effect.provideService(server.handler, HttpServerRequest.HttpServerRequest, request)
    const text = yield* Effect.promise(() => HttpServerResponse.toWeb(response).text())
    const messages = text
      .split("\n")
      .filter((line) => line.startsWith("data: {"))
      .map((line) => JSON.parse(line.slice(6)) as Message)
    return { sessionId: response.headers[McpHeaders.SESSION_ID], messages }
  })

const program = Effect.gen(function* () {
  const first = yield* StreamableHttpServer.make({ session: McpServer.makeSession })
  const second = yield* StreamableHttpServer.make({ session: McpServer.makeSession })
  // What a cluster writes to its database: each change of a session's snapshot, kept from now on.
  const changes = yield* first.changes

  const init = yield* post(first, {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "example", version: "1" } }
  })
  const id = init.sessionId!
  yield* post(first, { jsonrpc: "2.0", method: "notifications/initialized" }, id)
  yield* post(first, { jsonrpc: "2.0", id: 2, method: "logging/setLevel", params: { level: "warning" } }, id)
  yield* post(first, { jsonrpc: "2.0", id: 3, method: "resources/subscribe", params: { uri: "status://now" } }, id)

  // The snapshot once the subscription is in it (each read of the stream sees a session's latest state).
  const saved = yield* changes.pipe(
    Stream.filter((change) => change._tag === "Saved" && "resources/subscriptions" in change.snapshot.features),
    Stream.runHead
  )
  assert.ok(saved._tag === "Some" && saved.value._tag === "Saved")
  const json = SessionSnapshot.toJson(saved.value.snapshot)
  yield* Console.log(`snapshot: ${json}`)

  // The hand-off: the first lets the session go, the second reopens it from the stored JSON.
  yield* first.closeSession(id, "Released")
  const snapshot = SessionSnapshot.fromJson(json)
  assert.ok(snapshot !== undefined)
  assert.equal(yield* second.restoreSession(id, snapshot), true)

  const call = yield* post(
    second,
    { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "work", arguments: {} } },
    id
  )
  const logs = call.messages.filter((m) => m.method === "notifications/message").map((m) => m.params?.data)
  const answer = call.messages.find((m) => m.id === 4)?.result?.content[0]?.text
  assert.deepEqual(logs, ["almost out of coffee"])
  assert.equal(answer, "done")
  yield* Console.log(`on the second server, same session: work -> ${answer}; logs heard: ${logs.join(", ")}`)
  const subscriptions = second.snapshot(id)?.features["resources/subscriptions"]
  assert.deepEqual(subscriptions, ["status://now"])
  yield* Console.log(`still subscribed to: ${String(subscriptions)}`)
  yield* Console.log("ok: session-handoff")
}).pipe(Effect.scoped, Effect.provide(Server))

NodeRuntime.runMain(program)
