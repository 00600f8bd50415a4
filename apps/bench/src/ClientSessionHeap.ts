/**
 * The heap a connected client holds: 200 McpClients, each connected over a
 * MemoryTransport pair to its own session of one server (whose Layer is
 * built once, as a server's is), each having made one call. Prints
 * `{ perSession }` as JSON: the heap after a full collection, minus the
 * same before they opened, over their count, in bytes (client and server
 * session together; an idle server session is about 1.4 KiB, see W4).
 *
 * Run with `node --expose-gc` (and `--conditions=@effect-mcp/source` inside
 * the workspace); the client's `ClientSessionHeap` test runs it.
 */
import * as Transport from "@effect-mcp/engine/Transport"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as EchoServer from "./EchoServer.ts"
import * as EffectMcp from "./EffectMcp.ts"
import { heapAfterGc } from "./HeapScript.ts"

const sessions = 200

const main = Effect.gen(function* () {
  const server = yield* Layer.build(EchoServer.layer)
  const connected = Effect.gen(function* () {
    const [clientEnd, serverEnd] = yield* MemoryTransport.makePair()
    yield* McpServer.makeSession.pipe(
      Effect.provideContext(server),
      Effect.provideService(Transport.Transport, serverEnd)
    )
    const client = yield* EffectMcp.connect(clientEnd, { supportedVersions: ["2025-11-25"] })
    yield* client.callTool("echo", { text: "hello" })
    return client
  })
  // A first client warms every path up (modules, compiled code, the server's tables).
  yield* connected
  const before = heapAfterGc()
  const clients = yield* Effect.all(Array.from({ length: sessions }, () => connected))
  const after = heapAfterGc()
  return { perSession: Math.round((after - before) / clients.length) }
})

Effect.runPromise(Effect.scoped(main)).then(
  (report) => process.stdout.write(`${JSON.stringify(report)}\n`),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`)
    process.exitCode = 1
  }
)
