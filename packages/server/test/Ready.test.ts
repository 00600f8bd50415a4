/**
 * `McpServer.Options.ready`: the handshake and every request but `ping` wait
 * for it until it has once completed (the capabilities declared are those of
 * that moment); from then on it is not run again.
 */
import { assert, describe, it } from "@effect/vitest"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"

const late = Tool.make("late", { input: { type: "object" }, handler: () => Effect.succeed("here") })

/** A server whose `ready` is `opened`, counting how often it is run. */
const server = (opened: Deferred.Deferred<void>, runs: { count: number }) =>
  McpServer.layer({
    name: "s",
    version: "1.0.0",
    ready: Effect.suspend(() => {
      runs.count++
      return Deferred.await(opened)
    })
  })

describe("McpServer ready", () => {
  it.effect("initialize and server/discover wait for it, and declare what came meanwhile; ping does not", () =>
    Effect.gen(function* () {
      const opened = yield* Deferred.make<void>()
      const runs = { count: 0 }
      const context = yield* Layer.build(server(opened, runs))
      const stateful = yield* McpTest.makeClient({ revision: "2025-11-25" }).pipe(
        Effect.provideContext(context),
        Effect.forkChild
      )
      const stateless = yield* McpTest.makeRawClient({ revision: "2026-07-28" }).pipe(
        Effect.provideContext(context),
        Effect.forkChild
      )
      yield* McpTest.runIdle(Effect.void)
      assert.isUndefined(stateful.pollUnsafe(), "initialize was answered before the server was ready")
      assert.isUndefined(stateless.pollUnsafe(), "server/discover was answered before the server was ready")
      // Registered while they wait: declared by the answer once ready.
      const registration = yield* Scope.make()
      yield* Tool.register(late).pipe(
        Scope.provide(registration),
        Effect.provideService(McpServer.McpServer, Context.get(context, McpServer.McpServer))
      )
      yield* Deferred.succeed(opened, undefined)
      const client = yield* Fiber.join(stateful)
      assert.isDefined(client.serverCapabilities.tools)
      const raw = yield* Fiber.join(stateless)
      assert.deepStrictEqual(
        ((yield* raw.request("tools/list")) as { tools: ReadonlyArray<{ name: string }> }).tools.map((t) => t.name),
        ["late"]
      )
      // Run by the waiters only, never again once it completed.
      const before = runs.count
      yield* client.callTool("late", {})
      yield* raw.request("tools/list")
      assert.strictEqual(runs.count, before)
    })
  )

  it.effect("a stateless request with no discover waits for it; ping is answered meanwhile", () =>
    Effect.gen(function* () {
      const opened = yield* Deferred.make<void>()
      const runs = { count: 0 }
      const context = yield* Layer.build(Layer.provideMerge(Tool.layer(late), server(opened, runs)))
      const [serverEnd, rawEnd] = yield* MemoryTransport.makePair()
      yield* McpServer.makeSession.pipe(
        Effect.provideService(Transport.Transport, serverEnd),
        Effect.provideContext(context)
      )
      const answers = yield* Queue.unbounded<JsonRpc.Message>()
      yield* rawEnd.incoming.pipe(
        Stream.runForEach((frame) =>
          Result.isSuccess(frame) ? Queue.offer(answers, frame.success as JsonRpc.Message) : Effect.void
        ),
        Effect.forkScoped
      )
      const meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
      }
      yield* rawEnd.send(JsonRpc.request(1, "tools/list", { _meta: meta }))
      yield* rawEnd.send(JsonRpc.request(2, "ping", { _meta: meta }))
      // The ping is answered; the list, sent before it, waits.
      const first = yield* Queue.take(answers)
      assert.strictEqual((first as JsonRpc.Response).id, 2)
      assert.strictEqual(yield* Queue.size(answers), 0)
      yield* Deferred.succeed(opened, undefined)
      const listed = (yield* Queue.take(answers)) as JsonRpc.Response & {
        result: { tools: ReadonlyArray<{ name: string }> }
      }
      assert.strictEqual(listed.id, 1)
      assert.deepStrictEqual(
        listed.result.tools.map((t) => t.name),
        ["late"]
      )
    })
  )
})
