/**
 * The echo server as a Cloudflare Worker, effect-mcp's and the SDK's (W9): each bundled by rolldown into one
 * minified ESM file, as a Worker is deployed, and served by workerd (the root devDependency's binary) on
 * 127.0.0.1. A cold start is one workerd process from its spawn to the first `tools/call` answered: workerd
 * compiles the Worker, listens (it reports the port on its control descriptor), and the first requests
 * (`initialize`, then the call) build the server.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import type { Readable } from "node:stream"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"
import { build } from "rolldown"
import { serverScript } from "./EffectMcp.ts"
import { lines } from "./Lines.ts"

/** workerd, as `npm ci` links it at the repository root. */
export const workerdBin = fileURLToPath(new URL("../../../node_modules/.bin/workerd", import.meta.url))

export interface Bundle {
  /** The directory holding `worker.mjs` and `config.capnp`. */
  readonly dir: string
  readonly rawBytes: number
  readonly gzipBytes: number
}

const config = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "mcp", worker = (modules = [(name = "worker.mjs", esModule = embed "worker.mjs")], compatibilityDate = "2026-11-01"))],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "mcp")]
);
`

/** Bundles `servers/<script>` into a fresh directory under `root`, with the workerd config beside it. */
export const bundle = async (root: string, script: string): Promise<Bundle> => {
  const dir = await Fs.mkdtemp(Path.join(root, `${Path.basename(script, ".ts")}-`))
  await build({
    input: serverScript(script),
    platform: "browser",
    logLevel: "silent",
    resolve: { conditionNames: ["@effect-mcp/source", "workerd", "worker", "browser", "import", "default"] },
    output: { dir, format: "esm", entryFileNames: "worker.mjs", codeSplitting: false, minify: true }
  })
  await Fs.writeFile(Path.join(dir, "config.capnp"), config)
  const code = await Fs.readFile(Path.join(dir, "worker.mjs"))
  return { dir, rawBytes: code.length, gzipBytes: gzipSync(code).length }
}

/** A temporary directory for the bundles, and its removal. */
export const tempRoot = async (): Promise<{ readonly root: string; readonly remove: () => Promise<void> }> => {
  const root = await Fs.mkdtemp(Path.join(Os.tmpdir(), "effect-mcp-bench-workers-"))
  return { root, remove: () => Fs.rm(root, { recursive: true, force: true }) }
}

const post = async (url: string, body: object): Promise<string> => {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25"
    },
    body: JSON.stringify(body)
  })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`${response.status} from the Worker: ${text}`)
  return text
}

const stop = (child: ChildProcess): Promise<void> =>
  new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done()
    child.once("exit", () => done())
    child.kill("SIGKILL")
  })

/** Milliseconds from spawning workerd to the socket listening, and to the first `tools/call` answered. */
export interface ColdStart {
  readonly listenMs: number
  readonly firstCallMs: number
}

/** Starts workerd on the bundle, times its cold start, and stops it. */
export const coldStart = async (bundle: Bundle): Promise<ColdStart> => {
  const started = performance.now()
  const child = spawn(workerdBin, ["serve", "--control-fd=3", "config.capnp"], {
    cwd: bundle.dir,
    stdio: ["ignore", "ignore", "pipe", "pipe"]
  })
  try {
    let stderr = ""
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    const port = await new Promise<number>((resolve, reject) => {
      child.once("error", reject)
      child.once("exit", (code) => reject(new Error(`workerd exited with ${code}: ${stderr}`)))
      lines(child.stdio[3] as Readable, (line) => {
        const match = /"event":"listen","socket":"http","port":(\d+)/.exec(line)
        if (match !== null) resolve(Number(match[1]))
      })
    })
    const listenMs = performance.now() - started
    const url = `http://127.0.0.1:${port}/mcp`
    await post(url, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1.0.0" } }
    })
    const answer = await post(url, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "cold" } }
    })
    const firstCallMs = performance.now() - started
    if (!answer.includes('"text":"cold"')) throw new Error(`the Worker answered something else: ${answer}`)
    return { listenMs, firstCallMs }
  } finally {
    await stop(child)
  }
}
