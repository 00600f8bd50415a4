/**
 * `resourceUpdateVisible`: asked of every recipient of a resource update, with
 * its principal (the one its session's transport authenticated, or its listen
 * request's), so a subscription to a URI does not carry the updates of a URI
 * under it that the predicate refuses its principal.
 */
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as ResourceTemplate from "@effect-mcp/server/ResourceTemplate"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import { type Obj, testServer } from "./fixtures.ts"

const items = ResourceTemplate.layer(
  ResourceTemplate.make({ uriTemplate: "test://items/{id}", name: "item", read: (_, uri) => Effect.succeed(uri) })
)

/** A server telling only admin of the updates whose URI says "secret", everyone of the others; what it was asked. */
const setup = Effect.gen(function* () {
  const asked: Array<readonly [uri: string, owner: string | undefined]> = []
  const context = yield* Layer.build(
    testServer(items, {
      resourceUpdateVisible: (uri, principal) =>
        Effect.sync(() => {
          asked.push([uri, principal?.owner])
          return principal?.owner === "admin" || !uri.includes("secret")
        })
    })
  )
  return { context, server: Context.get(context, McpServer.McpServer), asked }
})

/** A raw client of the server as `owner` (none: a transport that does not authenticate), on `version`. */
const clientAs = (
  context: Context.Context<McpServer.McpServer>,
  owner: string | undefined,
  version: ProtocolVersion.ProtocolVersion
) =>
  Effect.gen(function* () {
    const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: true })
    const authenticated: Transport.TransportShape =
      owner === undefined ? serverEnd : { ...serverEnd, principal: () => ({ owner, scopes: [], value: {} }) }
    yield* McpServer.makeSession.pipe(
      Effect.provideService(Transport.Transport, authenticated),
      Effect.provideContext(context)
    )
    const notifications = yield* Queue.unbounded<{ readonly method: string; readonly params: Obj }>()
    const methods = ["notifications/subscriptions/acknowledged", "notifications/resources/updated"]
    const session = yield* ClientSession.make({
      clientInfo: { name: owner ?? "anonymous", version: "1.0.0" },
      capabilities: {},
      supportedVersions: [version],
      notificationHandlers: new Map(
        methods.map((method) => [
          method,
          (params: unknown) => Effect.asVoid(Queue.offer(notifications, { method, params: params as Obj }))
        ])
      )
    }).pipe(Effect.provideService(Transport.Transport, clientEnd))
    /** The URIs of the updates received so far, after a ping round trip (the server sent them before its answer). */
    const updated = Effect.andThen(
      session.request("ping", {}),
      Effect.map(Queue.clear(notifications), (got) =>
        got.map((n) => {
          assert.strictEqual(n.method, "notifications/resources/updated")
          return n.params.uri as string
        })
      )
    )
    return { session, notifications, updated }
  })

describe("resourceUpdateVisible", () => {
  it.effect("a 2025-11-25 session subscribed by prefix is not sent an update its principal is refused", () =>
    Effect.gen(function* () {
      const { context, server, asked } = yield* setup
      const alice = yield* clientAs(context, "alice", "2025-11-25")
      const admin = yield* clientAs(context, "admin", "2025-11-25")
      const anonymous = yield* clientAs(context, undefined, "2025-11-25")
      for (const client of [alice, admin, anonymous]) {
        yield* client.session.request("resources/subscribe", { uri: "test://items/" })
      }
      yield* server.resourceUpdated("test://items/secret")
      yield* server.resourceUpdated("test://items/open")
      assert.deepStrictEqual(yield* alice.updated, ["test://items/open"])
      assert.deepStrictEqual(yield* admin.updated, ["test://items/secret", "test://items/open"])
      assert.deepStrictEqual(yield* anonymous.updated, ["test://items/open"])
      // Asked once per subscriber and update, with the principal its session's transport authenticated.
      assert.deepStrictEqual(asked, [
        ["test://items/secret", "alice"],
        ["test://items/secret", "admin"],
        ["test://items/secret", undefined],
        ["test://items/open", "alice"],
        ["test://items/open", "admin"],
        ["test://items/open", undefined]
      ])
      // Not asked of a session that is not subscribed.
      yield* alice.session.request("resources/unsubscribe", { uri: "test://items/" })
      yield* admin.session.request("resources/unsubscribe", { uri: "test://items/" })
      yield* anonymous.session.request("resources/unsubscribe", { uri: "test://items/" })
      yield* server.resourceUpdated("test://items/secret")
      assert.strictEqual(asked.length, 6)
      assert.deepStrictEqual(yield* admin.updated, [])
    })
  )

  it.effect("a 2026-07-28 listen stream is asked with the principal of its request", () =>
    Effect.gen(function* () {
      const { context, server, asked } = yield* setup
      const alice = yield* clientAs(context, "alice", "2026-07-28")
      const admin = yield* clientAs(context, "admin", "2026-07-28")
      for (const client of [alice, admin]) {
        yield* Effect.forkScoped(
          client.session.request("subscriptions/listen", {
            notifications: { resourceSubscriptions: ["test://items/"] }
          })
        )
        assert.strictEqual((yield* Queue.take(client.notifications)).method, "notifications/subscriptions/acknowledged")
      }
      yield* server.resourceUpdated("test://items/secret")
      yield* server.resourceUpdated("test://items/open")
      // Admin's stream has both; alice's, whose send of the first would have started before the second's, only one.
      assert.strictEqual((yield* Queue.take(admin.notifications)).params.uri, "test://items/secret")
      assert.strictEqual((yield* Queue.take(admin.notifications)).params.uri, "test://items/open")
      assert.strictEqual((yield* Queue.take(alice.notifications)).params.uri, "test://items/open")
      assert.deepStrictEqual(asked, [
        ["test://items/secret", "alice"],
        ["test://items/secret", "admin"],
        ["test://items/open", "alice"],
        ["test://items/open", "admin"]
      ])
    })
  )
})
