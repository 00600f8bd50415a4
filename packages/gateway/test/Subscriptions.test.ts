/**
 * Resource subscriptions through the gateway in memory, for a 2026-07-28
 * client (a `subscriptions/listen` naming the URI): the upstream, on
 * 2025-11-25, is subscribed while the listen lasts and unsubscribed when it
 * ends, and its updates reach the listen stream; an upstream connection
 * made again is subscribed again. The 2025 path (`resources/subscribe`,
 * several sessions, a session closing) runs against the official SDK in
 * test/gateway/Subscriptions.test.ts.
 */
import * as McpHost from "@effect-mcp/host/McpHost"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Middleware from "@effect-mcp/server/Middleware"
import * as Resource from "@effect-mcp/server/Resource"
import * as ResourceTemplate from "@effect-mcp/server/ResourceTemplate"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Gateway from "../src/Gateway.ts"
import { memory } from "./memoryConnector.ts"

const uri = "test://a/doc"
/** A resource the upstream refuses to subscribe to. */
const refused = "test://a/refused"

/**
 * The upstream: two resources; each subscription it records is offered to `log` once recorded. A subscription
 * waits for `gate` before it is taken (it is open unless a test closes it); one of `refused` is refused.
 */
const upstream = (log: Queue.Queue<string>, gate: { current: Effect.Effect<void> }) =>
  Layer.mergeAll(
    Resource.layer(
      Resource.make({ uri, name: "doc", read: Effect.succeed("doc") }),
      Resource.make({ uri: refused, name: "refused", read: Effect.succeed("refused") })
    ),
    Middleware.layer((request, next) => {
      if (request.method === "resources/subscribe" && request.target === refused) {
        return Effect.fail(new McpError.InvalidParams({ message: `${refused} cannot be subscribed to` }))
      }
      return request.method === "resources/subscribe" || request.method === "resources/unsubscribe"
        ? Effect.tap(
            Effect.andThen(
              Effect.suspend(() => gate.current),
              next
            ),
            () => Queue.offer(log, `${request.method} ${request.target}`)
          )
        : next
    })
  ).pipe(Layer.provideMerge(McpServer.layer({ name: "a", version: "1.0.0" })))

/** The gateway over "a" on 2025-11-25, what "a" records, and the gate of its subscriptions. */
const gateway = Effect.gen(function* () {
  const log = yield* Queue.unbounded<string>()
  const gate = { current: Effect.void }
  const a = yield* Layer.build(upstream(log, gate))
  const context = yield* Layer.build(
    Gateway.layer({
      server: { name: "gateway", version: "1.0.0" },
      config: { mcpServers: { a: { command: "a" } } },
      client: { supportedVersions: ["2025-11-25"] },
      healthCheck: false
    }).pipe(Layer.provide(memory({ a })))
  )
  return { log, a, context, gate }
})

/** The gateway keeping reads of "a" (on 2026-07-28, its reads carry cache hints), whose `doc` counts its reads. */
const cachingGateway = Effect.gen(function* () {
  let reads = 0
  const a = yield* Layer.build(
    Resource.layer(
      Resource.make({
        uri,
        name: "doc",
        cache: { ttlMs: 60_000, cacheScope: "public" },
        read: Effect.sync(() => `doc #${++reads}`)
      })
    ).pipe(Layer.provideMerge(McpServer.layer({ name: "a", version: "1.0.0" })))
  )
  const context = yield* Layer.build(
    Gateway.layer({
      server: { name: "gateway", version: "1.0.0" },
      config: { mcpServers: { a: { command: "a" } } },
      cache: true,
      healthCheck: false
    }).pipe(Layer.provide(memory({ a })))
  )
  return { a, context }
})

/**
 * The gateway over "a" on 2025-11-25 serving `item://{id}` (each subscription it takes offered to `log`), at most
 * two per session: the gateway's own bound, or its server's (`bound: "server"`).
 */
const boundedGatewayBy = (bound: "gateway" | "server") =>
  Effect.gen(function* () {
    const log = yield* Queue.unbounded<string>()
    const a = yield* Layer.build(
      Layer.mergeAll(
        ResourceTemplate.layer(
          ResourceTemplate.make({ uriTemplate: "item://{id}", name: "item", read: (_, uri) => Effect.succeed(uri) })
        ),
        Middleware.layer((request, next) =>
          request.method === "resources/subscribe"
            ? Effect.tap(next, () => Queue.offer(log, `${request.target}`))
            : next
        )
      ).pipe(Layer.provideMerge(McpServer.layer({ name: "a", version: "1.0.0" })))
    )
    const context = yield* Layer.build(
      Gateway.layer({
        server: { name: "gateway", version: "1.0.0", ...(bound === "server" ? { maxSubscriptions: 2 } : {}) },
        config: { mcpServers: { a: { command: "a" } } },
        client: { supportedVersions: ["2025-11-25"] },
        ...(bound === "gateway" ? { maxSubscriptions: 2 } : {}),
        healthCheck: false
      }).pipe(Layer.provide(memory({ a })))
    )
    return { log, context }
  })
const boundedGateway = boundedGatewayBy("gateway")

describe("Gateway subscriptions", () => {
  it.effect("a session holds at most maxSubscriptions URIs: one more is refused, asking nothing upstream", () =>
    Effect.gen(function* () {
      const { log, context } = yield* boundedGateway
      const client = yield* McpTest.makeRawClient({ revision: "2025-11-25" }).pipe(Effect.provideContext(context))
      yield* client.request("resources/subscribe", { uri: "item://1" })
      yield* client.request("resources/subscribe", { uri: "item://2" })
      const refused = (yield* Effect.flip(client.request("resources/subscribe", { uri: "item://3" }))) as {
        readonly code: number
        readonly message: string
        readonly data?: unknown
      }
      assert.deepStrictEqual(
        [refused.code, refused.message, refused.data],
        [
          -32029,
          "Too many subscriptions: a session holds at most 2; unsubscribe from one first",
          { maxSubscriptions: 2 }
        ]
      )
      // A URI held already is no new subscription; an unsubscribe makes room.
      yield* client.request("resources/subscribe", { uri: "item://1" })
      yield* client.request("resources/unsubscribe", { uri: "item://1" })
      yield* client.request("resources/subscribe", { uri: "item://3" })
      // Another session counts its own.
      const other = yield* McpTest.makeRawClient({ revision: "2025-11-25" }).pipe(Effect.provideContext(context))
      yield* other.request("resources/subscribe", { uri: "item://4" })
      yield* other.request("resources/subscribe", { uri: "item://5" })
      assert.strictEqual(
        ((yield* Effect.flip(other.request("resources/subscribe", { uri: "item://6" }))) as { readonly code: number })
          .code,
        -32029
      )
      // Upstream, each URI taken once, the refused ones never asked.
      assert.deepStrictEqual(yield* Queue.clear(log), ["item://1", "item://2", "item://3", "item://4", "item://5"])
    })
  )

  it.effect(
    "the server's maxSubscriptions bounds the gateway too: one more is refused before it is asked upstream",
    () =>
      Effect.gen(function* () {
        const { log, context } = yield* boundedGatewayBy("server")
        const client = yield* McpTest.makeRawClient({ revision: "2025-11-25" }).pipe(Effect.provideContext(context))
        yield* client.request("resources/subscribe", { uri: "item://1" })
        yield* client.request("resources/subscribe", { uri: "item://2" })
        const refused = (yield* Effect.flip(client.request("resources/subscribe", { uri: "item://3" }))) as {
          readonly code: number
        }
        assert.strictEqual(refused.code, -32029)
        // Before, the gateway (bound 1000) took item://3 upstream, and then its server refused it.
        assert.deepStrictEqual(yield* Queue.clear(log), ["item://1", "item://2"])
      })
  )

  it.effect("a 2026-07-28 listen naming more than maxSubscriptions URIs is refused", () =>
    Effect.gen(function* () {
      const { log, context } = yield* boundedGateway
      const client = yield* McpTest.makeRawClient({ revision: "2026-07-28" }).pipe(Effect.provideContext(context))
      const refused = (yield* Effect.flip(
        client.request("subscriptions/listen", {
          notifications: { resourceSubscriptions: ["item://1", "item://2", "item://3"] }
        })
      )) as { readonly code: number }
      assert.strictEqual(refused.code, -32029)
      assert.deepStrictEqual(yield* Queue.clear(log), [])
    })
  )

  it.effect("an update of the upstream makes the read cache's copy stale: the next read asks the upstream", () =>
    Effect.gen(function* () {
      const { a, context } = yield* cachingGateway
      const client = yield* McpTest.makeRawClient({ revision: "2025-11-25" }).pipe(Effect.provideContext(context))
      const read = Effect.map(
        client.request("resources/read", { uri }),
        (result) => (result as { readonly contents: ReadonlyArray<{ readonly text: string }> }).contents[0]!.text
      )
      yield* client.request("resources/subscribe", { uri })
      assert.strictEqual(yield* read, "doc #1")
      // Fresh for a minute: served from the cache.
      assert.strictEqual(yield* read, "doc #1")
      yield* McpServer.resourceUpdated(uri).pipe(Effect.provideContext(a))
      let update = yield* Queue.take(client.notifications)
      while (update.method !== "notifications/resources/updated") update = yield* Queue.take(client.notifications)
      assert.strictEqual(yield* read, "doc #2")
      assert.strictEqual(yield* read, "doc #2")
    })
  )

  it.effect("a 2026-07-28 listen holds the upstream subscription while it lasts, and gets its updates", () =>
    Effect.gen(function* () {
      const { log, a, context } = yield* gateway
      const client = yield* McpTest.makeRawClient({ revision: "2026-07-28" }).pipe(Effect.provideContext(context))
      const caps = client.session.state.peerCapabilities as { readonly resources?: { readonly subscribe?: boolean } }
      assert.strictEqual(caps.resources?.subscribe, true)

      const listen = yield* client
        .request("subscriptions/listen", { notifications: { resourceSubscriptions: [uri] } })
        .pipe(Effect.forkChild)
      assert.strictEqual((yield* Queue.take(client.notifications)).method, "notifications/subscriptions/acknowledged")
      assert.strictEqual(yield* Queue.take(log), `resources/subscribe ${uri}`)

      yield* McpServer.resourceUpdated(uri).pipe(Effect.provideContext(a))
      const update = yield* Queue.take(client.notifications)
      assert.strictEqual(update.method, "notifications/resources/updated")
      assert.strictEqual((update.params as { readonly uri: string }).uri, uri)

      // The listen ends: nobody follows the URI any more.
      yield* Fiber.interrupt(listen)
      assert.strictEqual(yield* Queue.take(log), `resources/unsubscribe ${uri}`)
    })
  )

  it.effect("a subscription outlives its upstream connection: the next one is subscribed again", () =>
    Effect.gen(function* () {
      const { log, a, context } = yield* gateway
      const client = yield* McpTest.makeRawClient({ revision: "2025-11-25" }).pipe(Effect.provideContext(context))
      yield* client.request("resources/subscribe", { uri })
      assert.strictEqual(yield* Queue.take(log), `resources/subscribe ${uri}`)
      yield* Context.get(context, McpHost.McpHost).restart("a")
      assert.strictEqual(yield* Queue.take(log), `resources/subscribe ${uri}`)
      yield* McpServer.resourceUpdated(uri).pipe(Effect.provideContext(a))
      // The catalog may have changed meanwhile (list_changed): the update is what is waited for.
      let update = yield* Queue.take(client.notifications)
      while (update.method !== "notifications/resources/updated") update = yield* Queue.take(client.notifications)
      assert.strictEqual((update.params as { readonly uri: string }).uri, uri)
    })
  )

  it.effect("a subscribe is answered once the upstream took it; one the upstream refuses fails with its error", () =>
    Effect.gen(function* () {
      const { log, context, gate } = yield* gateway
      const client = yield* McpTest.makeRawClient({ revision: "2025-11-25" }).pipe(Effect.provideContext(context))
      const open = yield* Deferred.make<void>()
      gate.current = Deferred.await(open)
      const subscribing = yield* McpTest.forkIdle(client.request("resources/subscribe", { uri }))
      // Everything has come to rest: the upstream holds the subscription, so the gateway holds the answer.
      assert.isUndefined(subscribing.pollUnsafe())
      gate.current = Effect.void
      yield* Deferred.succeed(open, undefined)
      yield* Fiber.join(subscribing)
      assert.strictEqual(yield* Queue.take(log), `resources/subscribe ${uri}`)

      const error = (yield* Effect.flip(client.request("resources/subscribe", { uri: refused }))) as {
        readonly code: number
        readonly message: string
      }
      assert.deepStrictEqual([error.code, error.message], [-32602, `${refused} cannot be subscribed to`])
      // Not kept: asked again, and refused again.
      const again = (yield* Effect.flip(client.request("resources/subscribe", { uri: refused }))) as {
        readonly code: number
      }
      assert.strictEqual(again.code, -32602)
      // The session holds only what was taken: unsubscribing the refused URI asks nothing upstream.
      yield* client.request("resources/unsubscribe", { uri: refused })
      yield* client.request("resources/unsubscribe", { uri })
      assert.strictEqual(yield* Queue.take(log), `resources/unsubscribe ${uri}`)
    })
  )
})
