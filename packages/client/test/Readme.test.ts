/**
 * The example of the README, kept compiling and working.
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import { McpServer, Tool } from "@effect-mcp/server"
import { Effect, Layer, Schema } from "effect"

const Echo = Tool.make("echo", {
  description: "Echoes its text",
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed({ content: [{ type: "text", text }] })
})

const Server = Tool.layer(Echo).pipe(Layer.provideMerge(McpServer.layer({ name: "echo", version: "1.0.0" })))

describe("README", () => {
  it.effect("the echo server answers a client over an in-memory pair", () =>
    Effect.gen(function* () {
      const server = yield* Layer.build(Server)
      const [serverEnd, clientEnd] = yield* MemoryTransport.makePair()
      yield* McpServer.makeSession.pipe(
        Effect.provideService(Transport.Transport, serverEnd),
        Effect.provideContext(server)
      )
      const client = yield* McpClient.make({ clientInfo: { name: "readme", version: "1.0.0" } }).pipe(
        Effect.provideService(Transport.Transport, clientEnd)
      )
      const result = yield* client.callTool("echo", { text: "hi" })
      assert.deepStrictEqual(result.content, [{ type: "text", text: "hi" }])
    })
  )
})
