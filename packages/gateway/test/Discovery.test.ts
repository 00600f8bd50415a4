/**
 * Discovery mode in memory, on the TestClock: a gateway over two in-memory
 * upstreams with 3,000 generated tools between them lists its three tools
 * only; search finds, ranks and pages, details describe, call calls; a tool
 * hidden by the policy is neither found, described nor callable; the limits,
 * the breaker and the audit see a `call_tool` as the call of the tool it
 * names; and a change of the upstreams' tools is still announced.
 */
import * as Transport from "@effect-mcp/engine/Transport"
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Audit from "../src/Audit.ts"
import * as CircuitBreaker from "../src/CircuitBreaker.ts"
import * as Discovery from "../src/Discovery.ts"
import * as Gateway from "../src/Gateway.ts"
import * as GatewayConfig from "../src/GatewayConfig.ts"
import * as CatalogIndex from "../src/internal/catalogIndex.ts"
import * as Policy from "../src/Policy.ts"
import { memory } from "./memoryConnector.ts"

const verbs = ["get", "list", "create", "delete", "update"]
const nouns = ["invoice", "customer", "ticket", "order", "report", "user", "project", "file"]

/** `count` generated tools (`<verb>_<noun>_<n>`), with a raw JSON Schema input (cheap to make by the thousand). */
const generated = (count: number, offset: number) =>
  Array.from({ length: count }, (_, i) => {
    const n = offset + i
    const verb = verbs[n % verbs.length]!
    const noun = nouns[Math.floor(n / verbs.length) % nouns.length]!
    return Tool.make(`${verb}_${noun}_${n}`, {
      description: `${verb} a ${noun} of workspace ${n % 7}\nSecond line, only in the details.`,
      input: { type: "object", properties: { id: { type: "string" } } },
      handler: () => Effect.succeed(`${verb} ${noun} ${n}`)
    })
  })

/** What the upstreams share: `failing` makes `flaky` answer an internal error. */
interface Shared {
  failing: boolean
}

const upstream = (name: string, extra: ReadonlyArray<Tool.Tool>, count: number, offset: number) =>
  Tool.layer(...generated(count, offset), ...extra).pipe(
    Layer.provideMerge(McpServer.layer({ name, version: "1.0.0" }))
  )

const special = (shared: Shared) => [
  Tool.make("forecast", {
    title: "Weather forecast",
    description: "The weather forecast of a city",
    input: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    handler: (args) => Effect.succeed(`forecast for ${String(args.city)}`)
  }),
  Tool.make("flaky", {
    description: "Fails while the test says so",
    input: { type: "object" },
    handler: () =>
      shared.failing ? Effect.fail(new McpError.InternalError({ message: "down" })) : Effect.succeed("up")
  })
]

const purge = Tool.make("admin_purge", {
  description: "Purges everything",
  input: { type: "object" },
  handler: () => Effect.succeed("purged")
})

/**
 * Upstream "a" (`size` * 2/3 generated tools, `forecast`, `flaky`) and "b" (`size` / 3, `admin_purge`) behind a
 * gateway in discovery mode.
 */
const gateway = (options: Partial<Gateway.Options> = {}, size = 3000) =>
  Effect.gen(function* () {
    const shared: Shared = { failing: false }
    const a = yield* Layer.build(upstream("a", special(shared), (size * 2) / 3, 0))
    const b = yield* Layer.build(upstream("b", [purge], size / 3, (size * 2) / 3))
    const context = yield* Layer.build(
      Gateway.layer({
        server: { name: "gateway", version: "1.0.0" },
        config: { mcpServers: { a: { command: "a" }, b: { command: "b" } } },
        healthCheck: false,
        discovery: true,
        ...options
      }).pipe(Layer.provide(memory({ a, b })))
    )
    const connect = (owner: string, scopes: ReadonlyArray<string> = []) =>
      McpTest.makeClientFor(
        McpServer.makeSession.pipe(
          Effect.updateService(Transport.Transport, (transport) => ({
            ...transport,
            principal: () => ({ owner, scopes, value: {} })
          }))
        ),
        { revision: "2025-11-25" }
      ).pipe(Effect.provideContext(context))
    return { connect, shared, a }
  })

type Client = Effect.Success<ReturnType<Effect.Success<ReturnType<typeof gateway>>["connect"]>>

const errorOf = (error: unknown) => error as { readonly code: number; readonly message: string; readonly data: unknown }

const textOf = (result: Tools.CallToolResult) =>
  result.content.map((block) => (block.type === "text" ? block.text : "")).join("")

const search = (client: Client, query: string, cursor?: string) =>
  Effect.map(
    client.callTool(Discovery.toolNames.search, { query, ...(cursor === undefined ? {} : { cursor }) }),
    (result) => result.structuredContent as Discovery.Page
  )

/** Every page of a search, each page's names. */
const pages = (client: Client, query: string) =>
  Effect.gen(function* () {
    const all: Array<ReadonlyArray<string>> = []
    let cursor: string | undefined
    do {
      const page = yield* search(client, query, cursor)
      all.push(page.tools.map((t) => t.name))
      cursor = page.nextCursor
    } while (cursor !== undefined)
    return all
  })

describe("Discovery", () => {
  it.effect("lists three tools; search finds, ranks and pages; details describe; call calls", () =>
    Effect.gen(function* () {
      const { connect } = yield* gateway({ discovery: { pageSize: 25 } })
      const alice = yield* connect("alice")
      const listed = (yield* Stream.runCollect(alice.tools)).map((t) => t.name).sort()
      assert.deepStrictEqual(listed, ["call_tool", "get_tool_details", "search_tools"])

      const weather = yield* search(alice, "weather forecast")
      assert.deepStrictEqual(weather.tools[0], {
        name: "a__forecast",
        title: "Weather forecast",
        description: "The weather forecast of a city",
        upstream: "a"
      })
      // Every invoice tool of both upstreams, 25 to a page, each once; equal scores in name order.
      const invoices = yield* pages(alice, "invoice")
      const found = invoices.flat()
      assert.strictEqual(found.length, 3000 / nouns.length)
      assert.strictEqual(new Set(found).size, found.length)
      assert.isTrue(invoices.slice(0, -1).every((page) => page.length === 25))
      assert.deepStrictEqual(found, [...found].sort())
      // Two words: tools with both come before tools with one; the first line of a description only.
      const both = yield* search(alice, "delete ticket")
      assert.isTrue(both.tools.every((t) => /^[ab]__delete_ticket_/.test(t.name)))
      assert.strictEqual(both.tools[0]?.description?.includes("Second line"), false)
      // The whole name first, whatever else matches.
      assert.strictEqual((yield* search(alice, "b__get_invoice_2000")).tools[0]?.name, "b__get_invoice_2000")
      // A cursor is for the query it came with.
      const first = yield* search(alice, "invoice")
      const wrong = errorOf(yield* Effect.flip(search(alice, "ticket", first.nextCursor)))
      assert.strictEqual(wrong.code, -32602)
      // Arguments that do not fit: answered as the server answers any tool's (on 2025-11-25, a tool error).
      const bad = yield* alice.callTool(Discovery.toolNames.search, { query: 7 })
      assert.deepStrictEqual(
        [bad.isError, textOf(bad).startsWith("Invalid arguments for tool search_tools")],
        [true, true]
      )
      const second = yield* search(alice, "invoice", first.nextCursor)
      assert.deepStrictEqual(
        second.tools.map((t) => t.name),
        invoices[1]
      )

      const details = (yield* alice.callTool(Discovery.toolNames.details, { name: "a__forecast" }))
        .structuredContent as { readonly upstream: string; readonly tool: Tools.Tool }
      assert.strictEqual(details.upstream, "a")
      assert.deepStrictEqual(details.tool.inputSchema.required, ["city"])
      assert.strictEqual(details.tool.name, "a__forecast")

      const called = yield* alice.callTool(Discovery.toolNames.call, {
        name: "a__forecast",
        arguments: { city: "Oslo" }
      })
      assert.strictEqual(textOf(called), "forecast for Oslo")
      assert.strictEqual(
        textOf(yield* alice.callTool(Discovery.toolNames.call, { name: "b__create_order_2977" })),
        "create order 2977"
      )
      // A client that knows a tool's name calls it directly, though it is not listed.
      assert.strictEqual(textOf(yield* alice.callTool("a__forecast", { city: "Oslo" })), "forecast for Oslo")
      // Unknown to every tool, and to a direct call.
      for (const [tool, args] of [
        [Discovery.toolNames.details, { name: "a__nothing" }],
        [Discovery.toolNames.call, { name: "a__nothing", arguments: {} }],
        ["a__nothing", {}]
      ] as const) {
        const unknown = errorOf(yield* Effect.flip(alice.callTool(tool, args)))
        assert.deepStrictEqual([unknown.code, unknown.message], [-32602, "Unknown tool: a__nothing"])
      }
    })
  )

  it.effect("a tool hidden from a principal is neither found, described nor callable", () =>
    Effect.gen(function* () {
      const { connect } = yield* gateway({
        policy: Policy.upstreamScopes({ b: ["admin"] }),
        discovery: { pageSize: Discovery.maxPageSize }
      })
      const alice = yield* connect("alice")
      const root = yield* connect("root", ["admin"])
      assert.deepStrictEqual((yield* search(alice, "purge")).tools, [])
      assert.deepStrictEqual(
        (yield* search(root, "purge")).tools.map((t) => t.name),
        ["b__admin_purge"]
      )
      // Pages count what the caller sees: no hole where hidden tools are.
      const everything = (yield* pages(alice, "")).flat()
      assert.strictEqual(everything.length, 2002)
      assert.isTrue(everything.every((name) => name.startsWith("a__")))
      for (const [tool, args] of [
        [Discovery.toolNames.details, { name: "b__admin_purge" }],
        [Discovery.toolNames.call, { name: "b__admin_purge" }],
        ["b__admin_purge", {}]
      ] as const) {
        const hidden = errorOf(yield* Effect.flip(alice.callTool(tool, args)))
        assert.deepStrictEqual([hidden.code, hidden.message], [-32602, "Unknown tool: b__admin_purge"])
      }
      assert.strictEqual(textOf(yield* root.callTool(Discovery.toolNames.call, { name: "b__admin_purge" })), "purged")
      assert.strictEqual(textOf(yield* root.callTool("b__admin_purge", {})), "purged")
    })
  )

  it.effect("limits, breaker and audit see a call_tool as the call of the tool it names", () =>
    Effect.gen(function* () {
      const records: Array<Audit.Record> = []
      const { connect, shared } = yield* gateway(
        {
          limits: { tools: { a__forecast: { rate: { capacity: 1, refillEvery: "1 minute" } } } },
          circuitBreaker: { failures: 1 },
          audit: { sink: (record) => Effect.sync(() => records.push(record)), digestKey: "audit key" }
        },
        30
      )
      const alice = yield* connect("alice")
      const call = (name: string, args: object = {}) =>
        alice.callTool(Discovery.toolNames.call, { name, arguments: args })
      yield* search(alice, "forecast")
      yield* alice.callTool(Discovery.toolNames.details, { name: "a__forecast" })
      yield* call("a__forecast", { city: "Oslo" })
      const limited = errorOf(yield* Effect.flip(call("a__forecast", { city: "Oslo" })))
      assert.strictEqual(limited.code, -32029)
      // A direct call of it draws on the same limit.
      assert.strictEqual(errorOf(yield* Effect.flip(alice.callTool("a__forecast", { city: "Oslo" }))).code, -32029)
      shared.failing = true
      assert.strictEqual(errorOf(yield* Effect.flip(call("a__flaky"))).code, -32603)
      const open = errorOf(yield* Effect.flip(call("a__get_invoice_0")))
      assert.deepStrictEqual(open.code, CircuitBreaker.Code.CircuitOpen)
      const digest = Audit.digest("audit key", { city: "Oslo" })
      // Searching and describing reach no upstream: no record.
      assert.deepStrictEqual(
        records.map((r) => [r.target, r.upstream, r.outcome, r.errorCode, r.argumentsDigest]),
        [
          ["a__forecast", "a", "success", undefined, digest],
          ["a__forecast", "a", "error", -32029, digest],
          ["a__forecast", "a", "error", -32029, digest],
          ["a__flaky", "a", "error", -32603, Audit.digest("audit key", {})],
          ["a__get_invoice_0", "a", "error", CircuitBreaker.Code.CircuitOpen, Audit.digest("audit key", {})]
        ]
      )
    })
  )

  it.effect("a change of the upstreams' tools is announced, and searched from then on", () =>
    Effect.gen(function* () {
      const { connect, a } = yield* gateway({}, 30)
      const alice = yield* connect("alice")
      assert.deepStrictEqual((yield* search(alice, "tide")).tools, [])
      const changed = yield* McpTest.forkIdle(alice.toolListChanged.pipe(Stream.take(1), Stream.runDrain))
      const scope = yield* Scope.make()
      yield* Tool.register(
        Tool.make("tides", {
          description: "Tide tables",
          input: { type: "object" },
          handler: () => Effect.succeed("high at noon")
        })
      ).pipe(Effect.provideContext(a), Scope.provide(scope))
      yield* Fiber.join(changed)
      assert.deepStrictEqual(
        (yield* search(alice, "tide")).tools.map((t) => t.name),
        ["a__tides"]
      )
      assert.strictEqual(textOf(yield* alice.callTool(Discovery.toolNames.call, { name: "a__tides" })), "high at noon")
      // Still three tools listed.
      assert.strictEqual((yield* Stream.runCollect(alice.tools)).length, 3)
    })
  )

  it("ranks as documented: name, title, description, upstream; a word's start counts less; ties by name", () => {
    const entry = (server: string, name: string, item: Partial<Tools.Tool> = {}) => ({
      server,
      name,
      item: { name, inputSchema: { type: "object" as const }, ...item }
    })
    const index = CatalogIndex.make([
      entry("a", "yy", { description: "Tells the weather" }),
      entry("weather", "xx"),
      entry("a", "a__zz", { title: "Weather now" }),
      entry("b", "b__getWeather"),
      entry("a", "a__weathering")
    ])
    const names = (query: string) => index.search(query).map((id) => index.entries[id]!.name)
    // 6 (name), 4 (title), 3 (start of a name word), 2 and 2 (description, upstream: by name).
    assert.deepStrictEqual(names("weather"), ["b__getWeather", "a__zz", "a__weathering", "xx", "yy"])
    // Each word adds up; the whole name comes first.
    assert.deepStrictEqual(names("get weather").slice(0, 2), ["b__getWeather", "a__zz"])
    assert.deepStrictEqual(names("xx")[0], "xx")
    assert.deepStrictEqual(names("  "), ["a__weathering", "a__zz", "b__getWeather", "xx", "yy"])
    assert.deepStrictEqual(names("nothing"), [])
  })

  it.effect("the configuration file's gateway section turns it on", () =>
    Effect.gen(function* () {
      const servers = { mcpServers: { a: { command: "a" } } }
      assert.deepStrictEqual(
        (yield* GatewayConfig.decode({ ...servers, gateway: { discovery: true } })).discovery,
        true
      )
      assert.deepStrictEqual(
        (yield* GatewayConfig.decode({ ...servers, gateway: { discovery: { pageSize: 10 } } })).discovery,
        { pageSize: 10 }
      )
      assert.strictEqual((yield* GatewayConfig.decode(servers)).discovery, undefined)
      assert.strictEqual(
        (yield* GatewayConfig.decode({ ...servers, gateway: { discovery: false } })).discovery,
        undefined
      )
      const wrong = yield* Effect.flip(GatewayConfig.decode({ ...servers, gateway: { discovery: { pageSize: 0 } } }))
      assert.strictEqual(wrong.message, "gateway.discovery.pageSize: Expected a value between 1 and 100, got 0")
      assert.strictEqual(Discovery.pageSizeOf({ pageSize: 1000 }), Discovery.maxPageSize)
    })
  )
})
