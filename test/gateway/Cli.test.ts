/**
 * `effect-mcp gateway` as a real process: a config file naming our
 * everything server over stdio, served unprefixed over Streamable HTTP (port
 * 0, the URL read from its stderr) and over stdio, with the official SDK 1.x
 * client downstream; a config file that does not fit ends it before anything
 * listens; and the configuration docs/gateway.md shows runs as written and
 * lists the names it says.
 */
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import { runCli } from "../cli/runCli.ts"
import { blocksOf } from "../docs/markdown.ts"
import * as ServerProcess from "../support/ServerProcess.ts"
import { cliBin, configFile, everythingStdio, spawnGateway, toolNames } from "./fixture.ts"

// biome-ignore lint/suspicious/noExplicitAny: results are read by path; the assertions are the type check
type Json = any

const everything = { mcpServers: { everything: everythingStdio } }

const connect = (client: Client, transport: StdioClientTransport | StreamableHTTPClientTransport) =>
  Effect.acquireRelease(
    Effect.as(
      Effect.promise(() => client.connect(transport)),
      client
    ),
    () => Effect.promise(() => client.close().catch(() => undefined))
  )

/** What every served gateway must do: the upstream's names kept (it is unprefixed), a call routed. */
const checkServed = (client: Client) =>
  Effect.gen(function* () {
    const tools = yield* toolNames(client)
    assert.include(tools, "test_simple_text")
    assert.notInclude(tools, "everything__test_simple_text")
    const result: Json = yield* Effect.promise(() => client.callTool({ name: "greet", arguments: { name: "Ada" } }))
    assert.deepStrictEqual(result.content, [{ type: "text", text: "Hello, Ada!" }])
  })

describe("effect-mcp gateway", () => {
  it.live(
    "serves a config's server over Streamable HTTP and over stdio, its names kept with --unprefixed",
    () =>
      Effect.gen(function* () {
        const file = yield* configFile(everything)
        const args = ["gateway", "--config", file, "--unprefixed", "everything"]
        const http = Effect.gen(function* () {
          const { url } = yield* spawnGateway(file, ["--unprefixed", "everything"])
          yield* checkServed(
            yield* connect(
              new Client({ name: "sdk", version: "1.0.0" }),
              new StreamableHTTPClientTransport(new URL(url))
            )
          )
        })
        const stdio = Effect.gen(function* () {
          const transport = new StdioClientTransport({
            command: ServerProcess.node,
            args: [...ServerProcess.sourceConditions, cliBin, ...args, "--stdio"],
            cwd: ServerProcess.root,
            stderr: "ignore"
          })
          yield* checkServed(yield* connect(new Client({ name: "sdk", version: "1.0.0" }), transport))
        })
        yield* Effect.all([http, stdio], { concurrency: "unbounded", discard: true })
      }).pipe(Effect.scoped),
    90_000
  )

  it.live(
    "the configuration of docs/gateway.md runs as written and lists the names the page shows",
    () =>
      Effect.gen(function* () {
        const blocks = blocksOf("docs/gateway.md")
        const at = blocks.findIndex((b) => b.lang === "json" && b.code.includes('"gateway"'))
        const names = blocks
          .slice(at)
          .find((b) => b.lang === "text")!
          .code.trim()
          .split("\n")
        // As written, the page's remote upstream (the everything server) and the gateway (port 3000, its default)
        // must not share a port.
        const page = /http:\/\/127\.0\.0\.1:(\d+)/.exec(blocks[at]!.code)!
        assert.notStrictEqual(page[1], "3000", "the page's everything server takes the gateway's default port")
        // Here, one on a port of its own.
        const remote = yield* ServerProcess.spawnHttp()
        const file = yield* configFile(JSON.parse(blocks[at]!.code.replaceAll(page[0], remote.base)))
        const { url } = yield* spawnGateway(file, [], { ...process.env, REMOTE_TOKEN: "s3cret" })
        const client = yield* connect(
          new Client({ name: "sdk", version: "1.0.0" }),
          new StreamableHTTPClientTransport(new URL(url))
        )
        const tools = yield* toolNames(client)
        assert.isAtLeast(names.length, 3)
        for (const name of names) assert.include(tools, name)
      }).pipe(Effect.scoped),
    90_000
  )

  it.live("a config whose gateway section names no server ends it with exit code 3", () =>
    Effect.gen(function* () {
      const file = yield* configFile({ ...everything, gateway: { unprefixed: "nowhere" } })
      const ran = yield* runCli(["gateway", "--config", file, "--port", "0"])
      assert.strictEqual(ran.code, 3)
      assert.match(ran.stderr, /gateway\.unprefixed names no server: "nowhere"/)
    }).pipe(Effect.scoped)
  )

  it.live(
    "a credential of a stdio server, or a gateway section that does not fit, ends it with exit code 3 and why",
    () =>
      Effect.gen(function* () {
        // A gateway that starts instead of refusing its file is killed within the test's time (its code then null).
        const credential = yield* configFile({ ...everything, gateway: { credentials: { everything: { env: "X" } } } })
        const refused = yield* runCli(["gateway", "--config", credential, "--port", "0"], { timeoutMs: 15_000 })
        assert.strictEqual(refused.code, 3)
        assert.match(refused.stderr, /gateway\.credentials\.everything: "everything" is a stdio server/)
        assert.notInclude(refused.stderr, "listening")
        const unfit = yield* configFile({ ...everything, gateway: { startTimeoutSeconds: -1 } })
        const ran = yield* runCli(["gateway", "--config", unfit, "--port", "0"], { timeoutMs: 15_000 })
        assert.strictEqual(ran.code, 3)
        assert.match(ran.stderr, /gateway\.startTimeoutSeconds: Expected a value greater than 0, got -1/)
      }).pipe(Effect.scoped)
  )
})
