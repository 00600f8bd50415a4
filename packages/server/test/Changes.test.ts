import { assert, describe, it } from "@effect/vitest"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Resource from "@effect-mcp/server/Resource"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import { type Obj, testServer } from "./fixtures.ts"

const watched = Resource.make({ uri: "test://watched", name: "watched", read: Effect.succeed("w") })
const extra = Tool.make("extra", {
  description: "registered late",
  input: { type: "object" },
  handler: () => Effect.succeed("x")
})

describe("McpServer changes (onChange / deliver)", () => {
  it.effect("onChange hears what the server announces; deliver reaches the listeners without it", () =>
    Effect.gen(function* () {
      const {
        session: client,
        server,
        notifications,
        drain
      } = yield* McpTest.connectRaw(testServer(Resource.layer(watched)), { revision: "2026-07-28" })
      const heard: Array<McpServer.Change> = []
      yield* server.onChange((change) => Effect.sync(() => void heard.push(change)))
      yield* client
        .request("subscriptions/listen", {
          notifications: { resourcesListChanged: true, resourceSubscriptions: ["test://watched"] }
        })
        .pipe(Effect.forkChild)
      assert.strictEqual((yield* Queue.take(notifications)).method, "notifications/subscriptions/acknowledged")

      yield* server.resourceUpdated("test://watched")
      yield* server.listChanged("resources")
      // A registration and its removal are changes too.
      const scope = yield* Scope.make()
      yield* Tool.register(extra).pipe(Scope.provide(scope), Effect.provideService(McpServer.McpServer, server))
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(heard, [
        { _tag: "ResourceUpdated", uri: "test://watched" },
        { _tag: "ListChanged", kind: "resources" },
        { _tag: "ListChanged", kind: "tools" },
        { _tag: "ListChanged", kind: "tools" }
      ])
      yield* drain

      // Made elsewhere: announced here, not heard by the hook (it would be published again).
      yield* server.deliver({ _tag: "ResourceUpdated", uri: "test://watched" })
      yield* server.deliver({ _tag: "ListChanged", kind: "resources" })
      const got = (yield* drain).map((n) => [n.method, (n.params as Obj).uri])
      assert.deepStrictEqual(got, [
        ["notifications/resources/updated", "test://watched"],
        ["notifications/resources/list_changed", undefined]
      ])
      assert.strictEqual(heard.length, 4)
    })
  )
})
