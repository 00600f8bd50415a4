/**
 * A tool whose handler returns an outcome it already has (`Effect.succeed`,
 * `Effect.fail`, `Effect.die`: an Exit) is answered without running anything;
 * every other handler runs in the request's fiber. Both paths must answer
 * alike, on every revision.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Features from "@effect-mcp/protocol/Features"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { type Obj, revisions, testServer } from "./fixtures.ts"

class Boom extends Schema.TaggedError<Boom>()("Boom", { message: Schema.String }) {}

type Outcome = Effect.Effect<unknown, unknown>

/** The same outcome as an Exit (answered at once) and as an effect the request's fiber must run. */
const cases: ReadonlyArray<readonly [name: string, make: () => Outcome, output?: Tool.AnySchema]> = [
  ["text", () => Effect.succeed("hello")],
  ["structured", () => Effect.succeed({ sum: 5 }), Schema.Struct({ sum: Schema.Finite }) as Tool.AnySchema],
  ["misfit", () => Effect.succeed({ sum: "five" }), Schema.Struct({ sum: Schema.Finite }) as Tool.AnySchema],
  ["failure", () => Effect.fail(new Boom({ message: "the disk is full" }))],
  ["protocol", () => Effect.fail(new McpError.InvalidParams({ message: "no such row" }))],
  ["defect", () => Effect.die(new Error("unexpected"))]
]

const tools = cases.flatMap(([name, make, output]) => [
  Tool.make(`${name}-now`, {
    input: Schema.Struct({}),
    ...(output === undefined ? {} : { output }),
    handler: () => make() as Effect.Effect<never, unknown>
  }),
  Tool.make(`${name}-later`, {
    input: Schema.Struct({}),
    ...(output === undefined ? {} : { output }),
    // Ends after a yield, not while starting: the yield is the subject (both paths must agree).
    handler: () => Effect.andThen(Effect.yieldNow, make()) as Effect.Effect<never, unknown>
  })
])

const throwing = Tool.make("throwing", {
  input: Schema.Struct({}),
  handler: (): Effect.Effect<string> => {
    throw new Error("while building")
  }
})

const features = Tool.layer(...tools, throwing)

describe("tools/call answers alike whether the handler's outcome is already known", () => {
  for (const version of revisions) {
    it.effect(`${version}: Exit handlers and running handlers give the same answers`, () =>
      Effect.gen(function* () {
        const { request } = yield* McpTest.connectRaw(testServer(features), { revision: version })
        const call = (name: string) => Effect.exit(request("tools/call", { name, arguments: {} }))
        const answers: Record<string, Exit.Exit<unknown, unknown>> = {}
        for (const [name] of cases) {
          const now = yield* call(`${name}-now`)
          const later = yield* call(`${name}-later`)
          // The tool's name is in error messages, a defect's correlation id is new each time; the rest must be the same.
          const strip = (exit: Exit.Exit<unknown, unknown>) =>
            JSON.parse(
              JSON.stringify(exit)
                .replaceAll(`${name}-now`, name)
                .replaceAll(`${name}-later`, name)
                .replace(/correlation id [0-9a-f-]{36}/g, "correlation id ID")
            )
          assert.deepStrictEqual(strip(now), strip(later), name)
          answers[name] = now
        }
        const value = (name: string) => {
          const exit = answers[name]!
          assert.isTrue(Exit.isSuccess(exit), name)
          return (exit as Exit.Success<Obj>).value
        }
        assert.deepStrictEqual(value("text").content, [{ type: "text", text: "hello" }])
        assert.isUndefined(value("text").isError)
        assert.deepStrictEqual(value("structured").content, [{ type: "text", text: '{"sum":5}' }])
        if (Features.has(version, "structuredContent"))
          assert.deepStrictEqual(value("structured").structuredContent, { sum: 5 })
        assert.isTrue(value("misfit").isError)
        assert.include(value("misfit").content[0].text, "does not match its output schema")
        assert.isTrue(value("failure").isError)
        assert.strictEqual(value("failure").content[0].text, "Tool failure-now failed: Boom: the disk is full")
        assert.isTrue(value("defect").isError)
        assert.include(value("defect").content[0].text, "Internal error (correlation id ")
        assert.notInclude(value("defect").content[0].text, "unexpected")
        const protocol = answers.protocol!
        assert.isTrue(Exit.isFailure(protocol))
        const error = (yield* Effect.flip(request("tools/call", { name: "protocol-now", arguments: {} }))) as Obj
        assert.strictEqual(error.code, -32602)
        assert.include(error.message, "no such row")
        const thrown = (yield* request("tools/call", { name: "throwing", arguments: {} })) as Obj
        assert.isTrue(thrown.isError)
        assert.include(thrown.content[0].text, "Internal error (correlation id ")
        assert.notInclude(thrown.content[0].text, "while building")
      })
    )
  }

  it.effect("2026-07-28: input of earlier rounds is checked even when the handler has its outcome at once", () =>
    Effect.gen(function* () {
      const { request } = yield* McpTest.connectRaw(testServer(features), { revision: "2026-07-28" })
      const malformed = (yield* Effect.flip(
        request("tools/call", { name: "text-now", arguments: {}, inputResponses: { "elicitation-0": 1 } })
      )) as Obj
      assert.strictEqual(malformed.code, -32602)
      assert.include(malformed.message, "inputResponses")
      const forged = (yield* Effect.flip(
        request("tools/call", { name: "text-now", arguments: {}, requestState: "forged.state" })
      )) as Obj
      assert.strictEqual(forged.code, -32602)
      assert.include(forged.message, "requestState")
    })
  )
})

describe("a handler's services", () => {
  it.effect("a tool registered while another request is served gets its own request's services", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const inner = Tool.make("inner", {
        input: Schema.Struct({}),
        handler: () =>
          Effect.gen(function* () {
            const current = yield* CurrentRequest.CurrentRequest
            const request = yield* ServerRequest.ServerRequest
            return `${String(current.id)}:${request.method}`
          })
      })
      const outer = Tool.make("outer", {
        input: Schema.Struct({}),
        handler: () =>
          Effect.gen(function* () {
            yield* Tool.register(inner).pipe(Scope.provide(scope))
            return String((yield* CurrentRequest.CurrentRequest).id)
          })
      })
      const { request } = yield* McpTest.connectRaw(testServer(Tool.layer(outer)), { revision: "2025-11-25" })
      const outerId = ((yield* request("tools/call", { name: "outer", arguments: {} })) as Obj).content[0].text
      const innerAnswer = ((yield* request("tools/call", { name: "inner", arguments: {} })) as Obj).content[0].text
      const [innerId, method] = innerAnswer.split(":")
      assert.strictEqual(method, "tools/call")
      assert.notStrictEqual(innerId, outerId)
      yield* Scope.close(scope, Exit.void)
    })
  )
})
