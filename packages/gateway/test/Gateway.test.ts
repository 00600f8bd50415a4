/**
 * The gateway in memory: two upstream servers ("a" and "b") reached through
 * a connector of memory pairs, the gateway served to clients made by
 * `McpTest`, everything on the TestClock. What real processes and the
 * official SDKs check in test/gateway is checked here at the edges: the
 * naming policy, the attribution of asks when several clients wait, the
 * credentials on the connection and the configuration file's section.
 */
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as RootsHandler from "@effect-mcp/client/RootsHandler"
import type * as Connector from "@effect-mcp/host/Connector"
import type * as McpConfig from "@effect-mcp/host/McpConfig"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Elicitation from "@effect-mcp/server/Elicitation"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Roots from "@effect-mcp/server/Roots"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import type * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Credentials from "../src/Credentials.ts"
import * as Gateway from "../src/Gateway.ts"
import * as GatewayConfig from "../src/GatewayConfig.ts"
import { memory } from "./memoryConnector.ts"

/**
 * An upstream: `echo` (says who answers), `ask` (an elicitation), `roots` (the caller's roots), `hold` (says it
 * started on `holding`, then runs until `release` is done).
 */
const upstream = (name: string, release: Deferred.Deferred<void>, holding: Queue.Queue<string>) =>
  Tool.layer(
    Tool.make("echo", {
      input: Schema.Struct({ text: Schema.String }),
      handler: ({ text }) => Effect.succeed(`${name}: ${text}`)
    }),
    Tool.make("ask", {
      input: Schema.Struct({}),
      handler: () =>
        Elicitation.form({ message: `${name} asks`, schema: Schema.Struct({ who: Schema.String }) }).pipe(
          Effect.map((answer) => (Elicitation.isAccepted(answer) ? answer.content.who : answer.action))
        )
    }),
    Tool.make("roots", {
      input: Schema.Struct({}),
      handler: () => Effect.map(Roots.list, (roots) => roots.map((r) => r.uri).join(","))
    }),
    Tool.make("hold", {
      input: Schema.Struct({}),
      handler: () => Effect.andThen(Queue.offer(holding, name), Effect.as(Deferred.await(release), "released"))
    })
  ).pipe(Layer.provideMerge(McpServer.layer({ name, version: "1.0.0" })))

const config: McpConfig.Config = { mcpServers: { a: { command: "a" }, b: { command: "b" } } }

/** The gateway over "a" and "b", with `options`; returns its server's services and the release of `hold`. */
const gateway = (options: Partial<Gateway.Options> = {}) =>
  Effect.gen(function* () {
    const release = yield* Deferred.make<void>()
    const holding = yield* Queue.unbounded<string>()
    const a = yield* Layer.build(upstream("a", release, holding))
    const b = yield* Layer.build(upstream("b", release, holding))
    const context = yield* Layer.build(
      Gateway.layer({ server: { name: "gateway", version: "1.0.0" }, config, healthCheck: false, ...options }).pipe(
        Layer.provide(memory({ a, b }))
      )
    )
    return { context, release, holding }
  })

/** A client of the gateway on 2025-11-25 that answers elicitations with `who`, and records them. */
const client = (context: Context.Context<McpServer.McpServer>, who: string) =>
  Effect.gen(function* () {
    const asked: Array<string> = []
    const made = yield* McpTest.makeClient({
      revision: "2025-11-25",
      clientHandlers: Layer.merge(
        ElicitationHandler.layer({
          form: (params) =>
            Effect.sync(() => {
              asked.push(params.message)
              return { action: "accept" as const, content: { who } }
            })
        }),
        RootsHandler.layerFrom({ list: Effect.succeed([{ uri: `file:///${who}` }]) })
      )
    }).pipe(Effect.provideContext(context))
    return { client: made, asked }
  })

const textOf = (result: Tools.CallToolResult) =>
  result.content.map((block) => (block.type === "text" ? block.text : "")).join("")

describe("Gateway", () => {
  it("with an unprefixed upstream, the others' prefixes are unique over every configured upstream, as the host's", () => {
    const format = Gateway.namingOf(undefined, "a", ["a", "svc one", "svc_one"])!.format!
    assert.strictEqual(format("a", "echo"), "echo")
    assert.strictEqual(format("svc_one", "echo"), "svc_one__echo")
    assert.strictEqual(format("svc one", "echo"), "svc_one_2__echo")
  })

  it.effect("names every upstream's tools with its prefix, and keeps the unprefixed one's names", () =>
    Effect.gen(function* () {
      const prefixed = yield* gateway()
      const { client: c1 } = yield* client(prefixed.context, "ada")
      const names = (yield* Stream.runCollect(c1.tools)).map((t) => t.name).sort()
      assert.deepStrictEqual(names, [
        "a__ask",
        "a__echo",
        "a__hold",
        "a__roots",
        "b__ask",
        "b__echo",
        "b__hold",
        "b__roots"
      ])
      assert.strictEqual(textOf(yield* c1.callTool("b__echo", { text: "hi" })), "b: hi")

      const unprefixed = yield* gateway({ unprefixed: "a" })
      const { client: c2 } = yield* client(unprefixed.context, "ada")
      const kept = (yield* Stream.runCollect(c2.tools)).map((t) => t.name).sort()
      assert.deepStrictEqual(kept, ["ask", "b__ask", "b__echo", "b__hold", "b__roots", "echo", "hold", "roots"])
      assert.strictEqual(textOf(yield* c2.callTool("echo", { text: "hi" })), "a: hi")
    })
  )

  it.effect("an upstream's ask goes to the one client waiting on it (roots too); with two waiting, it is refused", () =>
    Effect.gen(function* () {
      const { context, release, holding } = yield* gateway()
      const ada = yield* client(context, "ada")
      const bob = yield* client(context, "bob")
      // Bob waits on b: a's ask is Ada's.
      const holdingB = yield* Effect.forkChild(bob.client.callTool("b__hold", {}))
      // The upstream runs it: the gateway counts Bob among b's callers from before it sent the call.
      assert.strictEqual(yield* Queue.take(holding), "b")
      assert.strictEqual(textOf(yield* ada.client.callTool("a__ask", {})), "ada")
      assert.deepStrictEqual([ada.asked, bob.asked], [["a asks"], []])
      // Bob waits on a as well: whose is a's ask now? Nobody is asked.
      const holdingA = yield* Effect.forkChild(bob.client.callTool("a__hold", {}))
      assert.strictEqual(yield* Queue.take(holding), "a")
      // The refusal reaches the upstream as an error, which its tool passes on as its own.
      const refused = yield* Effect.flip(ada.client.callTool("a__ask", {}))
      assert.match(refused.message, /2 downstream clients have calls in flight on "a"/)
      assert.deepStrictEqual([ada.asked, bob.asked], [["a asks"], []])
      yield* Deferred.succeed(release, undefined)
      assert.strictEqual(textOf(yield* Fiber.join(holdingA)), "released")
      assert.strictEqual(textOf(yield* Fiber.join(holdingB)), "released")
      // Roots are asked of the client whose call the asking upstream serves, though another waits elsewhere.
      const holdingAgain = yield* Effect.forkChild(bob.client.callTool("b__hold", {}))
      assert.strictEqual(yield* Queue.take(holding), "b")
      assert.strictEqual(textOf(yield* ada.client.callTool("a__roots", {})), "file:///ada")
      yield* Deferred.succeed(release, undefined)
      assert.strictEqual(textOf(yield* Fiber.join(holdingAgain)), "released")
      // Nobody waits now: b's ask is Bob's, whose call it serves.
      assert.strictEqual(textOf(yield* bob.client.callTool("b__ask", {})), "bob")
      assert.deepStrictEqual([ada.asked, bob.asked], [["a asks"], ["b asks"]])
    })
  )
})

describe("Credentials", () => {
  const remote: McpConfig.RemoteServer = {
    type: "http",
    url: "https://up.example.com/mcp",
    headers: { Authorization: "Bearer configured", "x-trace": "1" }
  }
  /** What the connector below was asked to connect to. */
  const seen = (credentials: Credentials.ByServer, server: McpConfig.ServerConfig = remote) => {
    const asked: Array<McpConfig.ServerConfig> = []
    const below: Connector.Connect = (_, s) =>
      Effect.sync(() => {
        asked.push(s)
        return { transport: undefined as never }
      })
    return Effect.map(Effect.scoped(Effect.result(Credentials.wrap(credentials, below)("up", server))), (result) => ({
      result,
      asked
    }))
  }

  it.effect("a credential replaces the configured header of the same name; others are kept", () =>
    Effect.gen(function* () {
      const { asked } = yield* seen({ up: Credentials.bearer("t0ken") })
      assert.deepStrictEqual((asked[0] as McpConfig.RemoteServer).headers, {
        "x-trace": "1",
        authorization: "Bearer t0ken"
      })
    })
  )

  it.effect("a secret from the environment is read on each connection; a missing one is named, not shown", () =>
    Effect.gen(function* () {
      const credential = { up: Credentials.fromEnv("UP_TOKEN", { header: "x-api-key", scheme: null }) }
      const withEnv = yield* seen(credential).pipe(
        Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: { UP_TOKEN: "from-env" } })))
      )
      assert.strictEqual((withEnv.asked[0] as McpConfig.RemoteServer).headers?.["x-api-key"], "from-env")
      const without = yield* seen(credential).pipe(
        Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: {} })))
      )
      assert.deepStrictEqual(without.asked, [])
      assert.strictEqual(without.result._tag, "Failure")
      if (without.result._tag === "Failure") {
        assert.strictEqual(without.result.failure.message, "the credential variable UP_TOKEN is not set")
      }
    })
  )

  it.effect("a stdio upstream takes no credential", () =>
    Effect.gen(function* () {
      const { result, asked } = yield* seen({ up: Credentials.bearer("t0ken") }, { command: "up" })
      assert.deepStrictEqual(asked, [])
      assert.strictEqual(result._tag, "Failure")
    })
  )
})

describe("TokenExchange", () => {
  it.effect("a call of an upstream acting for its caller, without a verified token to exchange, is refused", () =>
    Effect.gen(function* () {
      const { context } = yield* gateway({
        config: { mcpServers: { a: { type: "http", url: "http://a.example/mcp" }, b: { command: "b" } } },
        tokenExchange: { a: { clientId: "gateway", clientSecret: "s3cret" } }
      })
      const { client: c } = yield* client(context, "ada")
      const refused = (yield* Effect.flip(c.callTool("a__echo", { text: "hi" }))) as {
        readonly code: number
        readonly message: string
      }
      assert.deepStrictEqual(
        [refused.code, refused.message],
        [-32600, '"a" acts for its caller: the request carries no verified token to exchange']
      )
      // Upstreams without an exchange are called as ever.
      assert.strictEqual(textOf(yield* c.callTool("b__echo", { text: "hi" })), "b: hi")
    })
  )
})

describe("GatewayConfig", () => {
  const servers = { mcpServers: { files: { command: "files" }, search: { url: "https://search.example.com/mcp" } } }

  it.effect("reads the gateway section: naming, the unprefixed upstream, credentials", () =>
    Effect.gen(function* () {
      const file = yield* GatewayConfig.decode({
        ...servers,
        gateway: {
          naming: { strategy: "onClash" },
          unprefixed: "files",
          credentials: { search: { env: "SEARCH_TOKEN" } }
        }
      })
      assert.deepStrictEqual(file.naming, { strategy: "onClash" })
      assert.strictEqual(file.unprefixed, "files")
      assert.deepStrictEqual(file.credentials, { search: Credentials.fromEnv("SEARCH_TOKEN") })
      const bare = yield* GatewayConfig.decode(servers)
      assert.deepStrictEqual([bare.naming, bare.unprefixed, bare.credentials], [undefined, undefined, {}])
      assert.deepStrictEqual([bare.startTimeout, bare.awaitUpstreams], [undefined, undefined])
      const timed = yield* GatewayConfig.decode({
        ...servers,
        gateway: { startTimeoutSeconds: 2.5, awaitUpstreamsSeconds: 0 }
      })
      assert.deepStrictEqual([timed.startTimeout, timed.awaitUpstreams], [Duration.millis(2500), Duration.zero])
      for (const [gateway, says] of [
        [{ startTimeoutSeconds: 0 }, "gateway.startTimeoutSeconds: Expected a value greater than 0, got 0"],
        [
          { awaitUpstreamsSeconds: -1 },
          "gateway.awaitUpstreamsSeconds: Expected a value greater than or equal to 0, got -1"
        ],
        [{ startTimeoutSeconds: "5" }, 'gateway.startTimeoutSeconds: Expected number | undefined, got "5"']
      ] as const) {
        const error = yield* Effect.flip(GatewayConfig.decode({ ...servers, gateway }))
        assert.strictEqual(error.message, says)
      }
    })
  )

  it.effect(
    "an `oauth` credential is the gateway's own client credentials at the upstream's authorization server",
    () =>
      Effect.gen(function* () {
        const file = yield* GatewayConfig.decode({
          ...servers,
          gateway: { credentials: { search: { oauth: { clientId: "gateway", clientSecretEnv: "SEARCH_SECRET" } } } }
        })
        assert.deepStrictEqual(
          [file.credentials.search?._tag, file.credentials.search?.header],
          ["Effect", "authorization"]
        )
        const message = yield* Effect.map(
          Effect.flip(GatewayConfig.decode({ ...servers, gateway: { credentials: { search: { oauth: {} } } } })),
          (error) => error.message
        )
        // Of the credential's kinds, the one the file meant.
        assert.strictEqual(message, "gateway.credentials.search.oauth.clientId: Missing key")
      })
  )

  it.effect("a section naming no server, or that does not fit, fails saying which field and why", () =>
    Effect.gen(function* () {
      const message = (input: unknown) =>
        Effect.map(Effect.flip(GatewayConfig.decode(input, "gw.json")), (error) => error.message)
      assert.strictEqual(
        yield* message({ ...servers, gateway: { unprefixed: "nope" } }),
        'gw.json: gateway.unprefixed names no server: "nope"'
      )
      assert.strictEqual(
        yield* message({ ...servers, gateway: { credentials: { nope: { env: "X" } } } }),
        'gw.json: gateway.credentials names no server: "nope"'
      )
      // Under `credentials` a value may be a secret: its type is said, not the value.
      assert.strictEqual(
        yield* message({ ...servers, gateway: { credentials: { search: { header: "x", value: 42 } } } }),
        "gw.json: gateway.credentials.search.value: Expected string, got a number"
      )
      assert.strictEqual(
        yield* message({ ...servers, gateway: { naming: { strategy: "sometimes" } } }),
        'gw.json: gateway.naming.strategy: Expected "always" | "onClash", got "sometimes"'
      )
      // A long value is cut.
      const long = yield* message({ ...servers, gateway: { unprefixed: ["x".repeat(200)] } })
      assert.match(long, /^gw\.json: gateway\.unprefixed: Expected string \| undefined, got \["x{58}\.\.\.$/)
      assert.strictEqual(
        yield* message({ ...servers, gateway: 5 }),
        "gw.json: the `gateway` section: Expected object, got 5"
      )
    })
  )

  it.effect("a credential of a stdio server is refused at load, naming the server", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        GatewayConfig.decode({ ...servers, gateway: { credentials: { files: { env: "X" } } } }, "gw.json")
      )
      assert.strictEqual(
        error.message,
        'gw.json: gateway.credentials.files: "files" is a stdio server: give it its secret in `env`, not as a credential'
      )
    })
  )
})
