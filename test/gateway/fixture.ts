/**
 * A gateway over real upstreams, served over Streamable HTTP on 127.0.0.1,
 * for the gateway tests: our everything server over stdio (`effect`, its
 * stderr kept: `test_long_running` reports its cancellation there), the
 * reference `@modelcontextprotocol/server-everything` over stdio
 * (`reference`), our everything server over Streamable HTTP (`remote`, a
 * child process) and over legacy HTTP+SSE (`legacy`, the same child), and an official SDK 1.x server in this process (`wire`)
 * that records the headers of every request it receives. `remote` and `wire`
 * each get their own credential; everything is stopped with the scope.
 */
import { assert } from "@effect/vitest"
import type * as Http from "node:http"
import * as fs from "node:fs/promises"
import { createServer } from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import * as Credentials from "@effect-mcp/gateway/Credentials"
import * as Gateway from "@effect-mcp/gateway/Gateway"
import * as NodeConnector from "@effect-mcp/host/NodeConnector"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { McpServer as SdkServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as ServerProcess from "../support/ServerProcess.ts"
import { streamableHttp } from "../support/SdkHttpServer.ts"

/** The reference server's entry point, from node_modules. */
/** A JSON-RPC result read by path (the assertions are the type check). */
// biome-ignore lint/suspicious/noExplicitAny: results are read by path; the assertions are the type check
export type Json = any

/** The text blocks of a tool result, joined. */
export const textOf = (result: Json): string =>
  (result.content as ReadonlyArray<Json>)
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("")

/**
 * Calls the everything server's `test_tool_with_progress` (named `name` through the gateway) with the SDK
 * client's progress handler, and checks its text and the progress heard: 0, 50, 100 in order. The SDK drops its
 * progress handler as it reads the response, so the last update may be lost with it.
 */
export const callWithProgress = (client: Client, name: string) =>
  Effect.gen(function* () {
    const progress: Array<number> = []
    const result = yield* Effect.promise(() =>
      client.callTool({ name, arguments: {} }, undefined, { onprogress: (update) => progress.push(update.progress) })
    )
    assert.strictEqual(textOf(result), "Tool with progress executed successfully")
    assert.deepStrictEqual(progress, [0, 50, 100].slice(0, Math.max(2, progress.length)))
  })

export const referenceBin = path.join(
  ServerProcess.root,
  "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)

/** Our everything server over stdio, from its sources, as an `mcpServers` entry. */
export const everythingStdio = {
  command: ServerProcess.node,
  args: [...ServerProcess.sourceConditions, ServerProcess.everythingBin, "--stdio"],
  cwd: ServerProcess.root
}

/** `effect-mcp`'s entry point (built JavaScript), for the gateway run as a process. */
export const cliBin = path.join(ServerProcess.root, "apps/cli/bin/effect-mcp.js")

/** A gateway config file holding `content`, in a temporary directory of the test's scope. */
export const configFile = (content: unknown): Effect.Effect<string, never, Scope.Scope> =>
  Effect.gen(function* () {
    const dir = yield* Effect.acquireRelease(
      Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "mcp-gateway-"))),
      (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
    )
    const file = path.join(dir, "mcp.json")
    yield* Effect.promise(() => fs.writeFile(file, JSON.stringify(content)))
    return file
  })

/**
 * `effect-mcp gateway --config file --port 0 ...flags` in the test's scope, once it listens: the process and
 * its Streamable HTTP endpoint (read from its stderr).
 */
export const spawnGateway = (
  file: string,
  flags: ReadonlyArray<string> = [],
  env?: NodeJS.ProcessEnv
): Effect.Effect<
  { readonly gateway: ServerProcess.Child; readonly url: string },
  ServerProcess.ProcessError,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const gateway = yield* ServerProcess.spawnChild(
      ServerProcess.node,
      [cliBin, "gateway", "--config", file, "--port", "0", ...flags],
      env === undefined ? {} : { env }
    )
    const [, url] = yield* gateway.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/)
    return { gateway, url: url! }
  })

/** The secrets: each upstream's own, and the one a downstream client sends the gateway. */
export const secrets = {
  wire: "wire-upstream-secret",
  remote: "remote-upstream-secret",
  downstream: "downstream-client-secret"
} as const

export interface Fixture {
  /** The gateway's Streamable HTTP endpoint. */
  readonly url: string
  /** The stdio everything server's stderr. */
  readonly effectStderr: ServerProcess.Recorder
  /** The HTTP everything server's stderr. */
  readonly remoteStderr: ServerProcess.Watched
  /** The headers of every request `wire` received. */
  readonly wireHeaders: Array<Http.IncomingHttpHeaders>
}

/** An HTTP server of `listener` on 127.0.0.1 (a free port) for the scope, and its `/mcp` URL. */
export const listenHttp = (listener: Http.RequestListener) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: Http.Server; readonly url: string }>((resume) => {
      const server = createServer(listener)
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        resume(Effect.succeed({ server, url: `http://127.0.0.1:${port}/mcp` }))
      })
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

/** The in-process SDK server `wire`: a `whoami` tool, and every request's headers kept. */
const wireServer = (headers: Array<Http.IncomingHttpHeaders>) => {
  const serve = streamableHttp(() => {
    const server = new SdkServer({ name: "wire", version: "1.0.0" })
    server.registerTool("whoami", { description: "Says hello" }, async () => ({
      content: [{ type: "text", text: "hello from wire" }]
    }))
    return server
  })
  return listenHttp((request, response) => {
    headers.push(request.headers)
    void serve(request, response)
  })
}

/** Every tool's name, page after page (a gateway of several servers lists more than a page). */
export const toolNames = (client: Client) =>
  Effect.promise(async () => {
    const names: Array<string> = []
    let cursor: string | undefined
    do {
      const page = await client.listTools(cursor === undefined ? undefined : { cursor })
      names.push(...page.tools.map((t) => t.name))
      cursor = page.nextCursor
    } while (cursor !== undefined)
    return names
  })

/** Starts the upstreams (side by side) and the gateway in front of them, for the scope. */
export const make = (
  options: { readonly unprefixed?: string } = {}
): Effect.Effect<Fixture, ServerProcess.ProcessError, Scope.Scope> =>
  Effect.gen(function* () {
    const wireHeaders: Array<Http.IncomingHttpHeaders> = []
    const [remote, wire] = yield* Effect.all([ServerProcess.spawnHttp(), wireServer(wireHeaders)], {
      concurrency: "unbounded"
    })
    const effectStderr = ServerProcess.makeRecorder()
    const decoder = new TextDecoder()
    const connector = NodeConnector.layer({
      stderr: (name) =>
        name === "effect"
          ? (chunk: Uint8Array) => Effect.sync(() => effectStderr.append(decoder.decode(chunk, { stream: true })))
          : "capture"
    })
    const gateway = Gateway.layer({
      server: { name: "gateway", version: "1.0.0" },
      config: {
        mcpServers: {
          effect: everythingStdio,
          reference: { command: ServerProcess.node, args: [referenceBin, "stdio"] },
          remote: { type: "http", url: remote.url },
          // The same child, over its legacy HTTP+SSE endpoints.
          legacy: { type: "sse", url: `${remote.base}/sse` },
          wire: { type: "http", url: wire.url, headers: { authorization: "Bearer overridden-by-the-credential" } }
        }
      },
      ...(options.unprefixed === undefined ? {} : { unprefixed: options.unprefixed }),
      credentials: {
        remote: Credentials.bearer(secrets.remote),
        wire: Credentials.fromEnv("GATEWAY_WIRE_TOKEN")
      },
      healthCheck: false,
      startTimeout: "60 seconds"
    }).pipe(
      Layer.provide(connector),
      // The wire credential's variable, as the environment would hold it.
      Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: { GATEWAY_WIRE_TOKEN: secrets.wire } })))
    )
    // Listening on 127.0.0.1 port 0 cannot fail but for a broken machine.
    const context = yield* Layer.build(NodeMcpServer.layerHttp(gateway)).pipe(Effect.orDie)
    const base = yield* NodeMcpServer.url.pipe(Effect.provideContext(context))
    return { url: `${base}/mcp`, effectStderr, remoteStderr: remote.stderr, wireHeaders }
  })
