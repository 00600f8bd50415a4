import { assert, describe, it } from "@effect/vitest"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Session from "@effect-mcp/engine/Session"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Features from "@effect-mcp/protocol/Features"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Resource from "@effect-mcp/server/Resource"
import * as ResourceTemplate from "@effect-mcp/server/ResourceTemplate"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { type Obj, revisions, testServer } from "./fixtures.ts"

const text = Resource.make({
  uri: "test://static-text",
  name: "static-text",
  title: "Static text",
  mimeType: "text/plain",
  icons: [{ src: "https://example.com/i.png" }],
  read: Effect.succeed("hello")
})

const binary = Resource.make({
  uri: "test://static-binary",
  name: "static-binary",
  mimeType: "application/octet-stream",
  cache: { ttlMs: 60_000, cacheScope: "public" },
  read: Effect.succeed(new Uint8Array([0, 1, 2, 255]))
})

const item = ResourceTemplate.make({
  uriTemplate: "test://items/{id}{?format}",
  name: "item",
  mimeType: "application/json",
  variables: Schema.Struct({ id: Schema.FiniteFromString, format: Schema.optionalKey(Schema.String) }),
  complete: { id: (value) => Effect.succeed(["1", "12", "123", "2"].filter((v) => v.startsWith(value))) },
  read: ({ id, format }) => Effect.succeed(JSON.stringify({ id, format: format ?? "plain" }))
})

const features = Layer.mergeAll(Resource.layer(text, binary), ResourceTemplate.layer(item))

describe("resources on every revision", () => {
  for (const version of revisions) {
    it.effect(`${version}: list, templates, text and blob reads`, () =>
      Effect.gen(function* () {
        const { request } = yield* McpTest.connectRaw(testServer(features), { revision: version })
        const listed = (yield* request("resources/list")) as Obj
        assert.deepStrictEqual(
          listed.resources.map((r: Obj) => r.uri),
          ["test://static-binary", "test://static-text"]
        )
        const staticText = listed.resources[1]
        assert.strictEqual("title" in staticText, Features.has(version, "title"))
        assert.strictEqual("icons" in staticText, Features.has(version, "icons"))
        const templates = (yield* request("resources/templates/list")) as Obj
        assert.deepStrictEqual(templates.resourceTemplates, [
          { uriTemplate: "test://items/{id}{?format}", name: "item", mimeType: "application/json" }
        ])
        const read = (yield* request("resources/read", { uri: "test://static-text" })) as Obj
        assert.deepStrictEqual(read.contents, [{ uri: "test://static-text", mimeType: "text/plain", text: "hello" }])
        const blob = (yield* request("resources/read", { uri: "test://static-binary" })) as Obj
        assert.strictEqual(blob.contents[0].blob, "AAEC/w==")
        if (Features.has(version, "cacheHints")) {
          assert.strictEqual(blob.ttlMs, 60_000)
          assert.strictEqual(blob.cacheScope, "public")
          assert.strictEqual(read.ttlMs, 0)
        } else {
          assert.isUndefined(blob.ttlMs)
        }
        const templated = (yield* request("resources/read", { uri: "test://items/42?format=json" })) as Obj
        assert.deepStrictEqual(JSON.parse(templated.contents[0].text), { id: 42, format: "json" })
        assert.strictEqual(templated.contents[0].uri, "test://items/42?format=json")
      })
    )

    it.effect(`${version}: an unknown resource gets the revision's not-found code`, () =>
      Effect.gen(function* () {
        const { session: client } = yield* McpTest.connectRaw(testServer(features), { revision: version })
        for (const uri of ["test://nothing", "test://items/not-a-number"]) {
          const error = (yield* Effect.flip(
            client.peer.request("resources/read", client.state.revision!.stateless ? statelessParams(uri) : { uri })
          )) as Obj
          assert.strictEqual(error.code, Features.has(version, "stateless") ? -32602 : -32002, uri)
          assert.deepStrictEqual(error.data, { uri })
        }
      })
    )

    if (Features.has(version, "resourceSubscribe")) {
      it.effect(`${version}: resources/updated goes only to subscribers, until they unsubscribe`, () =>
        Effect.gen(function* () {
          const a = yield* McpTest.connectRaw(testServer(features), { revision: version })
          const b = yield* McpTest.makeRawClient({ revision: version }).pipe(Effect.provideContext(a.context))
          assert.isDefined(a.session.state.peerCapabilities.resources)
          yield* a.request("resources/subscribe", { uri: "test://static-text" })
          yield* a.drain
          yield* b.drain
          yield* McpServer.resourceUpdated("test://static-text").pipe(
            Effect.provideService(McpServer.McpServer, a.server)
          )
          yield* McpServer.resourceUpdated("test://static-binary").pipe(
            Effect.provideService(McpServer.McpServer, a.server)
          )
          const got = yield* a.drain
          assert.deepStrictEqual(got, [
            { method: "notifications/resources/updated", params: { uri: "test://static-text" } }
          ])
          assert.deepStrictEqual(yield* b.drain, [])
          yield* a.request("resources/unsubscribe", { uri: "test://static-text" })
          yield* McpServer.resourceUpdated("test://static-text").pipe(
            Effect.provideService(McpServer.McpServer, a.server)
          )
          assert.deepStrictEqual(yield* a.drain, [])
        })
      )
    }
  }
})

const statelessParams = (uri: string) => ({
  uri,
  _meta: {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {}
  }
})

describe("subscriptions", () => {
  it.effect("two sessions of one server: only the subscriber is told, sub-resources included", () =>
    Effect.gen(function* () {
      const a = yield* McpTest.connectRaw(testServer(features), { revision: "2025-11-25" })
      const b = yield* McpTest.makeRawClient({ revision: "2025-11-25" }).pipe(Effect.provideContext(a.context))
      assert.strictEqual(a.server, b.server)
      yield* b.drain
      yield* a.request("resources/subscribe", { uri: "test://items/" })
      yield* a.drain
      yield* a.server.resourceUpdated("test://items/7")
      const got = yield* a.drain
      assert.deepStrictEqual(got, [{ method: "notifications/resources/updated", params: { uri: "test://items/7" } }])
      assert.deepStrictEqual(yield* b.drain, [])
    })
  )

  it.effect("resourceSubscriptions decides, at each declaration, whether resources.subscribe is declared", () =>
    Effect.gen(function* () {
      let supported = false
      const server = testServer(features, { resourceSubscriptions: () => supported })
      const before = yield* McpTest.connectRaw(server, { revision: "2025-11-25" })
      assert.deepStrictEqual((before.session.state.peerCapabilities as Obj).resources, { listChanged: true })
      supported = true
      const after = yield* McpTest.makeRawClient({ revision: "2025-11-25" }).pipe(Effect.provideContext(before.context))
      assert.deepStrictEqual((after.session.state.peerCapabilities as Obj).resources, {
        subscribe: true,
        listChanged: true
      })
    })
  )

  it.effect("2026-07-28 subscriptions/listen acknowledges, then streams only what was asked for", () =>
    Effect.gen(function* () {
      const {
        session: client,
        server,
        notifications
      } = yield* McpTest.connectRaw(testServer(features), { revision: "2026-07-28" })
      const listen = yield* client
        .request("subscriptions/listen", {
          notifications: {
            resourcesListChanged: true,
            resourceSubscriptions: ["test://static-text"],
            toolsListChanged: true
          }
        })
        .pipe(Effect.forkChild)
      const ack = yield* Queue.take(notifications)
      assert.strictEqual(ack.method, "notifications/subscriptions/acknowledged")
      const ackParams = ack.params as Obj
      // No tools are registered, so tools list changes are not honoured.
      assert.deepStrictEqual(ackParams.notifications, {
        resourcesListChanged: true,
        resourceSubscriptions: ["test://static-text"]
      })
      const subscriptionId = ackParams._meta["io.modelcontextprotocol/subscriptionId"]
      assert.isDefined(subscriptionId)
      yield* server.resourceUpdated("test://static-binary")
      yield* server.resourceUpdated("test://static-text")
      yield* server.listChanged("prompts")
      yield* server.listChanged("resources")
      // The listen stream keeps order, and the resources list change is published last:
      // anything let through that should not be arrives before it.
      const got: Array<McpTest.Notice> = []
      while (got.at(-1)?.method !== "notifications/resources/list_changed") got.push(yield* Queue.take(notifications))
      assert.deepStrictEqual(got, [
        {
          method: "notifications/resources/updated",
          params: { uri: "test://static-text", _meta: { "io.modelcontextprotocol/subscriptionId": subscriptionId } }
        },
        {
          method: "notifications/resources/list_changed",
          params: { _meta: { "io.modelcontextprotocol/subscriptionId": subscriptionId } }
        }
      ])
      assert.isUndefined(listen.pollUnsafe())
    })
  )
})

describe("the bound on subscriptions (maxSubscriptions)", () => {
  const tooMany = (max: number) => ({
    code: -32029,
    message: `Too many subscriptions: a session holds at most ${max}; unsubscribe from one first`,
    data: { maxSubscriptions: max }
  })
  const refusal = (error: unknown) => {
    const { code, message, data } = error as Obj
    return { code, message, data }
  }

  it.effect("one distinct URI past the bound is refused; held ones re-subscribe, an unsubscribe makes room", () =>
    Effect.gen(function* () {
      const {
        session: client,
        server,
        request,
        drain
      } = yield* McpTest.connectRaw(testServer(features, { maxSubscriptions: 3 }), { revision: "2025-11-25" })
      for (const uri of ["test://items/1", "test://items/2", "test://items/3"]) {
        yield* request("resources/subscribe", { uri })
      }
      const refused = yield* Effect.flip(client.peer.request("resources/subscribe", { uri: "test://items/4" }))
      assert.deepStrictEqual(refusal(refused), tooMany(3))
      // At the bound, a URI held already is no new one.
      assert.deepStrictEqual(yield* request("resources/subscribe", { uri: "test://items/2" }), {})
      // The session keeps serving, and keeps what it held; the refused URI is not followed.
      const read = (yield* request("resources/read", { uri: "test://static-text" })) as Obj
      assert.strictEqual(read.contents[0].text, "hello")
      yield* drain
      yield* server.resourceUpdated("test://items/2")
      yield* server.resourceUpdated("test://items/4")
      assert.deepStrictEqual(yield* drain, [
        { method: "notifications/resources/updated", params: { uri: "test://items/2" } }
      ])
      // An unsubscribe makes room for one more, and only one.
      yield* request("resources/unsubscribe", { uri: "test://items/1" })
      yield* request("resources/subscribe", { uri: "test://items/4" })
      const again = yield* Effect.flip(client.peer.request("resources/subscribe", { uri: "test://items/5" }))
      assert.deepStrictEqual(refusal(again), tooMany(3))
      yield* server.resourceUpdated("test://items/1")
      yield* server.resourceUpdated("test://items/4")
      assert.deepStrictEqual(yield* drain, [
        { method: "notifications/resources/updated", params: { uri: "test://items/4" } }
      ])
    })
  )

  it.effect("by default a session holds 1000 subscriptions, the sessions of a server each their own", () =>
    Effect.gen(function* () {
      const a = yield* McpTest.connectRaw(testServer(features), { revision: "2025-11-25" })
      const b = yield* McpTest.makeRawClient({ revision: "2025-11-25" }).pipe(Effect.provideContext(a.context))
      for (let i = 0; i < 1000; i++) yield* a.request("resources/subscribe", { uri: `test://items/${i}` })
      const refused = yield* Effect.flip(a.session.peer.request("resources/subscribe", { uri: "test://items/1000" }))
      assert.deepStrictEqual(refusal(refused), tooMany(1000))
      assert.deepStrictEqual(yield* b.request("resources/subscribe", { uri: "test://items/1000" }), {})
    })
  )

  it.effect(
    "a session continued from its snapshot keeps its subscriptions, counted; each change is in its snapshot",
    () =>
      Effect.gen(function* () {
        const context = yield* Layer.build(testServer(features, { maxSubscriptions: 3 }))
        const [serverEnd, rawEnd] = yield* MemoryTransport.makePair()
        const session = yield* McpServer.makeSession.pipe(
          Effect.provideService(Transport.Transport, serverEnd),
          Effect.provideService(Session.StartInitialized, {
            revision: "2025-11-25",
            peerCapabilities: {},
            peerInfo: { name: "client", version: "1.0.0" },
            features: { "resources/subscriptions": ["test://items/1", "test://items/2"] },
            nextRequestId: 1
          }),
          Effect.provideContext(context)
        )
        // What a keeper of its snapshots sets (SessionRegistry): told of each change.
        let changes = 0
        session.state.onChange = () => changes++
        const inbox = yield* Queue.unbounded<Obj>()
        yield* rawEnd.incoming.pipe(
          Stream.runForEach((frame) =>
            Result.isSuccess(frame) ? Queue.offer(inbox, frame.success as Obj) : Effect.void
          ),
          Effect.forkScoped
        )
        let id = 0
        const request = (method: string, params: object) =>
          Effect.andThen(rawEnd.send({ jsonrpc: "2.0", id: ++id, method, params } as never), Queue.take(inbox))
        const kept = () => session.feature("resources/subscriptions")

        assert.deepStrictEqual((yield* request("resources/subscribe", { uri: "test://items/3" })).result, {})
        assert.deepStrictEqual(kept(), ["test://items/1", "test://items/2", "test://items/3"])
        assert.strictEqual(changes, 1)
        // The two it was continued with count: a fourth is one too many.
        const refused = (yield* request("resources/subscribe", { uri: "test://items/4" })).error
        assert.deepStrictEqual(refused, tooMany(3))
        assert.strictEqual(changes, 1)
        yield* McpServer.resourceUpdated("test://items/1").pipe(Effect.provideContext(context))
        assert.deepStrictEqual(yield* Queue.take(inbox), {
          jsonrpc: "2.0",
          method: "notifications/resources/updated",
          params: { uri: "test://items/1" }
        })
        yield* request("resources/unsubscribe", { uri: "test://items/1" })
        assert.deepStrictEqual(kept(), ["test://items/2", "test://items/3"])
        yield* request("resources/unsubscribe", { uri: "test://items/2" })
        yield* request("resources/unsubscribe", { uri: "test://items/3" })
        assert.isUndefined(kept())
        assert.strictEqual(changes, 4)
      })
  )

  it.effect("2026-07-28: a subscriptions/listen naming more distinct URIs than the bound is refused", () =>
    Effect.gen(function* () {
      const { session: client, notifications } = yield* McpTest.connectRaw(
        testServer(features, { maxSubscriptions: 2 }),
        { revision: "2026-07-28" }
      )
      // Refused before it is acknowledged: whichever comes first decides.
      const refused = yield* Effect.raceFirst(
        Effect.flip(
          client.request("subscriptions/listen", {
            notifications: { resourceSubscriptions: ["test://items/1", "test://items/2", "test://items/3"] }
          })
        ),
        Queue.take(notifications)
      )
      assert.deepStrictEqual(refusal(refused), tooMany(2))
      // A URI named twice counts once: this one is acknowledged.
      const listen = yield* client
        .request("subscriptions/listen", {
          notifications: { resourceSubscriptions: ["test://items/1", "test://items/2", "test://items/1"] }
        })
        .pipe(Effect.forkChild)
      const ack = yield* Queue.take(notifications)
      assert.strictEqual(ack.method, "notifications/subscriptions/acknowledged")
      assert.deepStrictEqual((ack.params as Obj).notifications.resourceSubscriptions, [
        "test://items/1",
        "test://items/2",
        "test://items/1"
      ])
      assert.isUndefined(listen.pollUnsafe())
    })
  )
})

describe("completion", () => {
  for (const version of revisions) {
    it.effect(`${version}: template variables complete`, () =>
      Effect.gen(function* () {
        const { request, session: client } = yield* McpTest.connectRaw(testServer(features), { revision: version })
        const caps = client.state.peerCapabilities as Obj
        assert.strictEqual("completions" in caps, Features.has(version, "completionsCapability"))
        const result = (yield* request("completion/complete", {
          ref: { type: "ref/resource", uri: "test://items/{id}{?format}" },
          argument: { name: "id", value: "1" }
        })) as Obj
        assert.deepStrictEqual(result.completion, { values: ["1", "12", "123"], total: 3, hasMore: false })
      })
    )
  }
})
