import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FileTokenStore from "@effect-mcp/auth/FileTokenStore"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"

const tempFile = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "effect-mcp-tokens-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => path.join(dir, "tokens.json")))

const tokens = {
  accessToken: "access-token-0123456789abcdef",
  refreshToken: "refresh-token-0123456789abcdef",
  expiresAt: 1_900_000_000_000,
  scope: ["notes:read"],
  tokenType: "bearer",
  issuer: "https://as.example"
}

describe("FileTokenStore", () => {
  it.live("tokens survive the store (a new one reads the file), owner-only; removal is written too", () =>
    Effect.gen(function* () {
      const file = yield* tempFile
      const first = yield* FileTokenStore.make(file)
      assert.isUndefined(yield* first.get("https://h/mcp"))
      yield* first.set("https://h/mcp", tokens)
      assert.strictEqual(fs.statSync(file).mode & 0o777, 0o600)
      const second = yield* FileTokenStore.make(file)
      assert.deepStrictEqual(yield* second.get("https://h/mcp"), tokens)
      yield* second.remove("https://h/mcp")
      const third = yield* FileTokenStore.make(file)
      assert.isUndefined(yield* third.get("https://h/mcp"))
      assert.deepStrictEqual(fs.readdirSync(path.dirname(file)), ["tokens.json"], "no temporary file left")
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.live("a file that is not a token file counts as empty, with a warning that quotes nothing of it", () =>
    Effect.gen(function* () {
      const file = yield* tempFile
      const content = '{"version":2,"secret":"access-token-in-a-foreign-file-0123"}'
      fs.writeFileSync(file, content)
      const lines: Array<string> = []
      const logger = Logger.layer([
        Logger.make((options) => {
          lines.push(`${String(options.message)} ${Cause.pretty(options.cause)}`)
        })
      ])
      const store = yield* FileTokenStore.make(file)
      assert.isUndefined(yield* store.get("https://h/mcp").pipe(Effect.provide(logger)))
      assert.strictEqual(lines.length, 1)
      assert.include(lines[0], file)
      assert.notInclude(lines[0], "access-token-in-a-foreign-file")
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )
})
