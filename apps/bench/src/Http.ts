/**
 * Streamable HTTP pieces: the server child processes (`servers/http*.ts`) and
 * the three clients: effect-mcp's (Node's http client through `NodeHttpClient`), the
 * SDK's `StreamableHTTPClientTransport` (fetch), and the floor's bare
 * `node:http` keep-alive POSTs.
 */
import { type ChildProcess, fork } from "node:child_process"
import { Agent, request } from "node:http"
import * as Transport from "@effect-mcp/engine/Transport"
import * as McpHeaders from "@effect-mcp/http/McpHeaders"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as EffectMcp from "./EffectMcp.ts"
import * as Floor from "./Floor.ts"
import { lines } from "./Lines.ts"
import type { Pair } from "./Pair.ts"
import * as Sdk from "./Sdk.ts"

export type Impl = "effect" | "sdk" | "floor"
export type Mode = "json" | "sse"

export interface Memory {
  readonly heapUsed: number
  readonly rss: number
}

export interface Server {
  readonly url: string
  readonly pid: number | undefined
  /** Heap and RSS of the server process after a full collection. */
  readonly memory: () => Promise<Memory>
  /** User + system CPU time the server process used so far, microseconds. */
  readonly cpu: () => Promise<number>
  readonly close: () => Promise<void>
}

const scripts: { readonly [I in Impl]: string } = {
  effect: "httpEffect.ts",
  sdk: "httpSdk.ts",
  floor: "httpFloor.ts"
}

/** Starts the HTTP echo server of one implementation (a child process) in one response mode. */
export const spawnServer = (impl: Impl, mode: Mode): Promise<Server> => spawnScript(scripts[impl], [mode], impl)

const spawnScript = (script: string, args: ReadonlyArray<string>, impl: string): Promise<Server> =>
  new Promise((resolve, reject) => {
    const child: ChildProcess = fork(EffectMcp.serverScript(script), [...args], {
      execArgv: ["--expose-gc"],
      stdio: ["ignore", "pipe", "inherit", "ipc"]
    })
    child.once("error", reject)
    child.once("exit", (code) => reject(new Error(`${impl} HTTP server exited with ${code}`)))
    lines(child.stdout!, (line) => {
      if (!line.startsWith("LISTENING ")) return
      const url = line.slice("LISTENING ".length)
      resolve({
        url,
        pid: child.pid,
        memory: () =>
          new Promise((done) => {
            child.once("message", (m) => done(m as Memory))
            child.send("memory")
          }),
        cpu: () =>
          new Promise((done) => {
            child.once("message", (m) => done((m as { readonly cpuMicros: number }).cpuMicros))
            child.send("cpu")
          }),
        close: () =>
          new Promise((done) => {
            child.removeAllListeners("exit")
            child.once("exit", () => done())
            child.kill()
          })
      })
    })
  })

/** Starts one runner of a clustered effect-mcp echo server (W8): `servers/httpCluster.ts`. */
export const spawnClusterRunner = (mode: Mode, storage: string, runnerPort: number): Promise<Server> =>
  spawnScript("httpCluster.ts", [mode, storage, String(runnerPort)], "clustered")

/** Starts a bare `node:http` relay to `endpoint` in its own process (W8): `servers/httpRelay.ts`. */
export const spawnRelay = (endpoint: string): Promise<Server> => spawnScript("httpRelay.ts", [endpoint], "relay")

/** The effect-mcp client on a stateful 2025-11-25 session. */
export const effectClient = async (url: string): Promise<Pair> => {
  const [client, release] = await EffectMcp.scoped(
    Effect.gen(function* () {
      const context = yield* Layer.build(NodeHttpClient.layerStreamableHttp({ url }))
      return yield* EffectMcp.connect(Context.get(context, Transport.Transport), { supportedVersions: ["2025-11-25"] })
    })
  )
  return EffectMcp.clientPair(client, release)
}

/** The SDK client (it opens a stateful session). */
export const sdkClient = async (url: string): Promise<Pair> =>
  Sdk.clientPair(await Sdk.connect(new StreamableHTTPClientTransport(new URL(url))))

/** Bare keep-alive POSTs of the echo request, the JSON body parsed. */
export const floorClient = async (url: string): Promise<Pair> => {
  const agent = new Agent({ keepAlive: true })
  const target = new URL(url)
  let nextId = 1
  const call = (text: string) =>
    new Promise<unknown>((resolve, reject) => {
      const body = JSON.stringify(Floor.request(nextId++, text))
      const req = request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: "POST",
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) }
        },
        (res) => {
          const chunks: Array<Buffer> = []
          res.on("data", (chunk: Buffer) => chunks.push(chunk))
          res.on("end", () => resolve((JSON.parse(Buffer.concat(chunks).toString("utf8")) as Floor.Message).result))
          res.on("error", reject)
        }
      )
      req.on("error", reject)
      req.end(body)
    })
  return Floor.pair(call, async () => agent.destroy())
}

/**
 * Opens an initialized stateful session with bare requests (`initialize`,
 * then `notifications/initialized`) and leaves it idle: the same client for
 * every server, so only the server's memory differs.
 */
export const openIdleSession = async (url: string, agent: Agent): Promise<string> => {
  const post = (body: object, headers: Record<string, string>) =>
    new Promise<{ readonly status: number; readonly sessionId: string | undefined }>((resolve, reject) => {
      const text = JSON.stringify(body)
      const target = new URL(url)
      const req = request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "content-length": Buffer.byteLength(text),
            ...headers
          }
        },
        (res) => {
          res.resume()
          res.on("end", () => {
            const id = res.headers[McpHeaders.SESSION_ID]
            resolve({ status: res.statusCode ?? 0, sessionId: typeof id === "string" ? id : undefined })
          })
          res.on("error", reject)
        }
      )
      req.on("error", reject)
      req.end(text)
    })
  const initialized = await post(
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1.0.0" } }
    },
    {}
  )
  if (initialized.status !== 200 || initialized.sessionId === undefined) {
    throw new Error(`initialize answered ${initialized.status} without a session`)
  }
  const headers = { [McpHeaders.SESSION_ID]: initialized.sessionId, [McpHeaders.PROTOCOL_VERSION]: "2025-11-25" }
  const notified = await post({ jsonrpc: "2.0", method: "notifications/initialized" }, headers)
  if (notified.status !== 202) throw new Error(`notifications/initialized answered ${notified.status}`)
  return initialized.sessionId
}
