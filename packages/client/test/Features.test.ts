import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as Hub from "../src/internal/hub.ts"
import { connect, refusedUri, versions } from "./fixtures.ts"

const stateless = (v: string) => v === "2026-07-28"

describe("every server feature on every revision", () => {
  for (const version of versions) {
    describe(version, () => {
      it.effect("negotiates the revision and reads the server's declarations", () =>
        Effect.gen(function* () {
          const { client } = yield* connect(version)
          assert.strictEqual(client.revision, version)
          assert.strictEqual(client.serverInfo?.name, "test-server")
          assert.strictEqual(client.instructions, "be nice")
          assert.deepStrictEqual(client.serverCapabilities.resources, { subscribe: true, listChanged: true })
        })
      )

      it.effect(stateless(version) ? "ping is server/discover (no ping in 2026-07-28)" : "ping", () =>
        Effect.gen(function* () {
          const { client, wire } = yield* connect(version)
          const before = wire.sent.length
          yield* client.ping()
          const sent = wire.sent.slice(before).flatMap((m) => ("method" in m ? [m.method] : []))
          assert.deepStrictEqual(sent, [stateless(version) ? "server/discover" : "ping"])
        })
      )

      it.effect("tools: one page, all pages as a Stream, calls, structured output", () =>
        Effect.gen(function* () {
          const { client } = yield* connect(version, { server: { toolCount: 5, pageSize: 2 } })
          const first = yield* client.listTools()
          assert.deepStrictEqual(
            first.tools.map((t) => t.name),
            ["tool-0", "tool-1"]
          )
          assert.strictEqual(first.nextCursor, "2")
          const all = yield* Stream.runCollect(client.tools)
          assert.deepStrictEqual(
            all.map((t) => t.name),
            ["tool-0", "tool-1", "tool-2", "tool-3", "tool-4", "structured"]
          )
          const echo = yield* client.callTool("tool-1", { text: "hi" })
          assert.deepStrictEqual(echo.content, [{ type: "text", text: "echo hi" }])
          const typed = yield* client.callTool(
            "structured",
            { a: 2, b: 5 },
            {
              outputSchema: Schema.Struct({ sum: Schema.Number, label: Schema.String })
            }
          )
          assert.deepStrictEqual(typed.structuredContent, { sum: 7, label: "sum" })
        })
      )

      it.effect("tools: progress arrives as a Stream that ends with the result, and in the progress Stream", () =>
        Effect.gen(function* () {
          const { client } = yield* connect(version)
          const seen = yield* client.progress.pipe(
            Stream.take(3),
            Stream.runCollect,
            Effect.forkChild({ startImmediately: true })
          )
          const fiber = yield* client.callToolWithProgress("progress").pipe(Stream.runCollect, Effect.forkChild)
          const events = yield* McpTest.advanceUntilDone(fiber, "10 millis")
          assert.deepStrictEqual(
            events.map((e) => (e._tag === "Progress" ? e.update.progress : "result")),
            [1, 2, 3, "result"]
          )
          const last = events[3]
          assert.isTrue(last?._tag === "Result" && last.value.content[0]?.type === "text")
          const global = yield* Fiber.join(seen)
          assert.deepStrictEqual(
            global.map((p) => [p.method, p.update.progress]),
            [
              ["tools/call", 1],
              ["tools/call", 2],
              ["tools/call", 3]
            ]
          )
        })
      )

      it.effect("interrupting a call sends notifications/cancelled and stops the server handler", () =>
        Effect.gen(function* () {
          const { client, server, wire } = yield* connect(version)
          const fiber = yield* client.callTool("slow").pipe(Effect.forkChild)
          yield* server.awaitLog((log) => log.requests.some((r) => r.method === "tools/call"))
          yield* Fiber.interrupt(fiber)
          yield* server.awaitLog((log) => log.cancelled.length > 0)
          assert.deepStrictEqual(server.log.cancelled, ["tools/call"])
          assert.isTrue(wire.methods().includes("notifications/cancelled"))
        })
      )

      it.effect("resources: list, templates, read, not-found error", () =>
        Effect.gen(function* () {
          const { client } = yield* connect(version, { server: { toolCount: 4, pageSize: 3 } })
          const all = yield* Stream.runCollect(client.resources)
          assert.deepStrictEqual(
            all.map((r) => r.uri),
            ["test://r/0", "test://r/1", "test://r/2", "test://r/3"]
          )
          const templates = yield* Stream.runCollect(client.resourceTemplates)
          assert.deepStrictEqual(
            templates.map((t) => t.uriTemplate),
            ["test://t/{id}"]
          )
          const read = yield* client.readResource("test://r/1")
          assert.deepStrictEqual(read.contents, [
            { uri: "test://r/1", mimeType: "text/plain", text: "body of test://r/1" }
          ])
          const missing = yield* Effect.flip(client.readResource("other://x"))
          // The code moved in 2026-07-28 (-32602); both decode to a protocol error the caller can match.
          assert.include(["ResourceNotFound", "InvalidParams"], missing._tag)
        })
      )

      it.effect("resources: updates Stream subscribes on start and unsubscribes on end", () =>
        Effect.gen(function* () {
          const { client, server, wire } = yield* connect(version)
          const fiber = yield* client
            .resourceUpdates("test://r/1")
            .pipe(Stream.take(2), Stream.runCollect, Effect.forkChild)
          // Open once the server has the subscription: the client listens before it asks.
          yield* server.awaitLog((log) => (stateless(version) ? log.listens.length > 0 : log.subscribed.length > 0))
          yield* server.emit("notifications/resources/updated", { uri: "test://r/2" })
          yield* server.emit("notifications/resources/updated", { uri: "test://r/1" })
          yield* server.emit("notifications/resources/updated", { uri: "test://r/1" })
          const updates = yield* Fiber.join(fiber)
          assert.deepStrictEqual(
            updates.map((u) => u.uri),
            ["test://r/1", "test://r/1"]
          )
          if (stateless(version)) {
            assert.deepStrictEqual(server.log.listens, [{ resourceSubscriptions: ["test://r/1"] }])
            yield* server.awaitLog((log) => log.cancelled.length > 0)
            assert.deepStrictEqual(server.log.cancelled, ["subscriptions/listen"])
            assert.isFalse(wire.methods().includes("resources/subscribe"))
          } else {
            yield* server.awaitLog((log) => log.unsubscribed.length > 0)
            assert.deepStrictEqual(server.log.subscribed, ["test://r/1"])
            assert.deepStrictEqual(server.log.unsubscribed, ["test://r/1"])
          }
        })
      )

      it.effect("resources: subscribeResource succeeds once the server took the subscription, fails if refused", () =>
        Effect.gen(function* () {
          const { client, server } = yield* connect(version)
          yield* Effect.scoped(
            Effect.gen(function* () {
              const updates = yield* client.subscribeResource("test://r/1")
              // The server has the subscription already: nothing to wait for.
              if (stateless(version))
                assert.deepStrictEqual(server.log.listens, [{ resourceSubscriptions: ["test://r/1"] }])
              else assert.deepStrictEqual(server.log.subscribed, ["test://r/1"])
              yield* server.emit("notifications/resources/updated", { uri: "test://r/1" })
              const first = yield* Stream.runHead(updates)
              assert.strictEqual(first._tag === "Some" ? first.value.uri : undefined, "test://r/1")
            })
          )
          if (!stateless(version)) assert.deepStrictEqual(server.log.unsubscribed, ["test://r/1"])
          const refused = yield* Effect.flip(Effect.scoped(client.subscribeResource(refusedUri)))
          assert.strictEqual(refused._tag, "InvalidParams")
          assert.include(refused.message, refusedUri)
        })
      )

      it.effect("list_changed notifications as Streams", () =>
        Effect.gen(function* () {
          const { client, server } = yield* connect(version)
          // At rest once the stream listens (stateful: on the client's hub).
          const fiber = yield* McpTest.forkIdle(client.toolListChanged.pipe(Stream.take(1), Stream.runCollect))
          // Stateless: once the server has the listen stream.
          if (stateless(version)) yield* server.awaitLog((log) => log.listens.length > 0)
          yield* server.emit("notifications/prompts/list_changed")
          yield* server.emit("notifications/tools/list_changed")
          assert.strictEqual((yield* Fiber.join(fiber)).length, 1)
          if (stateless(version)) assert.deepStrictEqual(server.log.listens, [{ toolsListChanged: true }])
        })
      )

      it.effect("prompts: list, get; completion", () =>
        Effect.gen(function* () {
          const { client } = yield* connect(version)
          const prompts = yield* Stream.runCollect(client.prompts)
          assert.deepStrictEqual(
            prompts.map((p) => p.name),
            ["greet"]
          )
          const got = yield* client.getPrompt("greet", { who: "world" })
          assert.deepStrictEqual(got.messages, [{ role: "user", content: { type: "text", text: "hello world" } }])
          const completed = yield* client.complete({ type: "ref/prompt", name: "greet" }, { name: "who", value: "al" })
          assert.deepStrictEqual(completed.completion.values, ["alpha", "alpine"])
        })
      )

      it.effect("logging: the chosen level reaches the server; messages arrive as a Stream", () =>
        Effect.gen(function* () {
          const { client, server } = yield* connect(version)
          const messages = yield* client.logMessages.pipe(
            Stream.take(1),
            Stream.runCollect,
            Effect.forkChild({ startImmediately: true })
          )
          yield* client.setLoggingLevel("debug")
          yield* client.callTool("log")
          const [message] = yield* Fiber.join(messages)
          assert.deepStrictEqual(message, { level: "info", logger: "test", data: "hello log" })
          if (stateless(version)) {
            const call = server.log.requests.find((r) => r.method === "tools/call")
            const meta = call?.params._meta as { readonly [key: string]: unknown } | undefined
            assert.strictEqual(meta?.["io.modelcontextprotocol/logLevel"], "debug")
            assert.isFalse(server.log.requests.some((r) => r.method === "logging/setLevel"))
          } else {
            assert.isTrue(
              server.log.requests.some((r) => r.method === "logging/setLevel" && r.params.level === "debug")
            )
          }
        })
      )
    })
  }

  it.effect("a Stream of notifications read slower than they come holds the newest, a bounded number", () =>
    Effect.gen(function* () {
      const { client } = yield* connect("2025-06-18")
      const gate = yield* Deferred.make<void>()
      // The reader stops at its first message until the flood is over.
      const seen = yield* client.logMessages.pipe(
        Stream.tap(() => Deferred.await(gate)),
        Stream.takeUntil((message) => message.data === 9_999),
        Stream.runCollect,
        Effect.forkChild({ startImmediately: true })
      )
      yield* client.setLoggingLevel("debug")
      yield* client.callTool("log-flood")
      yield* Deferred.succeed(gate, undefined)
      const messages = yield* Fiber.join(seen)
      // What it had taken when it stopped (at most the backlog: a Stream takes what is there) and the backlog kept
      // meanwhile. Before, all ten thousand were held for it.
      assert.isAtMost(messages.length, 2 * Hub.backlog)
      assert.strictEqual(messages.at(-1)?.data, 9_999)
    })
  )

  it.effect("a 2026-07-28 client falls back to the newest stateful revision of an older server", () =>
    Effect.gen(function* () {
      const { client, wire } = yield* connect(versions, { server: { supportedVersions: ["2025-06-18"] } })
      assert.strictEqual(client.revision, "2025-06-18")
      assert.deepStrictEqual(wire.methods().slice(0, 3), ["server/discover", "initialize", "notifications/initialized"])
    })
  )
})
