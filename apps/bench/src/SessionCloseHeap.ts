/**
 * The heap held by a deleted Streamable HTTP session: a stateful session
 * gets 50 replies of 1 MiB, read in full and never resumed (finished
 * streams, whose events the in-memory event store keeps for a client that
 * might), then is deleted. Prints `{ before, held, after, stored }` as JSON:
 * the heap after a full collection before the session opened, while it holds
 * its streams, and after its DELETE, and the bytes of event data stored.
 *
 * Run with `node --expose-gc` (and `--conditions=@effect-mcp/source` inside
 * the workspace); the engine's `SessionCloseFreesStreams` test runs it.
 */
import * as EventStore from "@effect-mcp/http/EventStore"
import * as McpHeaders from "@effect-mcp/http/McpHeaders"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { heapAfterGc } from "./HeapScript.ts"

const replies = 50
const replySize = 1024 * 1024
const version = "2025-11-25"

// A reply of `size` characters (fresh each time: a shared string would be stored once).
const big: Session.Handler = (params) =>
  Effect.sync(() => {
    const size = (params as { readonly arguments?: { readonly size?: number } }).arguments?.size ?? 0
    return { content: [{ type: "text", text: `${Math.random()}`.padEnd(size, "x") }] }
  })

const textOf = (response: HttpServerResponse.HttpServerResponse): Effect.Effect<string> => {
  const body = response.body
  if (body._tag === "Stream") return Effect.orDie(Stream.mkString(Stream.decodeText(body.stream)))
  if (body._tag === "Uint8Array") return Effect.succeed(new TextDecoder().decode(body.body))
  return Effect.succeed("")
}

/** The server in `scope`, with a store that counts the event data it is given. */
const makeServer = Effect.gen(function* () {
  const counted = { stored: 0 }
  const memory = EventStore.makeMemory()
  const store: EventStore.EventStoreShape = {
    ...memory,
    append: (streamId, data) =>
      Effect.tap(memory.append(streamId, data), () => Effect.sync(() => (counted.stored += data.length)))
  }
  const server = yield* StreamableHttpServer.make({
    session: ServerSession.make({
      serverInfo: { name: "heap", version: "1.0.0" },
      capabilities: { tools: {} },
      handlers: new Map([["tools/call", big]])
    }),
    eventStore: store
  })

  /** One request to the endpoint, its reply read in full. */
  const request = (method: "POST" | "DELETE", session: string | undefined, body?: unknown) =>
    Effect.gen(function* () {
      const headers: Record<string, string> = {
        host: "localhost",
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        [McpHeaders.PROTOCOL_VERSION]: version
      }
      if (session !== undefined) headers[McpHeaders.SESSION_ID] = session
      const web = new Request("http://localhost/mcp", {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const response = yield* Effect.provideService(
        server.handler,
        HttpServerRequest.HttpServerRequest,
        HttpServerRequest.fromWeb(web)
      )
      return { session: response.headers[McpHeaders.SESSION_ID], text: yield* textOf(response) }
    }).pipe(Effect.scoped)

  /** A new session that got `count` replies of `size` characters, all read; its id. */
  const open = (count: number, size: number) =>
    Effect.gen(function* () {
      const init = yield* request("POST", undefined, {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "heap", version: "1" } }
      })
      const id = init.session!
      yield* request("POST", id, { jsonrpc: "2.0", method: "notifications/initialized" })
      for (let i = 1; i <= count; i++) {
        yield* request("POST", id, {
          jsonrpc: "2.0",
          id: i,
          method: "tools/call",
          params: { name: "big", arguments: { size } }
        })
      }
      return id
    })

  return { counted, open, remove: (id: string) => Effect.asVoid(request("DELETE", id)) }
})

// Each measurement is taken once the fiber that served the requests has returned: a fiber's own stack
// may still reference the last effect it ran (and so the last reply) while it runs.
const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

const main = async () => {
  const scope = Scope.makeUnsafe()
  const run = <A>(effect: Effect.Effect<A, never, Scope.Scope>): Promise<A> =>
    Effect.runPromise(Scope.provide(effect, scope))
  try {
    const server = await run(makeServer)
    // A first session warms every path up (modules, compiled code, the server's tables).
    await run(Effect.flatMap(server.open(3, replySize), server.remove))
    await settled()
    const before = heapAfterGc()
    server.counted.stored = 0
    const id = await run(server.open(replies, replySize))
    await settled()
    const held = heapAfterGc()
    await run(server.remove(id))
    await settled()
    const after = heapAfterGc()
    return { before, held, after, stored: server.counted.stored }
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

main().then(
  (report) => process.stdout.write(`${JSON.stringify(report)}\n`),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`)
    process.exitCode = 1
  }
)
