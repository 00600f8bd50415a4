/**
 * The tool listing and SEP-2243: on 2026-07-28 a tool whose `x-mcp-header`
 * annotations are invalid is left out (with a warning naming it and the
 * reason) and the valid ones are kept; earlier revisions have no such
 * annotations and list every tool. A tool called before it was listed goes
 * without its `Mcp-Param-*` headers: on the server's HeaderMismatch the
 * client lists the tools and calls again, once.
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as WebHandler from "@effect-mcp/server/WebHandler"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Stream from "effect/Stream"
import { clientInfo, connect } from "./fixtures.ts"

const schema = (properties: Record<string, unknown>) => ({ type: "object" as const, properties })

const listed = [
  { name: "valid", inputSchema: schema({ region: { type: "string", "x-mcp-header": "Region" } }) },
  { name: "empty-name", inputSchema: schema({ value: { type: "string", "x-mcp-header": "" } }) },
  { name: "number", inputSchema: schema({ score: { type: "number", "x-mcp-header": "Score" } }) },
  {
    name: "duplicate",
    inputSchema: schema({
      a: { type: "string", "x-mcp-header": "MyField" },
      b: { type: "string", "x-mcp-header": "myfield" }
    })
  },
  { name: "in-items", inputSchema: schema({ a: { type: "array", items: { type: "string", "x-mcp-header": "A" } } }) },
  { name: "unannotated", inputSchema: schema({ text: { type: "string" } }) }
]

const server = { handlers: [["tools/list", () => () => Effect.succeed({ tools: listed })]] as const }

const captured = () => {
  const warnings: Array<string> = []
  const layer = Logger.layer([
    Logger.make((options) => {
      if (options.logLevel === "Warn") warnings.push(String(options.message))
    })
  ])
  return { warnings, layer }
}

const names = (tools: ReadonlyArray<{ readonly name: string }>) => tools.map((t) => t.name)

describe("tools/list and x-mcp-header", () => {
  it.effect("2026-07-28: tools with invalid annotations are left out with a warning each, the others kept", () => {
    const { warnings, layer } = captured()
    return Effect.gen(function* () {
      const { client } = yield* connect("2026-07-28", { server })
      assert.deepStrictEqual(names(yield* Stream.runCollect(client.tools)), ["valid", "unannotated"])
      assert.deepStrictEqual(names((yield* client.listTools()).tools), ["valid", "unannotated"])
      assert.strictEqual(warnings.length, 8)
      const [empty, number, duplicate, items] = warnings
      assert.include(empty, "tool empty-name")
      assert.include(empty, '"" is not a header name')
      assert.include(number, "tool number")
      assert.include(number, "only string, integer and boolean")
      assert.include(duplicate, "tool duplicate")
      assert.include(duplicate, "declared twice")
      assert.include(items, "tool in-items")
      assert.include(items, "not reachable through properties alone")
    }).pipe(Effect.provide(layer))
  })

  it.effect("2025-11-25: the annotation means nothing and every tool is listed", () => {
    const { warnings, layer } = captured()
    return Effect.gen(function* () {
      const { client } = yield* connect("2025-11-25", { server })
      assert.deepStrictEqual(names(yield* Stream.runCollect(client.tools)), names(listed))
      assert.deepStrictEqual(warnings, [])
    }).pipe(Effect.provide(layer))
  })

  it.effect("2026-07-28: a listing of valid tools only is kept whole, without warnings", () => {
    const { warnings, layer } = captured()
    return Effect.gen(function* () {
      const valid = [listed[0]!, listed[5]!]
      const { client } = yield* connect("2026-07-28", {
        server: { handlers: [["tools/list", () => () => Effect.succeed({ tools: valid })]] }
      })
      const page = yield* client.listTools()
      assert.deepStrictEqual(page.tools, valid)
      assert.deepStrictEqual(warnings, [])
    }).pipe(Effect.provide(layer))
  })
})

/** A server whose one tool mirrors its `region` argument into `Mcp-Param-Region`. */
const Regional = Tool.layer(
  Tool.make("regional", {
    input: {
      type: "object",
      properties: { region: { type: "string", "x-mcp-header": "Region" } },
      required: ["region"]
    },
    handler: (args) => Effect.succeed(`region ${String(args.region)}`)
  })
).pipe(Layer.provideMerge(McpServer.layer({ name: "regional", version: "1.0.0" })))

interface Seen {
  readonly method: string
  readonly status: number
  readonly region: string | null
}

/**
 * A 2026-07-28 McpClient over Streamable HTTP to `Regional` served in
 * memory, with what reached the server: each POST's method, its answer's
 * status and its `Mcp-Param-Region` header. `strip` drops that header on the
 * way, as an intermediary that does not pass it on would.
 */
const overHttp = (options: { readonly strip?: boolean } = {}) =>
  Effect.gen(function* () {
    const web = yield* Effect.acquireRelease(
      Effect.sync(() => WebHandler.make(Regional)),
      (web) => Effect.promise(() => web.dispose())
    )
    const seen: Array<Seen> = []
    const fetch: typeof globalThis.fetch = async (input, init) => {
      const request = new Request(input, init)
      if (options.strip === true) request.headers.delete("mcp-param-region")
      const body = request.method === "POST" ? await request.clone().text() : ""
      const response = await web.handler(request)
      if (body !== "") {
        const method = (JSON.parse(body) as { readonly method?: unknown }).method
        if (typeof method === "string") {
          seen.push({ method, status: response.status, region: request.headers.get("mcp-param-region") })
        }
      }
      return response
    }
    const transport = yield* Layer.build(
      StreamableHttpClient.layer({ url: "http://localhost/mcp" }).pipe(
        Layer.provide(FetchHttpClient.layer),
        Layer.provide(Layer.succeed(FetchHttpClient.Fetch, fetch))
      )
    )
    const client = yield* McpClient.make({ clientInfo, supportedVersions: ["2026-07-28"] }).pipe(
      Effect.provideContext(transport)
    )
    return { client, seen, calls: () => seen.filter((s) => s.method !== "server/discover") }
  })

describe("HeaderMismatch on a tool called before it was listed (2026-07-28 over HTTP)", () => {
  it.effect("the client lists the tools and calls again with the headers", () =>
    Effect.gen(function* () {
      const { client, calls } = yield* overHttp()
      const result = yield* client.callTool("regional", { region: "eu-west" })
      assert.deepStrictEqual(result.content, [{ type: "text", text: "region eu-west" }])
      assert.deepStrictEqual(calls(), [
        { method: "tools/call", status: 400, region: null },
        { method: "tools/list", status: 200, region: null },
        { method: "tools/call", status: 200, region: "eu-west" }
      ])
      // Learnt: the next call carries the header at once.
      yield* client.callTool("regional", { region: "us-east" })
      assert.deepStrictEqual(calls().at(-1), { method: "tools/call", status: 200, region: "us-east" })
    })
  )

  it.effect("a second HeaderMismatch is the caller's: one listing, one retry", () =>
    Effect.gen(function* () {
      const { client, calls } = yield* overHttp({ strip: true })
      const error = yield* Effect.flip(client.callTool("regional", { region: "eu-west" }))
      assert.strictEqual(error._tag, "HeaderMismatch")
      assert.include(error.message, "Mcp-Param-Region")
      assert.deepStrictEqual(
        calls().map((s) => `${s.method} ${s.status}`),
        ["tools/call 400", "tools/list 200", "tools/call 400"]
      )
    })
  )
})
