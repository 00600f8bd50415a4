/**
 * The reference servers from npm as upstreams of a gateway:
 * `@modelcontextprotocol/server-filesystem` rooted in a temporary directory
 * the test makes (`files`) and `@modelcontextprotocol/server-memory` keeping
 * its graph in a file of another temporary directory (`memory`), both over
 * stdio, behind one gateway served over Streamable HTTP on 127.0.0.1, with
 * the official SDK 1.x client downstream. Each upstream's own listing (read
 * by an SDK client of its own, started beside the gateway) is what the
 * gateway lists, namespaced; neither server sends `list_changed`. One
 * gateway for the whole file.
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import * as Gateway from "@effect-mcp/gateway/Gateway"
import * as NodeConnector from "@effect-mcp/host/NodeConnector"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import { assert, describe, layer } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Tool } from "@modelcontextprotocol/sdk/types.js"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ServerProcess from "../support/ServerProcess.ts"
import { type Json, textOf, toolNames } from "./fixture.ts"

const filesystemBin = path.join(
  ServerProcess.root,
  "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
)
const memoryBin = path.join(ServerProcess.root, "node_modules/@modelcontextprotocol/server-memory/dist/index.js")

interface Fixture {
  /** The gateway's Streamable HTTP endpoint. */
  readonly url: string
  /** The directory the filesystem server is rooted in (its real path). */
  readonly root: string
  /** The memory server's graph file. */
  readonly memoryFile: string
  /** Each upstream's tools as it lists them itself, by upstream name. */
  readonly upstreamTools: { readonly files: ReadonlyArray<Tool>; readonly memory: ReadonlyArray<Tool> }
}

class Reference extends Context.Service<Reference, Fixture>()("test/gateway/Reference") {}

/** A temporary directory (its real path: the filesystem server resolves symlinks) removed with the scope. */
const tempDir = (prefix: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), prefix)))),
    (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
  )

/** An SDK 1.x client connected for the scope. */
const connected = (name: string, transport: StdioClientTransport | StreamableHTTPClientTransport) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name, version: "1.0.0" })
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close().catch(() => undefined))
  )

/** The upstream's own tools, listed by a client of its own over stdio (stopped with the scope). */
const listedDirectly = (command: string, args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.gen(function* () {
    const transport = new StdioClientTransport({ command, args: [...args], env, stderr: "pipe" })
    const client = yield* connected("direct", transport)
    return (yield* Effect.promise(() => client.listTools())).tools
  })

const make = Effect.gen(function* () {
  const root = yield* tempDir("mcp-gateway-files-")
  const memoryDir = yield* tempDir("mcp-gateway-memory-")
  const memoryFile = path.join(memoryDir, "memory.jsonl")
  yield* Effect.promise(() => fs.writeFile(path.join(root, "hello.txt"), "hello from the filesystem server\n"))
  const upstreams = {
    files: { command: ServerProcess.node, args: [filesystemBin, root] },
    memory: { command: ServerProcess.node, args: [memoryBin], env: { MEMORY_FILE_PATH: memoryFile } }
  }
  const gateway = Gateway.layer({
    server: { name: "gateway", version: "1.0.0" },
    config: { mcpServers: upstreams },
    healthCheck: false,
    startTimeout: "60 seconds"
  }).pipe(Layer.provide(NodeConnector.layer({ stderr: () => "capture" })))
  const [context, files, memory] = yield* Effect.all(
    [
      // Listening on 127.0.0.1 port 0 cannot fail but for a broken machine.
      Layer.build(NodeMcpServer.layerHttp(gateway)).pipe(Effect.orDie),
      // The direct listings use their own graph file: the gateway's upstream alone writes `memoryFile`.
      listedDirectly(ServerProcess.node, upstreams.files.args, {}),
      listedDirectly(ServerProcess.node, upstreams.memory.args, {
        MEMORY_FILE_PATH: path.join(memoryDir, "direct.jsonl")
      })
    ],
    { concurrency: "unbounded" }
  )
  const base = yield* NodeMcpServer.url.pipe(Effect.provideContext(context))
  return { url: `${base}/mcp`, root, memoryFile, upstreamTools: { files, memory } }
})

/** The SDK 1.x client of the gateway, for the scope; its tool list read once, so that it checks structured results. */
const downstream = Effect.gen(function* () {
  const { url } = yield* Reference
  const client = yield* connected("downstream", new StreamableHTTPClientTransport(new URL(url)))
  yield* toolNames(client)
  return client
})

/**
 * Tools in the order of their names (the catalog keeps its own order), without `execution` when it says
 * `taskSupport: "forbidden"`: the default an absent `execution` means, which the gateway does not repeat.
 */
const normalized = (tools: ReadonlyArray<Tool>): Array<Tool> =>
  [...tools]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map(({ execution, ...tool }) =>
      execution === undefined || execution.taskSupport === "forbidden" ? tool : { ...tool, execution }
    )

/** Every tool the gateway lists, page after page. */
const allTools = (client: Client) =>
  Effect.promise(async () => {
    const tools: Array<Tool> = []
    let cursor: string | undefined
    do {
      const page = await client.listTools(cursor === undefined ? undefined : { cursor })
      tools.push(...page.tools)
      cursor = page.nextCursor
    } while (cursor !== undefined)
    return tools
  })

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(async (): Promise<Json> => client.callTool({ name, arguments: args }))

describe("the reference servers from npm behind the gateway", () => {
  // Live services: real processes and sockets, waited for by event, each wait bounded.
  layer(Layer.effect(Reference, make), { excludeTestServices: true, timeout: 120_000 })((it) => {
    it.effect("lists each upstream's own tools, namespaced, with their schemas", () =>
      Effect.gen(function* () {
        const { upstreamTools } = yield* Reference
        const client = yield* downstream
        const listed = yield* allTools(client)
        assert.isTrue(
          listed.every((tool) => /^(files|memory)__/.test(tool.name)),
          "every tool carries its upstream's prefix"
        )
        for (const [upstream, tools] of Object.entries(upstreamTools)) {
          // Both servers list more than one tool: the comparison is not of two empty lists.
          assert.isAbove(tools.length, 5)
          const ours = listed.filter((tool) => tool.name.startsWith(`${upstream}__`))
          assert.deepStrictEqual(
            normalized(ours.map((tool) => ({ ...tool, name: tool.name.slice(upstream.length + 2) }))),
            normalized(tools),
            `${upstream}'s tools, as it lists them`
          )
        }
        assert.includeMembers(
          listed.map((tool) => tool.name),
          ["files__read_text_file", "files__write_file", "files__list_directory", "memory__create_entities"]
        )
      })
    )

    it.effect("the filesystem server lists, reads and writes in its root, and nowhere else", () =>
      Effect.gen(function* () {
        const { root } = yield* Reference
        const client = yield* downstream
        const listing = yield* call(client, "files__list_directory", { path: root })
        assert.strictEqual(textOf(listing), "[FILE] hello.txt")
        const read = yield* call(client, "files__read_text_file", { path: path.join(root, "hello.txt") })
        assert.strictEqual(read.structuredContent.content, "hello from the filesystem server\n")
        const target = path.join(root, "written.txt")
        const written = yield* call(client, "files__write_file", { path: target, content: "through the gateway" })
        assert.notStrictEqual(written.isError, true)
        // Written on disk by the upstream, and read back through the gateway.
        assert.strictEqual(yield* Effect.promise(() => fs.readFile(target, "utf8")), "through the gateway")
        const back = yield* call(client, "files__read_text_file", { path: target })
        assert.strictEqual(textOf(back), "through the gateway")
        // Outside its root the upstream refuses, and its tool error reaches the caller as it is.
        const outside = yield* call(client, "files__read_text_file", { path: path.join(path.dirname(root), "x.txt") })
        assert.strictEqual(outside.isError, true)
        assert.match(textOf(outside), /denied|outside allowed/i)
      })
    )

    it.effect("the memory server creates entities and reads them back", () =>
      Effect.gen(function* () {
        const { memoryFile } = yield* Reference
        const client = yield* downstream
        const entities = [
          { name: "Ada", entityType: "person", observations: ["wrote the first program"] },
          { name: "Engine", entityType: "machine", observations: ["analytical"] }
        ]
        const created = yield* call(client, "memory__create_entities", { entities })
        assert.deepStrictEqual(created.structuredContent.entities, entities)
        yield* call(client, "memory__create_relations", {
          relations: [{ from: "Ada", to: "Engine", relationType: "programmed" }]
        })
        const opened = yield* call(client, "memory__open_nodes", { names: ["Ada"] })
        assert.deepStrictEqual(opened.structuredContent.entities, [entities[0]])
        const graph = yield* call(client, "memory__read_graph", {})
        assert.deepStrictEqual(
          graph.structuredContent.entities.map((e: Json) => e.name),
          ["Ada", "Engine"]
        )
        assert.deepStrictEqual(graph.structuredContent.relations, [
          { from: "Ada", to: "Engine", relationType: "programmed" }
        ])
        // The upstream kept them where its environment (the entry's `env`) told it to.
        assert.include(yield* Effect.promise(() => fs.readFile(memoryFile, "utf8")), '"name":"Ada"')
      })
    )
  })
})
