/**
 * McpClient against effect-mcp's own McpServer on every revision.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
import type * as Transport from "@effect-mcp/engine/Transport"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import type * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Elicitation from "@effect-mcp/server/Elicitation"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Prompt from "@effect-mcp/server/Prompt"
import * as Resource from "@effect-mcp/server/Resource"
import * as Sampling from "@effect-mcp/server/Sampling"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { clientInfo } from "./fixtures.ts"

const numbered = Array.from({ length: 25 }, (_, i) =>
  Tool.make(`n${i}`, { input: Schema.Struct({}), handler: () => Effect.succeed(`tool ${i}`) })
)

const add = Tool.make("add", {
  input: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  output: Schema.Struct({ sum: Schema.Finite }),
  handler: ({ a, b }) => Effect.succeed({ sum: a + b })
})

const counting = Tool.make("count", {
  input: Schema.Struct({}),
  handler: () =>
    Effect.gen(function* () {
      for (const progress of [1, 2, 3]) {
        yield* Effect.sleep("10 millis")
        yield* ServerRequest.progress({ progress, total: 3 })
      }
      return "counted"
    })
})

const profile = Tool.make("profile", {
  input: Schema.Struct({}),
  handler: () =>
    Effect.map(
      Elicitation.request({
        mode: "form",
        message: "profile?",
        requestedSchema: {
          type: "object",
          properties: {
            name: { type: "string", default: "John Doe" },
            age: { type: "integer", default: 30 },
            status: { type: "string", enum: ["active", "inactive"], default: "active" },
            verified: { type: "boolean", default: true }
          }
        }
      }),
      (answer) => JSON.stringify(answer)
    ).pipe(Effect.orDie)
})

const summarize = Tool.make("summarize", {
  input: Schema.Struct({}),
  handler: () =>
    Sampling.createMessage({
      messages: [{ role: "user", content: { type: "text", text: "summarize" } }],
      maxTokens: 10
    }).pipe(Effect.map(Sampling.text), Effect.orDie)
})

const readme = Resource.make({
  uri: "test://readme",
  name: "readme",
  mimeType: "text/plain",
  read: Effect.succeed("read me")
})

const greet = Prompt.make({
  name: "greet",
  arguments: {
    who: {
      required: true,
      complete: (value: string) => Effect.succeed(["world", "wall"].filter((w) => w.startsWith(value)))
    }
  },
  handler: ({ who }) => Effect.succeed(`hello ${who}`)
})

const features = Layer.mergeAll(
  Tool.layer(...numbered, add, counting, profile, summarize),
  Resource.layer(readme),
  Prompt.layer(greet)
)

const handlers = Layer.mergeAll(
  ElicitationHandler.layer({ form: () => Effect.succeed({ action: "accept", content: { name: "Ann" } }) }),
  SamplingHandler.layer(() =>
    Effect.succeed({ role: "assistant", content: { type: "text", text: "short" }, model: "m" })
  )
)

const againstMcpServer = (
  version: ProtocolVersion.ProtocolVersion,
  clientTransport?: McpTest.CommonOptions["clientTransport"]
) =>
  McpTest.connect(
    Layer.provideMerge(features, McpServer.layer({ name: "effect-server", version: "1.0.0", pageSize: 10 })),
    { revision: version, clientInfo, clientHandlers: handlers, clientTransport }
  )

/**
 * Watches the client's end of the connection: `until(check)` waits until a frame the server sent satisfies
 * `check`, given the method of each request the client sent by id (re-checked on every frame, no polling).
 */
const watched = () => {
  const sent = new Map<JsonRpc.RequestId, string>()
  const received: Array<JsonRpc.Message> = []
  let changed = Deferred.makeUnsafe<void>()
  const until = (
    check: (message: JsonRpc.Message, sent: ReadonlyMap<JsonRpc.RequestId, string>) => boolean
  ): Effect.Effect<void> =>
    Effect.suspend(() =>
      received.some((m) => check(m, sent)) ? Effect.void : Effect.andThen(Deferred.await(changed), until(check))
    )
  const messages = (frame: Transport.Outgoing | JsonRpcCodec.Decoded): ReadonlyArray<JsonRpc.Message> =>
    (Array.isArray(frame) ? frame : [frame]) as ReadonlyArray<JsonRpc.Message>
  const clientTransport = (end: Transport.TransportShape) =>
    Effect.succeed<Transport.TransportShape>({
      incoming: Stream.tap(end.incoming, (frame) =>
        Effect.sync(() => {
          if (Result.isFailure(frame)) return
          received.push(...messages(frame.success))
          const current = changed
          changed = Deferred.makeUnsafe<void>()
          Deferred.doneUnsafe(current, Exit.void)
        })
      ),
      send: (frame, options) =>
        Effect.suspend(() => {
          for (const m of messages(frame)) if ("method" in m && "id" in m) sent.set(m.id, m.method)
          return end.send(frame, options)
        })
    })
  return { clientTransport, until }
}

const textOf = (result: { readonly content: ReadonlyArray<unknown> }) =>
  (result.content[0] as { readonly text?: string } | undefined)?.text

describe("McpClient -> effect-mcp McpServer", () => {
  for (const version of ProtocolVersion.all) {
    it.effect(`${version}: tools over pages, typed call, progress`, () =>
      Effect.gen(function* () {
        const { client } = yield* againstMcpServer(version)
        assert.strictEqual(client.revision, version)
        assert.strictEqual(client.serverInfo?.name, "effect-server")
        const tools = yield* Stream.runCollect(client.tools)
        assert.strictEqual(tools.length, 29)
        assert.strictEqual(new Set(tools.map((t) => t.name)).size, 29)
        const sum = yield* client.callTool(
          "add",
          { a: 1, b: 2 },
          { outputSchema: Schema.Struct({ sum: Schema.Number }) }
        )
        assert.strictEqual(sum.structuredContent.sum, 3)
        const fiber = yield* client.callToolWithProgress("count").pipe(Stream.runCollect, Effect.forkChild)
        const events = yield* McpTest.advanceUntilDone(fiber, "10 millis")
        assert.deepStrictEqual(
          events.map((e) => (e._tag === "Progress" ? e.update.progress : "result")),
          [1, 2, 3, "result"]
        )
      })
    )

    it.effect(`${version}: resources, prompts, completion`, () =>
      Effect.gen(function* () {
        const { client } = yield* againstMcpServer(version)
        const resources = yield* Stream.runCollect(client.resources)
        assert.deepStrictEqual(
          resources.map((r) => r.uri),
          ["test://readme"]
        )
        const read = yield* client.readResource("test://readme")
        assert.deepStrictEqual(read.contents, [{ uri: "test://readme", mimeType: "text/plain", text: "read me" }])
        const got = yield* client.getPrompt("greet", { who: "world" })
        assert.deepStrictEqual(got.messages, [{ role: "user", content: { type: "text", text: "hello world" } }])
        const completed = yield* client.complete({ type: "ref/prompt", name: "greet" }, { name: "who", value: "wa" })
        assert.deepStrictEqual(completed.completion.values, ["wall"])
      })
    )

    it.effect(`${version}: sampling and (where it exists) elicitation with defaults`, () =>
      Effect.gen(function* () {
        const { client } = yield* againstMcpServer(version)
        assert.strictEqual(textOf(yield* client.callTool("summarize")), "short")
        if (ProtocolVersion.isAtLeast(version, "2025-11-25")) {
          const answer = JSON.parse(textOf(yield* client.callTool("profile")) ?? "null")
          assert.deepStrictEqual(answer, {
            action: "accept",
            content: { name: "Ann", age: 30, status: "active", verified: true }
          })
        }
      })
    )
  }

  it.effect("resource updates and tool list changes as Streams (2025-11-25 and 2026-07-28)", () =>
    Effect.gen(function* () {
      for (const version of ["2025-11-25", "2026-07-28"] as const) {
        const watch = watched()
        const { client, server } = yield* againstMcpServer(version, watch.clientTransport)
        const updates = yield* client
          .resourceUpdates("test://readme")
          .pipe(Stream.take(1), Stream.runCollect, Effect.forkChild)
        // The server has the subscription: it answered `resources/subscribe` after recording it, or (2026-07-28)
        // acknowledged the `subscriptions/listen` and registered the listener in the same step.
        yield* watch.until((m, sent) =>
          "method" in m
            ? m.method === "notifications/subscriptions/acknowledged"
            : "id" in m && m.id !== null && sent.get(m.id) === "resources/subscribe"
        )
        yield* server.resourceUpdated("test://readme")
        assert.deepStrictEqual(
          (yield* Fiber.join(updates)).map((u) => u.uri),
          ["test://readme"],
          version
        )
      }
    })
  )
})
