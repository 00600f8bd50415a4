/**
 * A small server for the error tests, run as a real child process:
 *
 *   node fixtureServer.ts --stdio
 *   node fixtureServer.ts --http          (prints `listening on <url>` on stderr)
 *
 * Its tools fail in each way the tests look at: a typed failure with a
 * declared Schema, a defect carrying a secret (as a tool, a resource, a
 * prompt and a completion), and a two-field input to validate.
 */
import * as NodeHttpServer from "@effect-mcp/platform-node/NodeHttpServer"
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Prompt from "@effect-mcp/server/Prompt"
import * as Resource from "@effect-mcp/server/Resource"
import * as ResourceTemplate from "@effect-mcp/server/ResourceTemplate"
import * as Tool from "@effect-mcp/server/Tool"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

/** The secret every defect carries; the tests look for it on the wire and in the log. */
export const secret = "db password=hunter2 rejected"

class NotFound extends Schema.TaggedError<NotFound>()("NotFound", { id: Schema.String }) {}

const boom = () => Effect.die(new Error(secret))

const tools = Tool.layer(
  Tool.make("fails", {
    input: Schema.Struct({ id: Schema.String }),
    failure: NotFound,
    handler: ({ id }) => Effect.fail(new NotFound({ id }))
  }),
  Tool.make("explodes", { input: Schema.Struct({}), handler: boom }),
  Tool.make("create", {
    input: Schema.Struct({ title: Schema.String, body: Schema.String }),
    handler: ({ title }) => Effect.succeed(`created ${title}`)
  })
)

const resources = Layer.mergeAll(
  Resource.layer(Resource.make({ uri: "fixture://explodes", name: "explodes", read: boom() })),
  ResourceTemplate.layer(
    ResourceTemplate.make({
      uriTemplate: "fixture://items/{id}",
      name: "items",
      read: () => boom(),
      complete: { id: () => boom() }
    })
  )
)

const prompts = Prompt.layer(Prompt.make({ name: "explodes", handler: () => boom() }))

const features = Layer.mergeAll(tools, resources, prompts).pipe(
  Layer.provideMerge(McpServer.layer({ name: "error-fixture", version: "1.0.0" }))
)

const http = Effect.gen(function* () {
  const base = yield* NodeHttpServer.url
  yield* Console.error(`listening on ${base}/mcp`)
  return yield* Effect.never
}).pipe(
  Effect.provide(NodeHttpServer.layer(StreamableHttpServer.layer({ session: McpServer.makeSession }), { port: 0 }))
)

const stdio = McpServer.serve.pipe(Effect.provide(NodeStdio.layerServer()))

NodeRuntime.runMain((process.argv.includes("--http") ? http : stdio).pipe(Effect.provide(features)))
