import { assert, describe, it } from "@effect/vitest"
import type * as McpClient from "@effect-mcp/client/McpClient"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { connect, fullCapabilities, statefulVersions, versions } from "./fixtures.ts"

describe("list* Streams", () => {
  for (const version of ["2025-11-25", "2026-07-28"] as const) {
    it.effect(`${version}: 1,000 tools and 1,000 resources over pages, each exactly once`, () =>
      Effect.gen(function* () {
        const { client, server } = yield* connect(version, { server: { toolCount: 1000, pageSize: 7 } })
        const tools = yield* Stream.runCollect(client.tools)
        const names = tools.map((t) => t.name).filter((n) => n.startsWith("tool-"))
        assert.strictEqual(names.length, 1000)
        assert.strictEqual(new Set(names).size, 1000)
        const resources = yield* Stream.runCollect(client.resources)
        assert.strictEqual(resources.length, 1000)
        assert.strictEqual(new Set(resources.map((r) => r.uri)).size, 1000)
        assert.strictEqual(server.log.requests.filter((r) => r.method === "tools/list").length, Math.ceil(1001 / 7))
      })
    )
  }

  it.effect("a server that repeats a cursor ends the stream with a typed error, items seen once", () =>
    Effect.gen(function* () {
      const looping = () => (params: unknown) => {
        const cursor = (params as { readonly cursor?: string }).cursor
        const tools = [{ name: cursor === undefined ? "first" : `at-${cursor}`, inputSchema: { type: "object" } }]
        // Cursors go A -> B -> A: a loop.
        return Effect.succeed({ tools, nextCursor: cursor === "A" ? "B" : "A" })
      }
      const { client } = yield* connect("2025-11-25", { server: { handlers: [["tools/list", looping]] } })
      const seen: Array<string> = []
      const error = yield* client.tools.pipe(
        Stream.runForEach((tool) => Effect.sync(() => seen.push(tool.name))),
        Effect.flip
      )
      assert.deepStrictEqual(seen, ["first", "at-A", "at-B"])
      assert.strictEqual(error._tag, "PaginationError")
      if (error._tag === "PaginationError") {
        assert.strictEqual(error.reason, "CursorRepeated")
        assert.strictEqual(error.cursor, "A")
      }
    })
  )

  it.effect("the page count is bounded", () =>
    Effect.gen(function* () {
      const { client } = yield* connect("2025-11-25", {
        server: { toolCount: 100, pageSize: 10 },
        client: { maxPages: 3 }
      })
      const seen: Array<string> = []
      const error = yield* client.tools.pipe(
        Stream.runForEach((tool) => Effect.sync(() => seen.push(tool.name))),
        Effect.flip
      )
      assert.strictEqual(seen.length, 30)
      assert.strictEqual(error._tag, "PaginationError")
      if (error._tag === "PaginationError") assert.strictEqual(error.reason, "TooManyPages")
    })
  )
})

describe("refused locally when the server lacks the feature", () => {
  for (const version of versions) {
    it.effect(`${version}: a server with no capabilities gets nothing on the wire`, () =>
      Effect.gen(function* () {
        const { client, wire } = yield* connect(version, { server: { capabilities: {} } })
        const before = wire.sent.length
        const refusals: ReadonlyArray<Effect.Effect<unknown, McpClient.ListError | McpClient.StreamError>> = [
          client.listTools(),
          client.callTool("x"),
          client.listResources(),
          client.listResourceTemplates(),
          client.readResource("test://r/0"),
          client.listPrompts(),
          client.getPrompt("greet"),
          client.setLoggingLevel("info"),
          Stream.runDrain(client.tools),
          Stream.runDrain(client.resourceUpdates("test://r/0")),
          Stream.runDrain(client.toolListChanged),
          Stream.runDrain(client.promptListChanged),
          Stream.runDrain(client.resourceListChanged),
          // 2024-11-05 has completion/complete without a capability to gate it.
          ...(version === "2024-11-05"
            ? []
            : [client.complete({ type: "ref/prompt", name: "p" }, { name: "a", value: "" })])
        ]
        for (const refusal of refusals) {
          const error = yield* Effect.flip(refusal)
          assert.strictEqual(error._tag, "NotSupported")
          if (error._tag === "NotSupported") assert.strictEqual(error.reason, "CapabilityNotDeclared")
        }
        assert.strictEqual(wire.sent.length, before)
      })
    )
  }

  it.effect("resource updates need resources.subscribe, even with resources declared", () =>
    Effect.gen(function* () {
      for (const version of [...statefulVersions, "2026-07-28" as const]) {
        const { client, wire } = yield* connect(version, {
          server: { capabilities: { ...fullCapabilities, resources: { listChanged: true } } }
        })
        const before = wire.sent.length
        const error = yield* Effect.flip(Stream.runDrain(client.resourceUpdates("test://r/0")))
        assert.strictEqual(error._tag, "NotSupported", version)
        assert.strictEqual(wire.sent.length, before)
      }
    })
  )
})

describe("subscriptions/listen (2026-07-28)", () => {
  it.effect("a listen the server never acknowledges fails with a typed error and is cancelled", () =>
    Effect.gen(function* () {
      const silent = () => () => Effect.never
      const { client, wire } = yield* connect("2026-07-28", {
        server: { handlers: [["subscriptions/listen", silent]] },
        client: { listenAckTimeout: "5 seconds" }
      })
      const fiber = yield* Stream.runDrain(client.toolListChanged).pipe(Effect.flip, Effect.forkChild)
      const error = yield* McpTest.advanceUntilDone(fiber, "1 second")
      assert.strictEqual(error._tag, "SubscriptionError")
      assert.isTrue(wire.methods().includes("notifications/cancelled"))
    })
  )

  it.effect("two listen streams for the same notification each get it once (routed by subscription id)", () =>
    Effect.gen(function* () {
      const { client, server } = yield* connect("2026-07-28")
      const a: Array<void> = []
      const b: Array<void> = []
      const gotA = yield* Deferred.make<void>()
      const gotB = yield* Deferred.make<void>()
      yield* client.toolListChanged.pipe(
        Stream.runForEach((n) =>
          Effect.andThen(
            Effect.sync(() => a.push(n)),
            Deferred.succeed(gotA, undefined)
          )
        ),
        Effect.forkChild
      )
      yield* client.toolListChanged.pipe(
        Stream.runForEach((n) =>
          Effect.andThen(
            Effect.sync(() => b.push(n)),
            Deferred.succeed(gotB, undefined)
          )
        ),
        Effect.forkChild
      )
      yield* server.awaitLog((log) => log.listens.length >= 2)
      // One change reaches both listens: two notifications on the wire, one per stream. Routed
      // wrongly, one stream would get both and the other none (and this would wait forever).
      yield* server.emit("notifications/tools/list_changed")
      yield* Deferred.await(gotA)
      yield* Deferred.await(gotB)
      assert.strictEqual(a.length, 1)
      assert.strictEqual(b.length, 1)
    })
  )
})
