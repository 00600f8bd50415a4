/**
 * Run by `test/shapes/FastShapes.test.ts` with `--allow-natives-syntax`:
 * prints, as JSON, whether the objects read on every message have fast
 * properties (V8 turns an object literal with a getter into a dictionary,
 * each read of it a hash lookup).
 */
import * as McpClient from "@effect-mcp/client/McpClient"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Registry from "@effect-mcp/protocol/Registry"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

// Natives syntax is not TypeScript: the check is compiled by V8 from a string.
const hasFastProperties = new Function("o", "return %HasFastProperties(o)") as (o: object) => boolean

const program = Effect.gen(function* () {
  const server = yield* Layer.build(McpServer.layer({ name: "probe", version: "1.0.0" }))
  const [clientEnd, serverEnd] = yield* MemoryTransport.makePair()
  yield* McpServer.makeSession.pipe(
    Effect.provideContext(server),
    Effect.provideService(Transport.Transport, serverEnd)
  )
  const client = yield* McpClient.make({ clientInfo: { name: "probe", version: "1.0.0" } }).pipe(
    Effect.provideService(Transport.Transport, clientEnd)
  )
  const report: Record<string, boolean> = { client: hasFastProperties(client) }
  for (const version of ProtocolVersion.all) {
    const spec = Registry.get(version)
    report[`revision ${version}`] = hasFastProperties(spec)
    for (const [method, methodSpec] of spec.methods) report[`${version} ${method}`] = hasFastProperties(methodSpec)
  }
  return report
})

Effect.runPromise(Effect.scoped(program)).then(
  (report) => process.stdout.write(`${JSON.stringify(report)}\n`),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`)
    process.exitCode = 1
  }
)
