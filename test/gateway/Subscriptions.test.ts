/**
 * Resource subscriptions through the gateway, with real peers: the upstream
 * is an official SDK 1.x server over Streamable HTTP in this process that
 * supports subscriptions and records every `resources/subscribe` and
 * `resources/unsubscribe` it receives; downstream clients are SDK 1.x
 * clients over Streamable HTTP. A second SDK server (`plain`) offers a
 * resource without subscriptions.
 */
import * as Gateway from "@effect-mcp/gateway/Gateway"
import type * as Policy from "@effect-mcp/gateway/Policy"
import * as NodeConnector from "@effect-mcp/host/NodeConnector"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { McpServer as SdkServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import {
  ResourceUpdatedNotificationSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as z from "zod"
import { streamableHttp } from "../support/SdkHttpServer.ts"
import * as Fixture from "./fixture.ts"

const watched = "test://watched"

/**
 * An SDK server on 127.0.0.1: `test://watched` (with subscriptions when `subscriptions` is given, each request
 * offered to it as `subscribe <uri>` / `unsubscribe <uri>`) and a tool `touch` announcing an update of `uri`.
 */
const sdkUpstream = (name: string, subscriptions: Queue.Queue<string> | undefined) =>
  Fixture.listenHttp(
    streamableHttp(() => {
      const server = new SdkServer({ name, version: "1.0.0" })
      server.registerResource("watched", name === "plain" ? "test://plain" : watched, {}, async (uri) => ({
        contents: [{ uri: uri.href, text: "watched" }]
      }))
      server.registerTool("touch", { inputSchema: { uri: z.string() } }, async ({ uri }) => {
        await server.server.sendResourceUpdated({ uri })
        return { content: [{ type: "text", text: `touched ${uri}` }] }
      })
      if (subscriptions !== undefined) {
        server.server.registerCapabilities({ resources: { subscribe: true } })
        server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
          Queue.offerUnsafe(subscriptions, `subscribe ${request.params.uri}`)
          return {}
        })
        server.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
          Queue.offerUnsafe(subscriptions, `unsubscribe ${request.params.uri}`)
          return {}
        })
      }
      return server
    })
  )

/** The gateway over the given upstreams, on Streamable HTTP; its endpoint's URL. */
const gateway = (mcpServers: { readonly [name: string]: string }, policy?: Policy.Policy) =>
  Effect.gen(function* () {
    const layer = Gateway.layer({
      server: { name: "gateway", version: "1.0.0" },
      config: {
        mcpServers: Object.fromEntries(Object.entries(mcpServers).map(([k, url]) => [k, { type: "http", url }]))
      },
      healthCheck: false,
      policy
    }).pipe(Layer.provide(NodeConnector.layer()))
    const context = yield* Layer.build(NodeMcpServer.layerHttp(layer)).pipe(Effect.orDie)
    return `${yield* NodeMcpServer.url.pipe(Effect.provideContext(context))}/mcp`
  })

/** An SDK 1.x client of the gateway; the URIs of the updates it receives, in order, on `updates`. */
const client = (url: string) =>
  Effect.gen(function* () {
    const updates = yield* Queue.unbounded<string>()
    const sdk = new Client({ name: "downstream", version: "1.0.0" })
    sdk.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => {
      Queue.offerUnsafe(updates, n.params.uri)
    })
    const transport = new StreamableHTTPClientTransport(new URL(url))
    yield* Effect.acquireRelease(
      Effect.promise(() => sdk.connect(transport)),
      () => Effect.promise(() => sdk.close().catch(() => undefined))
    )
    const subscribe = (uri: string) => Effect.promise(() => sdk.subscribeResource({ uri }))
    /** The JSON-RPC error code a subscription is refused with. */
    const refusal = (uri: string) =>
      Effect.flip(Effect.tryPromise(() => sdk.subscribeResource({ uri }))).pipe(
        Effect.map((e) => (e.cause as { readonly code?: number }).code)
      )
    const unsubscribe = (uri: string) => Effect.promise(() => sdk.unsubscribeResource({ uri }))
    const touch = (uri: string) => Effect.promise(() => sdk.callTool({ name: "subs__touch", arguments: { uri } }))
    /** Ends the session (`DELETE`), as a client going away does. */
    const end = Effect.promise(() => transport.terminateSession())
    return { sdk, updates, subscribe, refusal, unsubscribe, touch, end }
  })

describe("Gateway subscriptions", () => {
  it.live(
    "one upstream subscription per URI; updates reach exactly the sessions subscribed; the last to go unsubscribes",
    () =>
      Effect.gen(function* () {
        const upstreamLog = yield* Queue.unbounded<string>()
        const subs = yield* sdkUpstream("subs", upstreamLog)
        const url = yield* gateway({ subs: subs.url })
        const [a, b] = yield* Effect.all([client(url), client(url)], { concurrency: "unbounded" })
        assert.strictEqual(a.sdk.getServerCapabilities()?.resources?.subscribe, true)

        yield* a.subscribe(watched)
        assert.strictEqual(yield* Queue.take(upstreamLog), `subscribe ${watched}`)
        yield* b.subscribe(watched)
        yield* a.touch(`${watched}/1`)
        assert.strictEqual(yield* Queue.take(a.updates), `${watched}/1`)
        assert.strictEqual(yield* Queue.take(b.updates), `${watched}/1`)

        // b leaves: a still holds the upstream subscription, and b gets nothing more until it comes back.
        yield* b.unsubscribe(watched)
        yield* a.touch(`${watched}/2`)
        assert.strictEqual(yield* Queue.take(a.updates), `${watched}/2`)
        yield* b.subscribe(watched)
        yield* a.touch(`${watched}/3`)
        assert.strictEqual(yield* Queue.take(a.updates), `${watched}/3`)
        // Had b received the second update, it would come before the third on its stream.
        assert.strictEqual(yield* Queue.take(b.updates), `${watched}/3`)

        // b unsubscribes and a's session ends: the last subscriber gone, the upstream is unsubscribed.
        yield* b.unsubscribe(watched)
        yield* a.end
        assert.strictEqual(yield* Queue.take(upstreamLog), `unsubscribe ${watched}`)
        assert.strictEqual(yield* Queue.size(upstreamLog), 0)
      }),
    20_000
  )

  it.live(
    "resources.subscribe is declared while an upstream supports it; an upstream without it, or a hidden URI, is refused",
    () =>
      Effect.gen(function* () {
        const plain = yield* sdkUpstream("plain", undefined)
        const subs = yield* sdkUpstream("subs", yield* Queue.unbounded<string>())
        const alone = yield* client(yield* gateway({ plain: plain.url }))
        assert.isUndefined(alone.sdk.getServerCapabilities()?.resources?.subscribe)
        const both = yield* client(
          yield* gateway({ plain: plain.url, subs: subs.url }, (item) => item.name !== watched)
        )
        assert.strictEqual(both.sdk.getServerCapabilities()?.resources?.subscribe, true)
        // As the upstream would answer: it has no such method.
        assert.strictEqual(yield* both.refusal("test://plain"), -32601)
        // Hidden, as one that does not exist.
        assert.strictEqual(yield* both.refusal(watched), -32002)
        assert.strictEqual(yield* both.refusal("test://nowhere"), -32002)
      }),
    20_000
  )
})
