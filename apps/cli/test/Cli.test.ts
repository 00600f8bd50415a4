import * as ClientError from "@effect-mcp/client/ClientError"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as PeerError from "@effect-mcp/engine/PeerError"
import * as Transport from "@effect-mcp/engine/Transport"
import * as McpError from "@effect-mcp/protocol/McpError"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as PlatformError from "effect/PlatformError"
import * as Cli from "../src/Cli.ts"
import * as ExitCode from "../src/ExitCode.ts"
import * as Render from "../src/Render.ts"
import * as Target from "../src/Target.ts"

describe("Cli.classify", () => {
  it.effect("a JSON-RPC error is a protocol error with its code; a lost connection or a timeout is code 5", () =>
    Effect.sync(() => {
      const unknown = Cli.classify(new McpError.InvalidParams({ message: "Unknown tool: x" }))
      assert.deepStrictEqual(
        [unknown.code, unknown.message],
        [ExitCode.Protocol, "server error -32602: Unknown tool: x"]
      )
      assert.strictEqual(
        Cli.classify(
          new PeerError.NotSupported({ method: "tools/list", reason: "CapabilityNotDeclared", detail: "no tools" })
        ).code,
        ExitCode.Protocol
      )
      assert.strictEqual(
        Cli.classify(new ClientError.InvalidResult({ method: "tools/call", reason: "Malformed", message: "bad" })).code,
        ExitCode.Protocol
      )
      for (const lost of [
        new PeerError.RequestTimeout({ method: "tools/call", requestId: 1, elapsedMs: 60_000, reason: "Idle" }),
        new PeerError.SessionClosed({ method: "tools/call", reason: "transport closed" }),
        new Transport.TransportError({ reason: "Io", message: "reset\nby peer" }),
        new StreamableHttpClient.SessionExpired({ sessionId: "abc" })
      ]) {
        const exit = Cli.classify(lost)
        assert.strictEqual(exit.code, ExitCode.Connection, exit.message)
        assert.notInclude(exit.message, "\n") // one line
      }
      const own = new ExitCode.Exit({ code: ExitCode.Usage, message: "x" })
      assert.strictEqual(Cli.classify(own), own)
    })
  )
})

const files = (contents: Record<string, string>) =>
  FileSystem.layerNoop({
    readFileString: (path) =>
      contents[path] === undefined
        ? Effect.fail(
            PlatformError.systemError({
              _tag: "NotFound",
              module: "FileSystem",
              method: "readFile",
              pathOrDescriptor: path
            })
          )
        : Effect.succeed(contents[path])
  })

describe("Target.resolve", () => {
  const base = { target: undefined, command: [], config: "mcp.json", sse: false } satisfies Target.Input

  it.effect("a command after --, a URL (Streamable HTTP, or --sse), a server of the config file", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* Target.resolve({ ...base, command: ["node", "server.js", "--stdio"] }), {
        name: "node",
        server: { command: "node", args: ["server.js", "--stdio"] }
      })
      assert.deepStrictEqual(yield* Target.resolve({ ...base, target: "https://mcp.example.com/mcp" }), {
        name: "https://mcp.example.com/mcp",
        server: { url: "https://mcp.example.com/mcp" }
      })
      assert.deepStrictEqual(
        (yield* Target.resolve({ ...base, target: "http://127.0.0.1:3000/sse", sse: true })).server,
        {
          type: "sse",
          url: "http://127.0.0.1:3000/sse"
        }
      )
      assert.deepStrictEqual((yield* Target.resolve({ ...base, target: "files" })).server, {
        command: "files-server",
        args: ["/tmp"]
      })
    }).pipe(
      Effect.provide(files({ "mcp.json": '{"mcpServers": {"files": {"command": "files-server", "args": ["/tmp"]}}}' }))
    )
  )

  it.effect("no target is a usage error; an unknown name or a bad config file is a target error", () =>
    Effect.gen(function* () {
      const none = yield* Effect.flip(Target.resolve(base))
      assert.strictEqual(none.code, ExitCode.Usage)
      const unknown = yield* Effect.flip(Target.resolve({ ...base, target: "search" }))
      assert.strictEqual(unknown.code, ExitCode.Target)
      assert.match(unknown.message, /no server "search" in mcp\.json \(it has files\)/)
      const missing = yield* Effect.flip(Target.resolve({ ...base, target: "files", config: "other.json" }))
      assert.strictEqual(missing.code, ExitCode.Target)
      assert.strictEqual(missing.message, "cannot read other.json: no such file")
      const invalid = yield* Effect.flip(Target.resolve({ ...base, target: "files", config: "bad.json" }))
      assert.strictEqual(invalid.code, ExitCode.Target)
      assert.match(invalid.message, /files/)
    }).pipe(
      Effect.provide(
        files({
          "mcp.json": '{"mcpServers": {"files": {"command": "files-server"}}}',
          "bad.json": '{"mcpServers": {"files": {"command": "x", "args": [1]}}}'
        })
      )
    )
  )
})

describe("Render", () => {
  it.effect("progress bars: a share of the total, or a count when there is none", () =>
    Effect.sync(() => {
      assert.strictEqual(Render.progressBar({ progress: 50, total: 100 }, 10), "[#####-----]  50% 50/100")
      assert.strictEqual(
        Render.progressBar({ progress: 100, total: 100, message: "done" }, 10),
        "[##########] 100% 100/100 done"
      )
      assert.strictEqual(Render.progressBar({ progress: 150, total: 100 }, 4), "[####] 100% 150/100")
      assert.strictEqual(Render.progressBar({ progress: 3 }, 4), "[????] 3")
    })
  )

  it.effect("a progress line draws only on a terminal (or when forced), and clears what it drew", () =>
    Effect.sync(() => {
      const written: Array<string> = []
      const pipe = { isTTY: false, write: (s: string) => written.push(s) }
      Render.progressLine(pipe).draw("x")
      assert.deepStrictEqual(written, [])
      const tty = Render.progressLine({ isTTY: true, columns: 0, write: (s: string) => written.push(s) })
      tty.draw("[##--] 50%")
      tty.clear()
      tty.clear()
      assert.deepStrictEqual(written, ["\r[##--] 50%\x1b[K", "\r\x1b[K"])
    })
  )

  it.effect("tool results: text as it is, other blocks summarised, structured content when there is no content", () =>
    Effect.sync(() => {
      assert.strictEqual(
        Render.toolResult({
          content: [
            { type: "text", text: "hello" },
            { type: "image", data: "AAAA", mimeType: "image/png" },
            { type: "resource_link", uri: "test://a", name: "a" }
          ]
        }),
        "hello\n[image image/png, 3 bytes]\n[resource link test://a (a)]"
      )
      assert.strictEqual(Render.toolResult({ content: [], structuredContent: { n: 1 } }), '{\n  "n": 1\n}')
    })
  )
})
