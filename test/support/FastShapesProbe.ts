/**
 * Run by `test/shapes/FastShapes.test.ts` with `--allow-natives-syntax`:
 * prints, as JSON, whether the objects read on every message have fast
 * properties (V8 turns an object literal with a getter into a dictionary,
 * each read of it a hash lookup, and so is each object after the first
 * given a getter function of its own). Objects made many times are checked
 * several times over: the first of a kind can be fast where the rest are not.
 */
import * as McpClient from "@effect-mcp/client/McpClient"
import * as ToolkitServer from "@effect-mcp/host/ToolkitServer"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Registry from "@effect-mcp/protocol/Registry"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as AiTool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

// Natives syntax is not TypeScript: the check is compiled by V8 from a string.
const hasFastProperties = new Function("o", "return %HasFastProperties(o)") as (o: object) => boolean

const Echo = AiTool.make("echo", { parameters: Schema.Struct({ text: Schema.String }), success: Schema.String })
const Shout = AiTool.make("shout", { parameters: Schema.Struct({ text: Schema.String }), success: Schema.String })
const Greet = AiTool.make("greet", { success: Schema.String })
const Kit = Toolkit.make(Echo, Shout, Greet)
const KitHandlers = Kit.toLayer({
  echo: ({ text }) => Effect.succeed(text),
  shout: ({ text }) => Effect.succeed(text.toUpperCase()),
  greet: () => Effect.succeed("hello")
})

const program = Effect.gen(function* () {
  const server = yield* Layer.build(McpServer.layer({ name: "probe", version: "1.0.0" }))
  const report: Record<string, boolean> = {}
  // A host holds a client per server: every one of them, not only the first, is read on each call.
  for (let i = 1; i <= 3; i++) {
    const [clientEnd, serverEnd] = yield* MemoryTransport.makePair()
    yield* McpServer.makeSession.pipe(
      Effect.provideContext(server),
      Effect.provideService(Transport.Transport, serverEnd)
    )
    const client = yield* McpClient.make({ clientInfo: { name: "probe", version: "1.0.0" } }).pipe(
      Effect.provideService(Transport.Transport, clientEnd)
    )
    report[`client ${i}`] = hasFastProperties(client)
  }
  // A toolkit's tools, each read on every call of it.
  const tools = yield* ToolkitServer.tools(Kit).pipe(Effect.provide(KitHandlers))
  for (const tool of tools) report[`toolkit tool ${tool.name}`] = hasFastProperties(tool)
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
