/**
 * A tool's typed failure, declared with a Schema on the server, read back on
 * the client: `callTool` with `failure` fails with the decoded error, on every
 * revision (from `structuredContent`, or the JSON text where there is none);
 * a typed call without it gets a `ToolError` carrying the fields.
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

class NotFound extends Schema.TaggedError<NotFound>()("NotFound", { id: Schema.String }) {}
class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", { user: Schema.String }) {}

const Item = Schema.Struct({ title: Schema.String })

const lookup = (id: string): Effect.Effect<{ readonly title: string }, NotFound | Forbidden> =>
  id === "1"
    ? Effect.succeed({ title: "one" })
    : id === "root"
      ? Effect.fail(new Forbidden({ user: id }))
      : Effect.fail(new NotFound({ id }))

const features = Tool.layer(
  Tool.make("get", {
    input: Schema.Struct({ id: Schema.String }),
    output: Item,
    failure: Schema.Union([NotFound, Forbidden]),
    handler: ({ id }) => lookup(id)
  }),
  Tool.make("find", {
    input: Schema.Struct({ id: Schema.String }),
    failure: NotFound,
    handler: ({ id }) => Effect.map(lookup(id), (item) => item.title)
  })
)

const connect = (version: ProtocolVersion.ProtocolVersion) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(
      Layer.provideMerge(features, McpServer.layer({ name: "failures", version: "1.0.0" }))
    )
    const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: true })
    yield* McpServer.makeSession.pipe(
      Effect.provideService(Transport.Transport, serverEnd),
      Effect.provideContext(context)
    )
    return yield* McpClient.make({
      clientInfo: { name: "failures-client", version: "1.0.0" },
      supportedVersions: [version]
    }).pipe(Effect.provideService(Transport.Transport, clientEnd))
  })

describe("typed tool failures at the client", () => {
  for (const version of ProtocolVersion.all) {
    it.effect(`${version}: callTool with a failure Schema fails with the decoded error`, () =>
      Effect.gen(function* () {
        const client = yield* connect(version)
        // A tool with no output schema.
        const missing = yield* Effect.flip(client.callTool("find", { id: "7" }, { failure: NotFound }))
        assert.instanceOf(missing, NotFound)
        assert.strictEqual((missing as NotFound).id, "7")
        // With an output schema, and a union of failures.
        const failure = Schema.Union([NotFound, Forbidden])
        const ok = yield* client.callTool("get", { id: "1" }, { outputSchema: Item, failure })
        assert.deepStrictEqual(ok.structuredContent, { title: "one" })
        const forbidden = yield* Effect.flip(client.callTool("get", { id: "root" }, { outputSchema: Item, failure }))
        assert.instanceOf(forbidden, Forbidden)
        assert.strictEqual((forbidden as Forbidden).user, "root")
        // Without the failure Schema the result is what it was.
        const plain = yield* client.callTool("find", { id: "7" })
        assert.isTrue(plain.isError)
        assert.deepStrictEqual(JSON.parse((plain.content[0] as { text: string }).text), { _tag: "NotFound", id: "7" })
        // A typed call without it: a ToolError carrying the fields.
        const toolError = yield* Effect.flip(client.callTool("get", { id: "8" }, { outputSchema: Item }))
        assert.strictEqual(toolError._tag, "ToolError")
        assert.deepStrictEqual((toolError as { structuredContent?: unknown }).structuredContent, {
          _tag: "NotFound",
          id: "8"
        })
      })
    )
  }
})
