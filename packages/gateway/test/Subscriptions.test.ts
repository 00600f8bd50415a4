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
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Middleware from "@effect-mcp/server/Middleware"
import * as Resource from "@effect-mcp/server/Resource"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Gateway from "../src/Gateway.ts"
import { memory } from "./memoryConnector.ts"

const uri = "test://a/doc"

/** The upstream: one resource; each subscription it records is offered to `log` once recorded. */
const upstream = (log: Queue.Queue<string>) =>
  Layer.mergeAll(
    Resource.layer(Resource.make({ uri, name: "doc", read: Effect.succeed("doc") })),
    Middleware.layer((request, next) =>
      request.method === "resources/subscribe" || request.method === "resources/unsubscribe"
        ? Effect.tap(next, () => Queue.offer(log, `${request.method} ${request.target}`))
        : next
    )
  ).pipe(Layer.provideMerge(McpServer.layer({ name: "a", version: "1.0.0" })))

/** The gateway over "a" on 2025-11-25, and what "a" records. */
const gateway = Effect.gen(function* () {
  const log = yield* Queue.unbounded<string>()
  const a = yield* Layer.build(upstream(log))
  const context = yield* Layer.build(
    Gateway.layer({
      server: { name: "gateway", version: "1.0.0" },
      config: { mcpServers: { a: { command: "a" } } },
      client: { supportedVersions: ["2025-11-25"] },
      healthCheck: false
    }).pipe(Layer.provide(memory({ a })))
  )
  return { log, a, context }
})

describe("Gateway subscriptions", () => {
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
})
