/**
 * What a policy hides, in memory, with two principals (alice, from whom the
 * policy hides every item whose name or URI says "secret", and admin, who sees
 * everything) in front of an effect-mcp upstream: a hidden prompt or template
 * answers `prompts/get` and `completion/complete` word for word as an absent
 * one, before the server looks at the arguments; a 2026-07-28 listen stream
 * is neither acknowledged nor sent an update for a URI its principal may not
 * see, whether it named the URI or a URI it is under, and a 2025-11-25
 * session subscribed to a URI a hidden one is under is not sent its updates.
 */
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import type * as Resources from "@effect-mcp/protocol/Resources"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Prompt from "@effect-mcp/server/Prompt"
import * as Resource from "@effect-mcp/server/Resource"
import * as ResourceTemplate from "@effect-mcp/server/ResourceTemplate"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { assert, describe, it } from "@effect/vitest"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Gateway from "../src/Gateway.ts"
import type * as Policy from "../src/Policy.ts"
import { memory } from "./memoryConnector.ts"

const secretOnlyForAdmin: Policy.Policy = (item, principal) =>
  principal?.owner === "admin" || !item.name.includes("secret")

const complete = (values: ReadonlyArray<string>) => (prefix: string) =>
  Effect.succeed(values.filter((v) => v.startsWith(prefix)))

/** The upstream "a": a visible and a hidden prompt (each with a required, completed argument), templates and resources. */
const upstream = Layer.mergeAll(
  Prompt.layer(
    ...["open_prompt", "secret_prompt"].map((name) =>
      Prompt.make({
        name,
        arguments: { a: { required: true, complete: complete(["x1", "x2"]) } },
        handler: ({ a }) => Effect.succeed(`${name} ${a}`)
      })
    )
  ),
  ResourceTemplate.layer(
    ...["open", "secret"].map((scheme) =>
      ResourceTemplate.make({
        uriTemplate: `${scheme}://{id}`,
        name: scheme,
        complete: { id: complete(["i1", "i2"]) },
        read: (_, uri) => Effect.succeed(uri)
      })
    ),
    ResourceTemplate.make({ uriTemplate: "res://{x}", name: "any", read: (_, uri) => Effect.succeed(uri) })
  ),
  Resource.layer(
    ...["res://public", "res://secret"].map((uri) => Resource.make({ uri, name: uri, read: Effect.succeed(uri) }))
  )
).pipe(Layer.provideMerge(McpServer.layer({ name: "a", version: "1.0.0" })))

/** The gateway over "a" (on 2025-11-25) with the policy; the upstream's context. */
const gateway = Effect.gen(function* () {
  const a = yield* Layer.build(upstream)
  const context = yield* Layer.build(
    Gateway.layer({
      server: { name: "gateway", version: "1.0.0" },
      config: { mcpServers: { a: { command: "a" } } },
      client: { supportedVersions: ["2025-11-25"] },
      policy: secretOnlyForAdmin,
      healthCheck: false
    }).pipe(Layer.provide(memory({ a })))
  )
  return { a, context }
})

/** A gateway session whose transport says its requests come from `owner`, as an authenticating HTTP server's does. */
const sessionOf = (owner: string) =>
  McpServer.makeSession.pipe(
    Effect.updateService(Transport.Transport, (transport) => ({
      ...transport,
      principal: () => ({ owner, scopes: [], value: {} })
    }))
  )

/** A raw client of the gateway as `owner` (on 2026-07-28 unless told), what it is notified of on `notifications`. */
const rawAs = (
  context: Context.Context<McpServer.McpServer>,
  owner: string,
  version: ProtocolVersion.ProtocolVersion = "2026-07-28"
) =>
  Effect.gen(function* () {
    const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: true })
    yield* sessionOf(owner).pipe(Effect.provideService(Transport.Transport, serverEnd), Effect.provideContext(context))
    const notifications = yield* Queue.unbounded<{ readonly method: string; readonly params: unknown }>()
    const methods = ["notifications/subscriptions/acknowledged", "notifications/resources/updated"]
    const session = yield* ClientSession.make({
      clientInfo: { name: owner, version: "1.0.0" },
      capabilities: {},
      supportedVersions: [version],
      notificationHandlers: new Map(
        methods.map((method) => [
          method,
          (params: unknown) => Effect.asVoid(Queue.offer(notifications, { method, params }))
        ])
      )
    }).pipe(Effect.provideService(Transport.Transport, clientEnd))
    /** Opens a listen stream for `uris`; the URIs its acknowledgement names. */
    const listen = (uris: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        yield* Effect.forkScoped(
          session.request("subscriptions/listen", { notifications: { resourceSubscriptions: uris } })
        )
        const ack = yield* Queue.take(notifications)
        assert.strictEqual(ack.method, "notifications/subscriptions/acknowledged")
        const params = ack.params as { readonly notifications: Resources.SubscriptionFilter }
        return params.notifications.resourceSubscriptions
      })
    /** The URI of the next update received. */
    const update = Effect.map(Queue.take(notifications), (n) => {
      assert.strictEqual(n.method, "notifications/resources/updated")
      return (n.params as Resources.ResourceUpdatedParams).uri
    })
    return { session, listen, update }
  })

const errorOf = (error: unknown) => {
  const { code, message, data } = error as { readonly code: number; readonly message: string; readonly data: unknown }
  return { code, message, data }
}

/** Alice and admin, each on a 2025-11-25 session of the gateway. */
const principals = Effect.gen(function* () {
  const { context } = yield* gateway
  const connect = (owner: string) =>
    McpTest.makeClientFor(sessionOf(owner), { revision: "2025-11-25" }).pipe(Effect.provideContext(context))
  return { alice: yield* connect("alice"), admin: yield* connect("admin") }
})

const refusal = <A, E>(effect: Effect.Effect<A, E>) => Effect.map(Effect.flip(effect), errorOf)
const unknownPrompt = (name: string) => ({ code: -32602, message: `Unknown prompt: ${name}`, data: undefined })
const unknownTemplate = (uri: string) => ({
  code: -32602,
  message: `Unknown resource template: ${uri}`,
  data: undefined
})
const prompt = (name: string) => ({ type: "ref/prompt", name }) as const
const template = (uri: string) => ({ type: "ref/resource", uri }) as const
const values = (result: { readonly completion: { readonly values: ReadonlyArray<string> } }) => result.completion.values

describe("a hidden item answers as an absent one", () => {
  it.effect("prompts/get of a hidden prompt, before its required arguments are checked", () =>
    Effect.gen(function* () {
      const { alice, admin } = yield* principals
      // Without its required argument: as absent, not "Missing required argument(s)" naming them.
      assert.deepStrictEqual(yield* refusal(alice.getPrompt("a__nope")), unknownPrompt("a__nope"))
      assert.deepStrictEqual(yield* refusal(alice.getPrompt("a__secret_prompt")), unknownPrompt("a__secret_prompt"))
      assert.deepStrictEqual(
        yield* refusal(alice.getPrompt("a__secret_prompt", { a: "1" })),
        unknownPrompt("a__secret_prompt")
      )
      // Admin sees it, and is told what it needs.
      assert.strictEqual(
        (yield* refusal(admin.getPrompt("a__secret_prompt"))).message,
        "Missing required argument(s) for prompt a__secret_prompt: a"
      )
      const got = yield* admin.getPrompt("a__secret_prompt", { a: "1" })
      assert.deepStrictEqual(got.messages[0]?.content, { type: "text", text: "secret_prompt 1" })
    })
  )

  it.effect("completion/complete of a hidden prompt or template", () =>
    Effect.gen(function* () {
      const { alice, admin } = yield* principals
      // Of an argument it has, of one it has not; of a template, of a URI only it serves.
      for (const argument of ["a", "zz"]) {
        assert.deepStrictEqual(
          yield* refusal(alice.complete(prompt("a__nope"), { name: argument, value: "" })),
          unknownPrompt("a__nope")
        )
        assert.deepStrictEqual(
          yield* refusal(alice.complete(prompt("a__secret_prompt"), { name: argument, value: "" })),
          unknownPrompt("a__secret_prompt")
        )
      }
      for (const [absent, hidden] of [
        ["nope://{id}", "secret://{id}"],
        ["nope://7", "secret://7"]
      ] as const) {
        assert.deepStrictEqual(
          yield* refusal(alice.complete(template(absent), { name: "id", value: "" })),
          unknownTemplate(absent)
        )
        assert.deepStrictEqual(
          yield* refusal(alice.complete(template(hidden), { name: "id", value: "" })),
          unknownTemplate(hidden)
        )
      }

      // What alice may see is completed for her; admin sees it all.
      assert.deepStrictEqual(values(yield* alice.complete(prompt("a__open_prompt"), { name: "a", value: "x" })), [
        "x1",
        "x2"
      ])
      assert.deepStrictEqual(values(yield* alice.complete(template("open://{id}"), { name: "id", value: "" })), [
        "i1",
        "i2"
      ])
      assert.deepStrictEqual(values(yield* admin.complete(prompt("a__secret_prompt"), { name: "a", value: "" })), [
        "x1",
        "x2"
      ])
      assert.deepStrictEqual(values(yield* admin.complete(template("secret://{id}"), { name: "id", value: "i" })), [
        "i1",
        "i2"
      ])
    })
  )
})

describe("updates of a hidden resource", () => {
  it.effect(
    "a 2026-07-28 listen is neither acknowledged nor updated for a hidden URI, named or under a URI it names",
    () =>
      Effect.gen(function* () {
        const { a, context } = yield* gateway
        const alice = yield* rawAs(context, "alice")
        const admin = yield* rawAs(context, "admin")
        // "res://" is a URI the visible template serves, and the hidden res://secret is under it.
        const acknowledged = yield* alice.listen(["res://secret", "res://", "zzz://nope", "res://public"])
        // Admin follows res://secret: the upstream is subscribed to it for admin, and its update reaches the gateway.
        assert.deepStrictEqual(yield* admin.listen(["res://secret"]), ["res://secret"])
        yield* McpServer.resourceUpdated("res://secret").pipe(Effect.provideContext(a))
        assert.strictEqual(yield* admin.update, "res://secret")
        // The update's broadcast had started alice's send (if any) by then: one of it would come before this.
        yield* McpServer.resourceUpdated("res://public").pipe(Effect.provideContext(a))
        assert.strictEqual(yield* alice.update, "res://public")
        // Hidden as absent: neither is acknowledged.
        assert.deepStrictEqual(acknowledged, ["res://", "res://public"])
      })
  )
  it.effect("a 2025-11-25 session subscribed to a URI a hidden one is under is not sent the hidden one's updates", () =>
    Effect.gen(function* () {
      const { a, context } = yield* gateway
      const alice = yield* rawAs(context, "alice", "2025-11-25")
      const admin = yield* rawAs(context, "admin", "2025-11-25")
      // The hidden URI is refused as an absent one; "res://", which the visible template serves, is taken.
      assert.deepStrictEqual(
        errorOf(yield* Effect.flip(alice.session.request("resources/subscribe", { uri: "res://secret" }))),
        { code: -32002, message: "Resource not found", data: { uri: "res://secret" } }
      )
      yield* alice.session.request("resources/subscribe", { uri: "res://" })
      // Admin follows res://secret: the upstream is subscribed to it for admin, and its update reaches the gateway.
      yield* admin.session.request("resources/subscribe", { uri: "res://secret" })
      yield* McpServer.resourceUpdated("res://secret").pipe(Effect.provideContext(a))
      assert.strictEqual(yield* admin.update, "res://secret")
      // The gateway relays the updates of res:// in order: one of res://secret for alice would come before this.
      yield* McpServer.resourceUpdated("res://public").pipe(Effect.provideContext(a))
      assert.strictEqual(yield* alice.update, "res://public")
    })
  )
})
