/**
 * Who may read a task, behind a Streamable HTTP endpoint that authenticates
 * requests (the hook is written here: a token `owner` stands for a verified
 * principal): a task made by one principal is unknown (-32602) to another on
 * every method of both forms, and `tasks/list` shows a principal its tasks
 * from any of its sessions and no one else's.
 */
import type * as HttpAuthentication from "@effect-mcp/http/HttpAuthentication"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { session, stateless } from "./rpc.ts"

const authentication: HttpAuthentication.Authentication = {
  authenticate: (request) => {
    const header = request.headers["authorization"]
    if (header === undefined || !header.startsWith("Bearer "))
      return Effect.fail(HttpServerResponse.empty({ status: 401 }))
    return Effect.succeed({ owner: header.slice("Bearer ".length), scopes: [], value: undefined })
  },
  insufficientScope: () => HttpServerResponse.empty({ status: 403 })
}

const Wait = Tool.make("wait", {
  input: Schema.Struct({}),
  taskSupport: "optional",
  handler: () => Effect.as(Effect.never, "never")
})

const Server = Tool.layer(Wait).pipe(Layer.provideMerge(McpServer.layer({ name: "owned", version: "1.0.0" })))

const bearer = (owner: string) => ({ authorization: `Bearer ${owner}` })

describe("tasks are bound to the principal that made them", () => {
  it.live("another principal gets -32602 on every task method; tasks/list shows a principal its own", () =>
    Effect.gen(function* () {
      const server = yield* Layer.build(
        NodeMcpServer.layerHttp(Server, { host: "127.0.0.1", responseMode: "json", auth: { authentication } })
      )
      const url = `${yield* Effect.provideContext(NodeMcpServer.url, server)}/mcp`
      const created = yield* stateless(url, "tools/call", { name: "wait", arguments: {} }, bearer("alice"))
      const taskId: string = created.result.taskId
      assert.strictEqual(created.result.resultType, "task")

      const mine = yield* stateless(url, "tasks/get", { taskId }, bearer("alice"))
      assert.strictEqual(mine.result.status, "working")
      for (const method of ["tasks/get", "tasks/cancel", "tasks/update"]) {
        const other = yield* stateless(url, method, { taskId, inputResponses: {} }, bearer("bob"))
        assert.strictEqual(other.error?.code, -32602, method)
      }

      const aliceSession = yield* session(url, bearer("alice"))
      const bobSession = yield* session(url, bearer("bob"))
      const listed = (yield* aliceSession.request("tasks/list", {})).result.tasks.map(
        (t: { taskId: string }) => t.taskId
      )
      assert.deepStrictEqual(listed, [taskId])
      assert.deepStrictEqual((yield* bobSession.request("tasks/list", {})).result.tasks, [])
      assert.strictEqual((yield* bobSession.request("tasks/get", { taskId })).error?.code, -32602)
      assert.strictEqual((yield* bobSession.request("tasks/result", { taskId })).error?.code, -32602)
      assert.strictEqual((yield* aliceSession.request("tasks/cancel", { taskId })).result.status, "cancelled")
    }).pipe(Effect.scoped)
  )
})
