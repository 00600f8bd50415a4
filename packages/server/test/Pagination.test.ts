import { assert, describe, it } from "@effect/vitest"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Resource from "@effect-mcp/server/Resource"
import * as Tool from "@effect-mcp/server/Tool"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { type Obj, revisions, testServer } from "./fixtures.ts"

const tools = Array.from({ length: 1000 }, (_, i) =>
  Tool.make(`tool-${i}`, { input: Schema.Struct({}), handler: () => Effect.succeed(String(i)) })
)
const resources = Array.from({ length: 1000 }, (_, i) =>
  Resource.make({ uri: `test://r/${i}`, name: `r${i}`, read: Effect.succeed(String(i)) })
)
const features = Layer.mergeAll(Tool.layer(...tools), Resource.layer(...resources))

const walk = (
  request: (method: string, params?: object) => Effect.Effect<unknown, unknown>,
  method: string,
  key: string
) =>
  Effect.gen(function* () {
    const seen: Array<string> = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page = (yield* request(method, cursor === undefined ? {} : { cursor })) as Obj
      for (const item of page[key]) seen.push(item.name)
      cursor = page.nextCursor
      pages++
    } while (cursor !== undefined)
    return { seen, pages }
  })

describe("pagination", () => {
  for (const version of revisions) {
    it.effect(`${version}: 1,000 tools and 1,000 resources page, every item exactly once`, () =>
      Effect.gen(function* () {
        const { request } = yield* McpTest.connectRaw(testServer(features, { pageSize: 64 }), { revision: version })
        const t = yield* walk(request, "tools/list", "tools")
        assert.strictEqual(t.pages, Math.ceil(1000 / 64))
        assert.strictEqual(t.seen.length, 1000)
        assert.strictEqual(new Set(t.seen).size, 1000)
        assert.deepStrictEqual([...t.seen], [...t.seen].sort())
        const r = yield* walk(request, "resources/list", "resources")
        assert.strictEqual(r.seen.length, 1000)
        assert.strictEqual(new Set(r.seen).size, 1000)
      })
    )
  }

  it.effect("an invalid cursor is -32602 on every list method", () =>
    Effect.gen(function* () {
      const { request } = yield* McpTest.connectRaw(testServer(features, { declare: ["prompts"] }), {
        revision: "2025-11-25"
      })
      for (const method of ["tools/list", "resources/list", "resources/templates/list", "prompts/list"]) {
        for (const cursor of ["not base64 !", "eyJ4IjoxfQ", ""]) {
          const error = (yield* Effect.flip(request(method, { cursor }))) as Obj
          assert.strictEqual(error.code, -32602, `${method} ${cursor}`)
        }
      }
    })
  )

  it.effect("items added or removed between pages do not make others repeat or vanish", () =>
    Effect.gen(function* () {
      // tool-0 is registered in a scope of its own, the others by the server's Layer.
      const { request, server } = yield* McpTest.connectRaw(
        testServer(Tool.layer(...tools.slice(1, 10)), { pageSize: 4 }),
        { revision: "2025-11-25" }
      )
      const own = yield* Scope.make()
      yield* Tool.register(tools[0]!).pipe(Scope.provide(own), Effect.provideService(McpServer.McpServer, server))
      const first = (yield* request("tools/list")) as Obj
      // Remove an item already seen: the next page must still start right after the last one seen.
      const seen = first.tools.map((t: Obj) => t.name)
      assert.strictEqual(seen[0], "tool-0")
      yield* Scope.close(own, Exit.void)
      const second = (yield* request("tools/list", { cursor: first.nextCursor })) as Obj
      const names = second.tools.map((t: Obj) => t.name)
      assert.strictEqual(names.length, 4)
      for (const name of names) assert.isFalse(seen.includes(name))
      assert.isTrue(names[0] > seen[3])
    })
  )
})
