import { assert, describe, it } from "@effect/vitest"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

class Alpha extends Context.Service<Alpha, McpClient.McpClientShape>()("test/Alpha") {}
class Beta extends Context.Service<Beta, McpClient.McpClientShape>()("test/Beta") {}

/** A transport Layer to a fresh server named `name`; the server lives as long as the Layer. */
const transportTo = (name: string): Layer.Layer<Transport.Transport> =>
  Layer.effect(
    Transport.Transport,
    Effect.gen(function* () {
      const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: true })
      const server = yield* Layer.build(McpServer.layer({ name, version: "1.0.0", declare: ["tools"] }))
      yield* McpServer.makeSession.pipe(
        Effect.provideService(Transport.Transport, serverEnd),
        Effect.provideContext(server)
      )
      return clientEnd
    })
  )

const clientInfo = { name: "connect-test", version: "1.0.0" }

describe("McpClient.connect", () => {
  it.effect("two clients, each over its own transport, under services of their own", () =>
    Effect.gen(function* () {
      const alpha = yield* Alpha
      const beta = yield* Beta
      assert.strictEqual(alpha.serverInfo?.name, "alpha")
      assert.strictEqual(beta.serverInfo?.name, "beta")
      assert.strictEqual(alpha.revision, "2025-03-26")
      assert.strictEqual(beta.revision, "2026-07-28")
      yield* alpha.ping()
      assert.deepStrictEqual((yield* beta.listTools()).tools, [])
    }).pipe(
      Effect.provide(
        Layer.mergeAll(
          Layer.effect(
            Alpha,
            McpClient.connect(transportTo("alpha"), { clientInfo, supportedVersions: ["2025-03-26"] })
          ),
          Layer.effect(Beta, McpClient.connect(transportTo("beta"), { clientInfo }))
        )
      )
    )
  )

  it.effect("the transport lives until the caller's scope closes", () =>
    Effect.gen(function* () {
      const client = yield* Effect.scoped(McpClient.connect(transportTo("gamma"), { clientInfo }))
      const exit = yield* Effect.exit(client.listTools())
      assert.strictEqual(exit._tag, "Failure")
      const live = yield* McpClient.connect(transportTo("delta"), { clientInfo })
      assert.strictEqual(live.serverInfo?.name, "delta")
    })
  )
})
