/**
 * `Last-Event-ID` across processes: two Streamable HTTP servers on real
 * sockets (127.0.0.1, port 0), each with its own connection to one SQL event
 * store (a SQLite file; PostgreSQL where it can be started), as two processes
 * behind a load balancer would be. A client's GET stream on server A drops;
 * A keeps sending; the client resumes on server B, which does not hold the
 * session, and gets exactly the events it missed, then the end of the stream.
 */
import type * as EventStore from "@effect-mcp/http/EventStore"
import type * as HttpAuthentication from "@effect-mcp/http/HttpAuthentication"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as SqlDatabase from "@effect-mcp/sql/SqlDatabase"
import * as SqlEventStore from "@effect-mcp/sql/SqlEventStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Postgres from "../support/postgres.ts"

const Shout = Tool.make("shout", {
  description: "Logs its text to every session (a notification on each GET stream)",
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.flatMap(McpServer.McpServer, (server) => Effect.as(server.log("info", text), "ok"))
})

const Server = Tool.layer(Shout).pipe(Layer.provideMerge(McpServer.layer({ name: "replica", version: "1.0.0" })))

/** Any bearer token stands for a principal of that name (the server then authenticates every request). */
const authentication: HttpAuthentication.Authentication = {
  authenticate: (request) => {
    const header = request.headers["authorization"]
    return header === undefined
      ? Effect.fail(HttpServerResponse.empty({ status: 401 }))
      : Effect.succeed({ owner: header, scopes: [], value: undefined })
  },
  insufficientScope: () => HttpServerResponse.empty({ status: 403 })
}

/** A server on 127.0.0.1:0 keeping its events in `store` (authenticating with `auth`); its endpoint URL. */
const serve = (store: EventStore.EventStoreShape, auth?: NodeMcpServer.HttpAuth) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(NodeMcpServer.layerHttp(Server, { host: "127.0.0.1", eventStore: store, auth }))
    return `${yield* Effect.provideContext(NodeMcpServer.url, context)}/mcp`
  })

interface Event {
  readonly id: string | undefined
  readonly data: string
}

const parseEvents = (text: string): Array<Event> =>
  text
    .split("\n\n")
    .filter((block) => block.trim() !== "" && !block.startsWith(":"))
    .map((block) => {
      let id: string | undefined
      const data: Array<string> = []
      for (const line of block.split("\n")) {
        if (line.startsWith("id: ")) id = line.slice(4)
        else if (line.startsWith("data: ")) data.push(line.slice(6))
        else if (line === "data:") data.push("")
      }
      return { id, data: data.join("\n") }
    })

const version = "2025-11-25"
const headers = (session?: string, extra: Record<string, string> = {}) => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": version,
  ...(session === undefined ? {} : { "mcp-session-id": session }),
  ...extra
})

const post = (url: string, body: object, session?: string) =>
  Effect.promise(async () => {
    const response = await fetch(url, { method: "POST", headers: headers(session), body: JSON.stringify(body) })
    return { response, text: await response.text() }
  })

/** An open SSE body read as events until a predicate holds. */
const openGet = (url: string, session: string, lastEventId?: string, more: Record<string, string> = {}) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const abort = new AbortController()
      const extra: Record<string, string> = { accept: "text/event-stream", ...more }
      if (lastEventId !== undefined) extra["last-event-id"] = lastEventId
      const response = await fetch(url, { method: "GET", headers: headers(session, extra), signal: abort.signal })
      const reader = response.body!.getReader()
      const decoder = new TextDecoder()
      let text = ""
      let ended = false
      const readUntil = async (done: (events: ReadonlyArray<Event>) => boolean) => {
        while (!done(parseEvents(text)) && !ended) {
          const chunk = await reader.read()
          if (chunk.done) ended = true
          else text += decoder.decode(chunk.value, { stream: true })
        }
        return { events: parseEvents(text), ended }
      }
      return { response, readUntil, abort: () => abort.abort() }
    }),
    (get) => Effect.sync(() => get.abort())
  )

const logged = (events: ReadonlyArray<Event>) =>
  events.filter((event) => event.data !== "").map((event) => JSON.parse(event.data).params.data as string)

/** The whole scenario on two stores sharing one database. */
const resumeElsewhere = (openStore: Effect.Effect<EventStore.EventStoreShape, unknown, Scope.Scope>) =>
  Effect.gen(function* () {
    const a = yield* serve(yield* openStore)
    const b = yield* serve(yield* openStore)
    const init = yield* post(a, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "t", version: "1" } }
    })
    const session = init.response.headers.get("mcp-session-id")!
    assert.isString(session)
    yield* post(a, { jsonrpc: "2.0", method: "notifications/initialized" }, session)
    const shout = (text: string, id: number) =>
      post(a, { jsonrpc: "2.0", id, method: "tools/call", params: { name: "shout", arguments: { text } } }, session)

    // The GET stream on A: its priming event, then m1; then the connection drops.
    const first = yield* openGet(a, session)
    assert.strictEqual(first.response.status, 200)
    yield* Effect.promise(() => first.readUntil((events) => events.length >= 1))
    yield* shout("m1", 2)
    const seen = yield* Effect.promise(() => first.readUntil((events) => logged(events).includes("m1")))
    const lastSeen = seen.events.at(-1)!.id!
    first.abort()
    // A keeps sending while the client is away: only the shared store keeps these for it.
    yield* shout("m2", 3)
    yield* shout("m3", 4)

    // The client resumes on B, which never saw the session.
    const resumed = yield* openGet(b, session, lastSeen)
    assert.strictEqual(resumed.response.status, 200)
    assert.strictEqual(resumed.response.headers.get("mcp-session-id"), session)
    const replay = yield* Effect.promise(() => resumed.readUntil(() => false))
    assert.isTrue(replay.ended)
    assert.deepStrictEqual(logged(replay.events), ["m2", "m3"])
    // Every replayed event has its id: the client can resume again from any of them.
    const ids = replay.events.map((event) => event.id)
    assert.isTrue(ids.every((id) => id !== undefined && id !== lastSeen))
    // Resuming again from the last replayed event replays nothing more, wherever it lands.
    const again = yield* openGet(b, session, ids.at(-1)!)
    assert.deepStrictEqual((yield* Effect.promise(() => again.readUntil(() => false))).events, [])

    // An event of this session is no key to another one, and an unknown session stays unknown.
    const other = yield* openGet(b, "another-session", lastSeen)
    assert.strictEqual(other.response.status, 404)
    const unknown = yield* openGet(b, session, "nope_1")
    assert.strictEqual(unknown.response.status, 404)
    // A store not marked shared (the in-memory default) answers only for the sessions of its own process.
    const unshared = yield* serve({ ...(yield* openStore), shared: false })
    assert.strictEqual((yield* openGet(unshared, session, lastSeen)).response.status, 404)
    // Nor does a server that authenticates: who owns a session is known only where it lives.
    const guarded = yield* serve(yield* openStore, { authentication })
    const refused = yield* openGet(guarded, session, lastSeen, { authorization: "Bearer someone" })
    assert.strictEqual(refused.response.status, 404)
  })

const sqliteStores = Effect.gen(function* () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-mcp-resume-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
  const filename = path.join(dir, "events.db")
  // Each store has its own connection to the file, as each process would.
  return SqlDatabase.use(`sqlite:${filename}`, SqlEventStore.make())
})

describe("Last-Event-ID on another server sharing the SQL event store", () => {
  it.live("SQLite: the GET stream resumed on the other server replays exactly the missed events", () =>
    Effect.flatMap(sqliteStores, resumeElsewhere).pipe(Effect.scoped)
  )
})

Postgres.describePostgres("PostgreSQL", (server) => {
  it.live("the GET stream resumed on the other server replays exactly the missed events", () =>
    resumeElsewhere(SqlDatabase.use(server().url, SqlEventStore.make())).pipe(Effect.scoped)
  )
})
