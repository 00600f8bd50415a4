/**
 * The gateway's guards in memory, on the TestClock: a policy per principal
 * (a hidden tool neither listed nor callable), limits per principal and tool,
 * a circuit per upstream opening and closing on its reset schedule, and one
 * audit record per routed call (to the log, and as a span between the
 * caller's and the upstream's).
 */
import { createHash, createHmac } from "node:crypto"
import * as Transport from "@effect-mcp/engine/Transport"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Prompt from "@effect-mcp/server/Prompt"
import * as Resource from "@effect-mcp/server/Resource"
import * as Sampling from "@effect-mcp/server/Sampling"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as SpanRecorder from "@effect-mcp/testing/SpanRecorder"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Audit from "../src/Audit.ts"
import * as CircuitBreaker from "../src/CircuitBreaker.ts"
import * as Gateway from "../src/Gateway.ts"
import * as Policy from "../src/Policy.ts"
import { memory } from "./memoryConnector.ts"

/** What the upstreams share: `failing` makes `flaky` answer an internal error; `hold` waits for `release`. */
interface Upstreams {
  failing: boolean
  readonly started: Queue.Queue<string>
  readonly release: Deferred.Deferred<void>
  /** Reads each upstream served, by URI. */
  readonly reads: { [key: string]: number }
}

const upstream = (name: string, shared: Upstreams, list?: Resource.Cache) =>
  Layer.mergeAll(
    Tool.layer(
      Tool.make("echo", {
        input: Schema.Struct({ text: Schema.String }),
        handler: ({ text }) => Effect.succeed(`${name}: ${text}`)
      }),
      Tool.make("flaky", {
        input: Schema.Struct({}),
        handler: () =>
          shared.failing ? Effect.fail(new McpError.InternalError({ message: "down" })) : Effect.succeed("up")
      }),
      Tool.make("hold", {
        input: Schema.Struct({}),
        handler: () =>
          Effect.andThen(Queue.offer(shared.started, name), Effect.as(Deferred.await(shared.release), "held"))
      }),
      // Fails with an internal error when its client cannot be asked, as an SDK server's tool does.
      Tool.make("sample", {
        input: Schema.Struct({}),
        handler: () =>
          Sampling.createMessage({ messages: [], maxTokens: 1 }).pipe(
            Effect.as("sampled"),
            Effect.catchCause((cause) => Effect.fail(new McpError.InternalError({ message: Cause.pretty(cause) })))
          )
      })
    ),
    Prompt.layer(Prompt.make({ name: "greet", handler: () => Effect.succeed(`hello from ${name}`) })),
    Resource.layer(
      ...(["public", "private"] as const).map((cacheScope) => {
        const uri = `${name}://${cacheScope}`
        return Resource.make({
          uri,
          name: `${name}-${cacheScope}`,
          cache: { ttlMs: 60_000, cacheScope },
          read: Effect.sync(() => {
            shared.reads[uri] = (shared.reads[uri] ?? 0) + 1
            return `${uri} #${shared.reads[uri]}`
          })
        })
      })
    )
  ).pipe(
    Layer.provideMerge(McpServer.layer({ name, version: "1.0.0", ...(list === undefined ? {} : { cache: { list } }) }))
  )

/** The gateway over "a" and "b" with `options`; `connect(owner, scopes)` is a client authenticated as them. */
const gateway = (
  options: Partial<Gateway.Options> = {},
  lists: { readonly a?: Resource.Cache; readonly b?: Resource.Cache } = {}
) =>
  Effect.gen(function* () {
    const shared: Upstreams = {
      failing: false,
      started: yield* Queue.unbounded<string>(),
      release: yield* Deferred.make<void>(),
      reads: {}
    }
    const a = yield* Layer.build(upstream("a", shared, lists.a))
    const b = yield* Layer.build(upstream("b", shared, lists.b))
    const context = yield* Layer.build(
      Gateway.layer({
        server: { name: "gateway", version: "1.0.0" },
        config: { mcpServers: { a: { command: "a" }, b: { command: "b" } } },
        healthCheck: false,
        ...options
      }).pipe(Layer.provide(memory({ a, b })))
    )
    const connect = (
      owner: string,
      scopes: ReadonlyArray<string> = [],
      claims: object = {},
      revision: "2025-11-25" | "2026-07-28" = "2025-11-25"
    ) =>
      McpTest.makeClientFor(
        // The session's transport says whom its requests come from, as an authenticating HTTP server's does.
        McpServer.makeSession.pipe(
          Effect.updateService(Transport.Transport, (transport) => ({
            ...transport,
            principal: () => ({ owner, scopes, value: { claims } })
          }))
        ),
        { revision }
      ).pipe(Effect.provideContext(context))
    return { connect, shared }
  })

/** A 2026-07-28 result's cache hints. */
const hintsOf = (result: { readonly ttlMs?: number; readonly cacheScope?: string }) => [result.ttlMs, result.cacheScope]

const errorOf = (error: unknown) => error as { readonly code: number; readonly message: string; readonly data: unknown }

describe("Policy", () => {
  it.effect("a hidden tool is neither listed nor callable, and answers as one that does not exist", () =>
    Effect.gen(function* () {
      const { connect } = yield* gateway({
        policy: Policy.all(
          Policy.upstreamScopes({ b: ["admin"] }),
          Policy.upstream(
            "a",
            Policy.claim("team", (team, item) => item.name !== "a__hold" || team === "ops")
          )
        )
      })
      const alice = yield* connect("alice", ["read"], { team: "sales" })
      const root = yield* connect("root", ["admin"], { team: "ops" })
      const names = (client: typeof alice) =>
        Effect.map(Stream.runCollect(client.tools), (t) => t.map((x) => x.name).sort())
      assert.deepStrictEqual(yield* names(alice), ["a__echo", "a__flaky", "a__sample"])
      assert.deepStrictEqual(yield* names(root), [
        "a__echo",
        "a__flaky",
        "a__hold",
        "a__sample",
        "b__echo",
        "b__flaky",
        "b__hold",
        "b__sample"
      ])
      // Called anyway: the answer of a tool that does not exist, word for word.
      const hidden = errorOf(yield* Effect.flip(alice.callTool("b__echo", { text: "x" })))
      const absent = errorOf(yield* Effect.flip(alice.callTool("b__nothing", { text: "x" })))
      assert.deepStrictEqual([hidden.code, hidden.message], [-32602, "Unknown tool: b__echo"])
      assert.deepStrictEqual([absent.code, absent.message], [-32602, "Unknown tool: b__nothing"])
      // Prompts too.
      const prompts = (yield* Stream.runCollect(alice.prompts)).map((p) => p.name)
      assert.deepStrictEqual(prompts, ["a__greet"])
      assert.strictEqual(errorOf(yield* Effect.flip(alice.getPrompt("b__greet"))).message, "Unknown prompt: b__greet")
      // Root sees and calls it all.
      const answer = yield* root.callTool("b__echo", { text: "x" })
      assert.deepStrictEqual(answer.content, [{ type: "text", text: "b: x" }])
    })
  )
})

describe("limits", () => {
  it.effect("a call over a principal's concurrency on a tool is refused with the documented error", () =>
    Effect.gen(function* () {
      const { connect, shared } = yield* gateway({ limits: { tools: { a__hold: { concurrency: 1 } } } })
      const alice = yield* connect("alice")
      const bob = yield* connect("bob")
      const first = yield* Effect.forkChild(alice.callTool("a__hold", {}))
      assert.strictEqual(yield* Queue.take(shared.started), "a")
      const refused = errorOf(yield* Effect.flip(alice.callTool("a__hold", {})))
      assert.deepStrictEqual([refused.code, refused.data], [-32029, { maxConcurrent: 1 }])
      const second = yield* Effect.forkChild(bob.callTool("a__hold", {}))
      assert.strictEqual(yield* Queue.take(shared.started), "a")
      yield* Deferred.succeed(shared.release, undefined)
      yield* Fiber.join(first)
      yield* Fiber.join(second)
    })
  )
})

describe("CircuitBreaker", () => {
  it.effect("opens after failures in a row, refuses until its reset delay, and closes on a good trial", () =>
    Effect.gen(function* () {
      const breaker = CircuitBreaker.make({ failures: 2, reset: Schedule.exponential("10 seconds") })
      const { connect, shared } = yield* gateway({ circuitBreaker: breaker })
      const alice = yield* connect("alice")
      shared.failing = true
      for (let i = 0; i < 2; i++) {
        assert.strictEqual(errorOf(yield* Effect.flip(alice.callTool("a__flaky", {}))).code, -32603)
      }
      // Open: every request for "a" is refused without reaching it; "b" is served.
      const open = errorOf(yield* Effect.flip(alice.callTool("a__echo", { text: "x" })))
      assert.deepStrictEqual(
        [open.code, open.data],
        [CircuitBreaker.Code.CircuitOpen, { upstream: "a", retryAfterMs: 10_000 }]
      )
      assert.strictEqual(open.message, 'Upstream "a" is unavailable (circuit open)')
      assert.deepStrictEqual(breaker.state("a"), { _tag: "Open", until: 10_000 })
      assert.strictEqual(errorOf(yield* Effect.flip(alice.callTool("b__flaky", {}))).code, -32603)
      // The open time passed: one trial, which fails, opens it again for the schedule's next delay.
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(errorOf(yield* Effect.flip(alice.callTool("a__flaky", {}))).code, -32603)
      const again = errorOf(yield* Effect.flip(alice.callTool("a__echo", { text: "x" })))
      assert.deepStrictEqual(again.data, { upstream: "a", retryAfterMs: 20_000 })
      // Healthy again: the next trial closes it, and calls flow.
      shared.failing = false
      yield* TestClock.adjust("20 seconds")
      yield* alice.callTool("a__flaky", {})
      assert.deepStrictEqual(breaker.state("a"), { _tag: "Closed", failures: 0 })
      yield* alice.callTool("a__echo", { text: "x" })
      yield* alice.callTool("a__flaky", {})
    })
  )

  it.effect("a call that failed because its client could not be asked counts for nothing in the circuit", () =>
    Effect.gen(function* () {
      // The upstream asks in rounds (2026-07-28: the gateway's client follows them) or on its session (2025-11-25,
      // where its tool fails with an internal error, as an SDK server's does).
      for (const [versions, code] of [
        [undefined, McpError.Code.MissingRequiredClientCapability],
        [["2025-11-25"], McpError.Code.InternalError]
      ] as const) {
        const breaker = CircuitBreaker.make({ failures: 2 })
        const { connect } = yield* gateway({
          circuitBreaker: breaker,
          ...(versions === undefined ? {} : { client: { supportedVersions: versions } })
        })
        // Alice's client declares no sampling: the gateway cannot ask it what "a" asks.
        const alice = yield* connect("alice")
        for (let i = 0; i < 3; i++) {
          const error = errorOf(yield* Effect.flip(alice.callTool("a__sample", {})))
          assert.strictEqual(error.code, code)
          assert.match(error.message, /did not declare capability sampling/)
        }
        assert.deepStrictEqual(breaker.state("a"), { _tag: "Closed", failures: 0 })
        yield* alice.callTool("a__echo", { text: "x" })
      }
    })
  )

  it.effect("an upstream's own answer is no failure: a tool error or invalid arguments keep it closed", () =>
    Effect.sync(() => {
      assert.isFalse(CircuitBreaker.isUpstreamFailure(new McpError.InvalidParams({ message: "bad" })))
      assert.isTrue(CircuitBreaker.isUpstreamFailure(new McpError.InternalError({ message: "down" })))
    })
  )
})

describe("Audit", () => {
  it.effect("one record per routed call, refusals included; a digest, never the arguments", () =>
    Effect.gen(function* () {
      const records: Array<Audit.Record> = []
      const { connect } = yield* gateway({
        policy: Policy.upstreamScopes({ b: ["admin"] }),
        limits: { tools: { a__echo: { rate: { capacity: 1, refillEvery: "1 minute" } } } },
        audit: { sink: (record) => Effect.sync(() => records.push(record)), digestKey: "audit key" }
      })
      const alice = yield* connect("alice")
      yield* alice.callTool("a__echo", { text: "hunter2" })
      yield* Effect.flip(alice.callTool("a__echo", { text: "hunter2" }))
      yield* Effect.flip(alice.callTool("b__echo", { text: "hunter2" }))
      yield* alice.getPrompt("a__greet")
      const digest = Audit.digest("audit key", { text: "hunter2" })
      assert.strictEqual(digest.length, 64)
      assert.deepStrictEqual(
        records.map(({ correlationId: _, ...r }) => r),
        [
          {
            principal: "alice",
            upstream: "a",
            method: "tools/call",
            target: "a__echo",
            argumentsDigest: digest,
            outcome: "success",
            errorCode: undefined,
            durationMs: 0
          },
          {
            principal: "alice",
            upstream: "a",
            method: "tools/call",
            target: "a__echo",
            argumentsDigest: digest,
            outcome: "error",
            errorCode: -32029,
            durationMs: 0
          },
          {
            principal: "alice",
            upstream: "b",
            method: "tools/call",
            target: "b__echo",
            argumentsDigest: digest,
            outcome: "error",
            errorCode: -32602,
            durationMs: 0
          },
          {
            principal: "alice",
            upstream: "a",
            method: "prompts/get",
            target: "a__greet",
            argumentsDigest: Audit.digest("audit key", {}),
            outcome: "success",
            errorCode: undefined,
            durationMs: 0
          }
        ]
      )
      assert.strictEqual(new Set(records.map((r) => r.correlationId)).size, 4)
      assert.notInclude(JSON.stringify(records), "hunter2")
    })
  )

  it.effect("traced: the audit span sits between the caller's call and the upstream's, in one trace", () => {
    const recorder = SpanRecorder.make()
    return Effect.gen(function* () {
      const records: Array<Audit.Record> = []
      const { connect } = yield* gateway({ audit: { sink: (record) => Effect.sync(() => records.push(record)) } })
      const alice = yield* connect("alice")
      yield* alice.callTool("a__echo", { text: "x" }).pipe(Effect.withSpan("caller"))
      const caller = recorder.named("caller")
      const audit = recorder.named("gateway tools/call a__echo")
      // The gateway's call to the upstream is named with the upstream's name for the tool.
      const upstreamCall = recorder.named("tools/call echo", "client")
      const upstreamServed = recorder.named("tools/call echo", "server")
      assert.strictEqual(SpanRecorder.parentOf(upstreamCall)?.spanId, audit.spanId)
      assert.strictEqual(SpanRecorder.parentOf(upstreamServed)?.spanId, upstreamCall.spanId)
      for (const span of [audit, upstreamCall, upstreamServed]) assert.strictEqual(span.traceId, caller.traceId)
      assert.strictEqual(records[0]?.correlationId, caller.traceId)
      assert.strictEqual(audit.attributes.get("mcp.gateway.upstream"), "a")
      assert.strictEqual(audit.attributes.get("mcp.gateway.principal"), "alice")
      assert.strictEqual(audit.attributes.get("mcp.gateway.arguments_digest"), records[0]?.argumentsDigest)
    }).pipe(Effect.withTracer(recorder.tracer))
  })

  /** The digest of `{ text: "hunter2" }` in the record of a call through a gateway with `options`. */
  const digestThrough = (options: Omit<Audit.Options, "sink"> = {}) =>
    Effect.gen(function* () {
      const records: Array<Audit.Record> = []
      const { connect } = yield* gateway({
        audit: { ...options, sink: (record) => Effect.sync(() => records.push(record)) }
      })
      yield* (yield* connect("alice")).callTool("a__echo", { text: "hunter2" })
      assert.strictEqual(records.length, 1)
      return records[0]?.argumentsDigest
    })

  it.effect("equal arguments digest equally under one key, whatever the order of their keys", () =>
    Effect.gen(function* () {
      const auditor = yield* Audit.make()
      const one = { account: "NO93 8601 1117 947", approve: true, lines: [{ sku: "a", qty: 1 }] }
      const same = { lines: [{ qty: 1, sku: "a" }], approve: true, account: "NO93 8601 1117 947" }
      assert.strictEqual(auditor.digest(one), auditor.digest(same))
      assert.notStrictEqual(auditor.digest(one), auditor.digest({ ...one, approve: false }))
      assert.strictEqual(Audit.digest("k", one), Audit.digest(new TextEncoder().encode("k"), same))
      // A gateway's calls with equal arguments give equal digests (its one key, made once).
      const records: Array<Audit.Record> = []
      const { connect } = yield* gateway({ audit: { sink: (record) => Effect.sync(() => records.push(record)) } })
      const alice = yield* connect("alice")
      yield* alice.callTool("a__echo", { text: "hunter2" })
      yield* alice.callTool("a__echo", { text: "hunter2" })
      yield* alice.callTool("a__echo", { text: "hunter3" })
      const [first, second, third] = records.map((r) => r.argumentsDigest)
      assert.strictEqual(first, second)
      assert.notStrictEqual(first, third)
    })
  )

  it.effect(
    "the digest is keyed: not the plain SHA-256 of the arguments, which anyone could confirm a guess with",
    () =>
      Effect.gen(function* () {
        const plain = createHash("sha256")
          .update(Audit.canonicalJson({ text: "hunter2" }))
          .digest("hex")
        for (const digest of [yield* digestThrough(), yield* digestThrough({ digestKey: "audit key" })]) {
          assert.strictEqual(digest?.length, 64)
          assert.notStrictEqual(digest, plain)
        }
      })
  )

  it.effect("gateways given one key digest alike (HMAC-SHA256); other keys and default keys differ", () =>
    Effect.gen(function* () {
      const shared = yield* digestThrough({ digestKey: "shared secret" })
      // The standard HMAC-SHA256: an audit store can check it with any implementation holding the key.
      const expected = createHmac("sha256", "shared secret")
        .update(Audit.canonicalJson({ text: "hunter2" }))
        .digest("hex")
      assert.strictEqual(shared, expected)
      assert.strictEqual(yield* digestThrough({ digestKey: new TextEncoder().encode("shared secret") }), shared)
      assert.notStrictEqual(yield* digestThrough({ digestKey: "another secret" }), shared)
      // Without a key each gateway makes its own: two of them never digest alike.
      const defaulted = yield* digestThrough()
      assert.notStrictEqual(defaulted, shared)
      assert.notStrictEqual(yield* digestThrough(), defaulted)
    })
  )
})

describe("cache", () => {
  it.effect("reads are kept as the upstream's hints say: public for all, private per principal, for ttlMs", () =>
    Effect.gen(function* () {
      const { connect, shared } = yield* gateway({ cache: true })
      const alice = yield* connect("alice")
      const bob = yield* connect("bob")
      const read = (client: typeof alice, uri: string) =>
        Effect.map(client.readResource(uri), (r) => (r.contents[0] as { readonly text: string }).text)
      assert.strictEqual(yield* read(alice, "a://public"), "a://public #1")
      assert.strictEqual(yield* read(bob, "a://public"), "a://public #1")
      assert.strictEqual(yield* read(alice, "a://private"), "a://private #1")
      assert.strictEqual(yield* read(alice, "a://private"), "a://private #1")
      // Bob's private read is his own.
      assert.strictEqual(yield* read(bob, "a://private"), "a://private #2")
      assert.deepStrictEqual(shared.reads, { "a://public": 1, "a://private": 2 })
      yield* TestClock.adjust("60 seconds")
      assert.strictEqual(yield* read(bob, "a://public"), "a://public #2")
      // Without the option, every read goes upstream.
      const uncached = yield* gateway()
      const carol = yield* uncached.connect("carol")
      yield* read(carol, "b://public")
      assert.strictEqual(yield* read(carol, "b://public"), "b://public #2")
    })
  )

  it.effect(
    "a read's answer carries the upstream's hints: what is left of them from the cache, private under a policy",
    () =>
      Effect.gen(function* () {
        const cached = yield* gateway({ cache: true })
        const alice = yield* cached.connect("alice", [], {}, "2026-07-28")
        assert.deepStrictEqual(hintsOf(yield* alice.readResource("a://public")), [60_000, "public"])
        assert.deepStrictEqual(hintsOf(yield* alice.readResource("a://private")), [60_000, "private"])
        yield* TestClock.adjust("20 seconds")
        // Served from the gateway's cache: the time the upstream's answer has left, not the whole ttl again.
        assert.deepStrictEqual(hintsOf(yield* alice.readResource("a://public")), [40_000, "public"])
        assert.deepStrictEqual(hintsOf(yield* alice.readResource("a://private")), [40_000, "private"])
        assert.deepStrictEqual(cached.shared.reads, { "a://public": 1, "a://private": 1 })
        // Lists are the gateway's own (the server's default hints).
        assert.deepStrictEqual(hintsOf(yield* alice.listTools()), [0, "private"])

        // The gateway's own read hints bound the upstream's; a policy makes every answer private.
        const bounded = yield* gateway({
          server: { name: "gateway", version: "1.0.0", cache: { read: { ttlMs: 5_000, cacheScope: "public" } } }
        })
        const bob = yield* bounded.connect("bob", [], {}, "2026-07-28")
        assert.deepStrictEqual(hintsOf(yield* bob.readResource("b://public")), [5_000, "public"])
        const governed = yield* gateway({
          policy: Policy.allowAll,
          server: { name: "gateway", version: "1.0.0", cache: { list: { ttlMs: 5_000, cacheScope: "public" } } }
        })
        const carol = yield* governed.connect("carol", [], {}, "2026-07-28")
        assert.deepStrictEqual(hintsOf(yield* carol.readResource("b://public")), [60_000, "private"])
        // The upstreams' own list hints (their servers' default: 0, private) bound the gateway's 5 seconds.
        assert.deepStrictEqual(hintsOf(yield* carol.listTools()), [0, "private"])
      })
  )

  it.effect(
    "a list carries the tightest of the upstreams' list hints: what is left of the shortest, private if any",
    () =>
      Effect.gen(function* () {
        const own = {
          name: "gateway",
          version: "1.0.0",
          cache: { list: { ttlMs: 60_000, cacheScope: "public" } }
        } as const
        const open = yield* gateway(
          { server: own },
          { a: { ttlMs: 30_000, cacheScope: "public" }, b: { ttlMs: 45_000, cacheScope: "public" } }
        )
        const alice = yield* open.connect("alice", [], {}, "2026-07-28")
        assert.deepStrictEqual(hintsOf(yield* alice.listTools()), [30_000, "public"])
        assert.deepStrictEqual(hintsOf(yield* alice.listPrompts()), [30_000, "public"])
        assert.deepStrictEqual(hintsOf(yield* alice.listResources()), [30_000, "public"])
        // The host listed them 10 seconds ago: what is left, never the whole ttl again; none once it ran out.
        yield* TestClock.adjust("10 seconds")
        assert.deepStrictEqual(hintsOf(yield* alice.listTools()), [20_000, "public"])
        yield* TestClock.adjust("30 seconds")
        assert.deepStrictEqual(hintsOf(yield* alice.listTools()), [0, "public"])
        // One upstream's lists are private: so are the gateway's. Its own shorter ttl wins over theirs.
        const closed = yield* gateway(
          { server: { ...own, cache: { list: { ttlMs: 1_000, cacheScope: "public" } } } },
          { a: { ttlMs: 30_000, cacheScope: "public" }, b: { ttlMs: 45_000, cacheScope: "private" } }
        )
        const bob = yield* closed.connect("bob", [], {}, "2026-07-28")
        assert.deepStrictEqual(hintsOf(yield* bob.listTools()), [1_000, "private"])
        assert.deepStrictEqual(hintsOf(yield* bob.listResourceTemplates()), [1_000, "private"])
      })
  )
})
