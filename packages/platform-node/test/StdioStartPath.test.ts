/**
 * What a plain tool server's start loads: a stdio server is a new process for
 * every client session, and every module it loads is paid at each start (see
 * docs/shipping.md). Features the server does not use stay off the path: the
 * HTTP stack, configuration (effect's Config, read only by
 * `RequestStateKeys.layerConfig`), telemetry export, SQL and cluster.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

const server = fileURLToPath(new URL("./fixtures/tool-server.ts", import.meta.url))

// Records every file the process resolves (ESM and CommonJS) and writes the list when the process exits.
const hook = (out: string) =>
  `data:text/javascript,${encodeURIComponent(`
import * as Fs from "node:fs"
import * as Module from "node:module"
const files = new Set()
Module.registerHooks({ resolve: (specifier, context, next) => {
  const resolved = next(specifier, context)
  if (resolved.url.startsWith("file:")) files.add(resolved.url)
  return resolved
} })
process.on("exit", () => Fs.writeFileSync(${JSON.stringify(out)}, JSON.stringify([...files])))
`)}`

/** The files the tool server loaded by the time it answered `initialize` and its client closed stdin. */
const loadedBy = (out: string): Promise<ReadonlyArray<string>> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", hook(out), server], { stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8")
    child.stderr.setEncoding("utf8")
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk
    })
    child.stdout.on("data", (chunk: string) => {
      stdout += chunk
      // Answered: the client goes away, and the server ends with its session.
      if (stdout.includes("\n")) child.stdin.end()
    })
    child.on("error", reject)
    child.on("exit", (code) => {
      if (!stdout.includes('"id":1,"result"')) reject(new Error(`no initialize answer (exit ${code}): ${stderr}`))
      else resolve(JSON.parse(fs.readFileSync(out, "utf8")))
    })
    child.stdin.write(
      `${JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "test", version: "1.0.0" } }
      })}\n`
    )
  })

describe("a stdio tool server's start", () => {
  it.live(
    "loads no module of a feature it does not use",
    () =>
      Effect.gen(function* () {
        const dir = yield* Effect.promise(() => fs.promises.mkdtemp(path.join(os.tmpdir(), "effect-mcp-start-path-")))
        try {
          const files = yield* Effect.promise(() => loadedBy(path.join(dir, "modules.json")))
          // Sanity: the list is the server's (its own modules are there).
          assert.isTrue(files.some((file) => file.includes("/server/src/McpServer.ts")))
          const unused = [
            /\/effect\/dist\/Config\.js$/,
            /\/effect\/dist\/ConfigProvider\.js$/,
            // effect's Schema itself loads http/Headers, Cookies and UrlParams; the HTTP stack is the Http* modules.
            /\/effect\/dist\/http\/Http/,
            /\/NodeHttpServer\.[jt]s$/,
            /\/StreamableHttpServer\.[jt]s$/,
            /\/effect\/dist\/observability\//,
            /\/NodeTelemetry\.[jt]s$/,
            /\/packages\/(?:sql|cluster|auth)\//
          ]
          for (const pattern of unused) {
            assert.deepStrictEqual(
              files.filter((file) => pattern.test(file)),
              [],
              `${pattern} is off a tool server's stdio start`
            )
          }
        } finally {
          yield* Effect.promise(() => fs.promises.rm(dir, { recursive: true, force: true }))
        }
      }),
    60_000
  )
})
