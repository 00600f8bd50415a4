import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as McpConfig from "../src/McpConfig.ts"

const failure = (input: unknown) => Effect.flip(McpConfig.decode(input))

describe("McpConfig", () => {
  it.effect("decodes stdio and remote entries as Claude Desktop, Cursor and VS Code write them", () =>
    Effect.gen(function* () {
      const config = yield* McpConfig.parse(
        JSON.stringify({
          mcpServers: {
            files: { command: "npx", args: ["-y", "files"], env: { ROOT: "/tmp" }, cwd: "/srv" },
            typed: { type: "stdio", command: "node", args: ["server.js"] },
            search: { type: "http", url: "https://search.example.com/mcp", headers: { authorization: "Bearer x" } },
            plain: { url: "http://127.0.0.1:3000/mcp" },
            legacy: { type: "sse", url: "http://127.0.0.1:3000/sse" }
          }
        })
      )
      assert.deepStrictEqual(Object.keys(config.mcpServers), ["files", "typed", "search", "plain", "legacy"])
      assert.isTrue(McpConfig.isStdio(config.mcpServers.files!))
      assert.deepStrictEqual(config.mcpServers.files, {
        command: "npx",
        args: ["-y", "files"],
        env: { ROOT: "/tmp" },
        cwd: "/srv"
      })
      assert.isFalse(McpConfig.isStdio(config.mcpServers.search!))
      assert.deepStrictEqual(config.mcpServers.legacy, { type: "sse", url: "http://127.0.0.1:3000/sse" })
    })
  )

  it.effect("reads VS Code's `servers` key", () =>
    Effect.gen(function* () {
      const config = yield* McpConfig.decode({ servers: { a: { type: "stdio", command: "a" } } })
      assert.deepStrictEqual(config.mcpServers, { a: { type: "stdio", command: "a" } })
    })
  )

  it.effect("errors name the server and the field", () =>
    Effect.gen(function* () {
      const args = yield* failure({ mcpServers: { ok: { command: "a" }, files: { command: "npx", args: ["-y", 1] } } })
      assert.strictEqual(args.reason, "Invalid")
      assert.strictEqual(args.server, "files")
      assert.strictEqual(args.field, "args.1")
      assert.match(args.message, /^server "files", field args\.1: Expected string/)

      const env = yield* failure({ mcpServers: { files: { command: "npx", env: { TOKEN: 7 } } } })
      assert.strictEqual(env.field, "env.TOKEN")

      const url = yield* failure({ mcpServers: { search: { type: "http", url: "ftp://x" } } })
      assert.strictEqual(url.server, "search")
      assert.strictEqual(url.field, "url")
      assert.match(url.message, /http\(s\) URL/)

      const type = yield* failure({ mcpServers: { search: { type: "websocket", url: "http://x" } } })
      assert.strictEqual(type.field, "type")

      const neither = yield* failure({ mcpServers: { empty: { args: [] } } })
      assert.strictEqual(neither.server, "empty")
      assert.match(neither.message, /needs `command`.*or `url`/)

      const command = yield* failure({ mcpServers: { blank: { command: "" } } })
      assert.strictEqual(command.field, "command")

      const top = yield* failure({ servers: 3 })
      assert.isUndefined(top.server)
    })
  )

  it.effect("text that is not JSON fails with reason Json and the path", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(McpConfig.parse("{ mcpServers", "mcp.json"))
      assert.strictEqual(error.reason, "Json")
      assert.strictEqual(error.path, "mcp.json")
      assert.match(error.message, /^mcp\.json is not JSON/)
      const invalid = yield* Effect.flip(McpConfig.parse('{"mcpServers":{"a":{"command":1}}}', "mcp.json"))
      assert.strictEqual(invalid.path, "mcp.json")
      assert.match(invalid.message, /^mcp\.json: server "a", field command/)
    })
  )
})
