/**
 * Honest errors, on every revision: a tool's typed failure reaches the client
 * with its fields; a defect on any request type reaches it only as a
 * correlation id (the Cause is logged with that id, and never forwarded as a
 * log notification); invalid arguments list every issue with its path;
 * resource-not-found has the revision's code.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as Defect from "@effect-mcp/engine/Defect"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Features from "@effect-mcp/protocol/Features"
import * as Meta from "@effect-mcp/protocol/Meta"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Prompt from "@effect-mcp/server/Prompt"
import * as Resource from "@effect-mcp/server/Resource"
import * as ResourceTemplate from "@effect-mcp/server/ResourceTemplate"
import * as Tool from "@effect-mcp/server/Tool"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import * as Schema from "effect/Schema"

// biome-ignore lint/suspicious/noExplicitAny: tests read JSON results by path; the assertions are the type check
type Obj = { readonly [key: string]: any }

const secret = "db password=hunter2 rejected"

class NotFound extends Schema.TaggedError<NotFound>()("NotFound", { id: Schema.String }) {}
class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", { user: Schema.String, level: Schema.Number }) {}
class Other extends Schema.TaggedError<Other>()("Other", { message: Schema.String }) {}

const boom = () => Effect.die(new Error(secret))
// Dies after a yield, not while starting: the yield is the subject (both must be reported alike).
const boomLater = () => Effect.andThen(Effect.yieldNow, Effect.die(new Error(secret)))

const tools = Tool.layer(
  Tool.make("fails", {
    input: Schema.Struct({ id: Schema.String }),
    failure: Schema.Union([NotFound, Forbidden]),
    handler: ({ id }): Effect.Effect<string, NotFound | Forbidden | Other> =>
      id === "admin"
        ? Effect.fail(new Forbidden({ user: id, level: 3 }))
        : id === "other"
          ? Effect.fail(new Other({ message: "not declared" }))
          : Effect.fail(new NotFound({ id }))
  }),
  Tool.make("typed", {
    input: Schema.Struct({ id: Schema.String }),
    output: Schema.Struct({ title: Schema.String }),
    failure: NotFound,
    // Fails after a yield, not while starting: the yield is the subject.
    handler: ({ id }) => Effect.andThen(Effect.yieldNow, Effect.fail(new NotFound({ id })))
  }),
  Tool.make("explodes", { input: Schema.Struct({}), handler: boom }),
  Tool.make("explodes-later", { input: Schema.Struct({}), handler: boomLater }),
  Tool.make("logs", {
    input: Schema.Struct({}),
    handler: () => Effect.as(Effect.logWarning("a log the client sees"), "logged")
  }),
  Tool.make("create", {
    input: Schema.Struct({ title: Schema.String, body: Schema.String, tags: Schema.Array(Schema.String) }),
    handler: ({ title }) => Effect.succeed(`created ${title}`)
  }),
  Tool.make("move", {
    input: Schema.Struct({
      speed: Schema.Number,
      target: Schema.Union([
        Schema.Struct({ name: Schema.String }),
        Schema.Struct({ point: Schema.Struct({ x: Schema.Number, y: Schema.Number }) })
      ])
    }),
    output: Schema.Struct({ distance: Schema.Number }),
    // The output breaks its Schema when the speed is 0.
    handler: ({ speed }) => Effect.succeed({ distance: speed === 0 ? ("none" as unknown as number) : speed })
  }),
  Tool.make("strict", { input: Schema.Struct({ id: Schema.String }), strict: true, handler: () => Effect.succeed("") }),
  Tool.make("raw", {
    input: { type: "object", properties: { id: { type: "string" } }, additionalProperties: false },
    handler: () => Effect.succeed("")
  })
)

const resources = Layer.mergeAll(
  Resource.layer(Resource.make({ uri: "fixture://explodes", name: "explodes", read: boomLater() })),
  ResourceTemplate.layer(
    ResourceTemplate.make({
      uriTemplate: "fixture://items/{id}",
      name: "items",
      read: ({ id }, uri) => (id === "gone" ? Effect.fail(Resource.notFound(uri)) : boom()),
      complete: { id: () => boom() }
    })
  )
)

const prompts = Prompt.layer(Prompt.make({ name: "explodes", handler: () => boomLater() }))

interface Logged {
  readonly text: string
  readonly annotations: { readonly [key: string]: unknown }
}

const connect = (version: ProtocolVersion.ProtocolVersion, logs: Array<Logged>, capabilities: Obj = {}) =>
  Effect.gen(function* () {
    const capture = Logger.make((options) => {
      logs.push({
        text: `${String(options.message)} ${Cause.pretty(options.cause)}`,
        annotations: options.fiber.getRef(References.CurrentLogAnnotations)
      })
    })
    const context = yield* Layer.build(
      Layer.provideMerge(
        Layer.mergeAll(tools, resources, prompts),
        McpServer.layer({ name: "errors", version: "1.0.0", defaultLogLevel: "debug" })
      ).pipe(Layer.provideMerge(Logger.layer([capture], { mergeWithExisting: true })))
    )
    const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: true })
    yield* McpServer.makeSession.pipe(
      Effect.provideService(Transport.Transport, serverEnd),
      Effect.provideContext(context)
    )
    const seen: Array<unknown> = []
    const client = yield* ClientSession.make({
      clientInfo: { name: "errors-client", version: "1.0.0" },
      capabilities,
      supportedVersions: [version],
      notificationHandlers: new Map([
        ["notifications/message", (params: unknown) => Effect.sync(() => void seen.push(params))]
      ])
    }).pipe(Effect.provideService(Transport.Transport, clientEnd), Effect.orDie)
    // On 2026-07-28 the level travels in each request's `_meta`.
    const withLevel = (params: Obj): Obj => ({ ...params, _meta: { [Meta.logLevelKey]: "debug" } })
    const request = (method: string, params: Obj) => client.request(method, withLevel(params))
    const call = (name: string, args: Obj) => request("tools/call", { name, arguments: args }) as Effect.Effect<Obj>
    return { request, call, seen }
  })

const correlation = /^Internal error \(correlation id ([0-9a-f-]{36})\)$/

describe("honest errors", () => {
  for (const version of ProtocolVersion.all) {
    it.effect(`${version}: a typed failure its Schema encodes reaches the client with its fields`, () =>
      Effect.gen(function* () {
        const { call } = yield* connect(version, [])
        const structured = Features.has(version, "structuredContent")
        const notFound = yield* call("fails", { id: "7" })
        assert.isTrue(notFound.isError)
        assert.deepStrictEqual(JSON.parse(notFound.content[0].text), { _tag: "NotFound", id: "7" })
        if (structured) assert.deepStrictEqual(notFound.structuredContent, { _tag: "NotFound", id: "7" })
        else assert.notProperty(notFound, "structuredContent")
        const forbidden = yield* call("fails", { id: "admin" })
        assert.deepStrictEqual(JSON.parse(forbidden.content[0].text), { _tag: "Forbidden", user: "admin", level: 3 })
        // A failure the Schema does not encode keeps the old report: tag and message.
        const other = yield* call("fails", { id: "other" })
        assert.isTrue(other.isError)
        assert.strictEqual(other.content[0].text, "Tool fails failed: Other: not declared")
        assert.notProperty(other, "structuredContent")
        // With an output schema the failure is not `structuredContent` (it does not match the schema).
        const typed = yield* call("typed", { id: "9" })
        assert.isTrue(typed.isError)
        assert.deepStrictEqual(JSON.parse(typed.content[0].text), { _tag: "NotFound", id: "9" })
        assert.notProperty(typed, "structuredContent")
      })
    )

    it.effect(`${version}: defects on every request type reach the client as a correlation id only`, () => {
      const logs: Array<Logged> = []
      return Effect.gen(function* () {
        const { request, call, seen } = yield* connect(version, logs)
        // The log channel is open: a handler's own log reaches the client.
        yield* call("logs", {})
        // A barrier: the server answers after the log it sent before, and the client hands
        // each notification to its handler before it reads the next frame.
        const barrier = request(Features.has(version, "discover") ? "server/discover" : "ping", {})
        yield* barrier
        assert.include(JSON.stringify(seen), "a log the client sees")
        const ids: Array<string> = []
        for (const name of ["explodes", "explodes-later"]) {
          const result = yield* call(name, {})
          assert.isTrue(result.isError)
          const match = correlation.exec(result.content[0].text)
          assert.isNotNull(match, result.content[0].text)
          ids.push(match![1]!)
        }
        const failing: ReadonlyArray<readonly [string, Obj]> = [
          ["resources/read", { uri: "fixture://explodes" }],
          ["resources/read", { uri: "fixture://items/1" }],
          ["prompts/get", { name: "explodes" }],
          [
            "completion/complete",
            { ref: { type: "ref/resource", uri: "fixture://items/{id}" }, argument: { name: "id", value: "x" } }
          ]
        ]
        for (const [method, params] of failing) {
          const error = (yield* Effect.flip(request(method, params))) as Obj
          assert.strictEqual(error._tag, "InternalError", method)
          const match = correlation.exec(error.message)
          assert.isNotNull(match, error.message)
          assert.deepStrictEqual(error.data, { correlationId: match![1] })
          assert.notInclude(JSON.stringify(error), "hunter2")
          ids.push(match![1]!)
        }
        // The same barrier: every log sent for those requests has been seen.
        yield* barrier
        assert.notInclude(JSON.stringify(seen), "hunter2")
        // Each id names one logged Cause, with the message and the stack.
        for (const id of ids) {
          const logged = logs.filter((log) => log.annotations[Defect.annotation] === id)
          assert.strictEqual(logged.length, 1, id)
          assert.include(logged[0]!.text, secret)
          assert.include(logged[0]!.text, "Errors.test.ts")
        }
        assert.strictEqual(new Set(ids).size, ids.length)
      })
    })

    it.effect(`${version}: a tool's defect while the client could be asked for input (rounds on 2026-07-28)`, () => {
      const logs: Array<Logged> = []
      return Effect.gen(function* () {
        const { call } = yield* connect(version, logs, { elicitation: {} })
        const result = yield* call("explodes-later", {})
        assert.isTrue(result.isError)
        const match = correlation.exec(result.content[0].text)
        assert.isNotNull(match, result.content[0].text)
        const logged = logs.filter((log) => log.annotations[Defect.annotation] === match![1])
        assert.strictEqual(logged.length, 1)
        assert.include(logged[0]!.text, secret)
      })
    })

    it.effect(`${version}: invalid arguments list every issue with its path`, () =>
      Effect.gen(function* () {
        const { request } = yield* connect(version, [])
        const args = { title: 42, tags: ["a", 7] }
        const exit = yield* Effect.exit(request("tools/call", { name: "create", arguments: args }))
        const message =
          exit._tag === "Success"
            ? ((exit.value as Obj).content[0].text as string)
            : ((exit.cause.reasons[0] as Obj).error.message as string)
        // From 2025-11-25 an input validation error is a tool execution error, before a protocol error.
        assert.strictEqual(exit._tag === "Success", version >= "2025-11-25", message)
        assert.strictEqual(
          message,
          "Invalid arguments for tool create: title: Expected string; body: Missing key; tags.1: Expected string"
        )
      })
    )

    it.effect(
      `${version}: an argument error leads with the real reason: a string for a number, a union's deepest issue`,
      () =>
        Effect.gen(function* () {
          const { request, call } = yield* connect(version, [])
          const args = { speed: "fast", target: { point: { x: 1, y: "2" } } }
          const exit = yield* Effect.exit(request("tools/call", { name: "move", arguments: args }))
          const message =
            exit._tag === "Success"
              ? ((exit.value as Obj).content[0].text as string)
              : ((exit.cause.reasons[0] as Obj).error.message as string)
          // Before: `speed: Expected "Infinity" | "-Infinity" | "NaN"` (the JSON form of a number is a union with
          // those strings), and the union's other member (`target.name: Missing key`) came first.
          assert.strictEqual(
            message,
            "Invalid arguments for tool move: speed: Expected number; target.point.y: Expected number; target.name: Missing key"
          )
          // The output is checked the same way.
          const output = yield* call("move", { speed: 0, target: { name: "home" } })
          assert.isTrue(output.isError)
          assert.strictEqual(
            output.content[0].text,
            "Tool move failed: the tool's output does not match its output schema: distance: Expected number"
          )
        })
    )

    it.effect(`${version}: resource not found has the revision's code, from a handler or an unknown URI`, () =>
      Effect.gen(function* () {
        const { request } = yield* connect(version, [])
        const code = version === "2026-07-28" ? -32602 : -32002
        for (const uri of ["fixture://nothing", "fixture://items/gone"]) {
          const error = (yield* Effect.flip(request("resources/read", { uri }))) as Obj
          assert.strictEqual(error.code, code, uri)
          assert.deepStrictEqual(error.data, { uri })
          assert.strictEqual(error.message, "Resource not found")
        }
      })
    )

    it.effect(
      `${version}: an unknown name or URI is echoed once, as a bounded prefix (a 3 MB one does not come back as 6 MB), and argument errors list a bounded number of bounded keys`,
      () =>
        Effect.gen(function* () {
          const { request } = yield* connect(version, [])
          const huge = `fixture://${"x".repeat(3_000_000)}`
          // Unknown keys name themselves in argument errors: a huge one, and very many.
          const many = Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`fixture://xxxx${i}`, 0]))
          const replies: Array<[string, object]> = [
            ["tools/call", { name: "strict", arguments: { id: "1", [huge]: 0 } }],
            ["tools/call", { name: "raw", arguments: { id: "1", [huge]: 0 } }],
            ["tools/call", { name: "strict", arguments: { id: "1", ...many } }],
            ["tools/call", { name: "raw", arguments: { id: "1", ...many } }],
            ["resources/read", { uri: huge }],
            ["tools/call", { name: huge, arguments: {} }],
            ["prompts/get", { name: huge }],
            ["completion/complete", { ref: { type: "ref/resource", uri: huge }, argument: { name: "a", value: "" } }],
            ["completion/complete", { ref: { type: "ref/prompt", name: huge }, argument: { name: "a", value: "" } }]
          ]
          for (const [method, params] of replies) {
            // From 2025-11-25 invalid arguments are a tool result, not a protocol error: either way it is small.
            const reply = yield* Effect.exit(request(method, params))
            const error = reply._tag === "Success" ? reply.value : reply.cause.reasons[0]
            const size = JSON.stringify(error).length
            assert.isBelow(size, 2_000, `${method}: ${size} characters`)
            assert.include(JSON.stringify(error), "xxxx", method)
          }
        })
    )
  }
})
