/**
 * The bare floors: the same JSON-RPC messages as an MCP `tools/call` of
 * `echo` and its result, with no framework at all (no validation, no
 * lifecycle, no schema). Whatever a framework costs is measured against these.
 */
import { spawn } from "node:child_process"
import { lines } from "./Lines.ts"
import { type Pair, promiseLoops, textOf } from "./Pair.ts"

export interface Message {
  readonly jsonrpc: "2.0"
  readonly id?: number
  readonly method?: string
  readonly params?: {
    readonly name?: string
    readonly arguments?: { readonly text?: string }
    readonly protocolVersion?: string
    readonly capabilities?: object
    readonly clientInfo?: { readonly name: string; readonly version: string }
  }
  readonly result?: unknown
}

/** The revision the floor client opens with when it shakes hands (see `stdio`). */
const HANDSHAKE_REVISION = "2025-11-25"

/** The request a client sends for one echo call. */
export const request = (id: number, text: string): Message => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "echo", arguments: { text } }
})

/** What a server answers to any request: the echo result. */
export const answer = (message: Message): Message => ({
  jsonrpc: "2.0",
  id: message.id!,
  result: { content: [{ type: "text", text: message.params?.arguments?.text ?? "" }] }
})

/** The least an MCP client accepts as the answer to its `initialize` (the stdio floor server's). */
export const initializeAnswer = (message: Message): Message => ({
  jsonrpc: "2.0",
  id: message.id!,
  result: {
    protocolVersion: message.params?.protocolVersion ?? HANDSHAKE_REVISION,
    capabilities: { tools: {} },
    serverInfo: { name: "floor", version: "1.0.0" }
  }
})

/** Ids and pending resolvers of a floor client. */
export class Calls {
  private nextId = 1
  private readonly pending = new Map<number, (result: unknown) => void>()

  /** Sends an echo request through `send` and resolves with the result of its response. */
  call(text: string, send: (message: Message) => void): Promise<unknown> {
    return this.request((id) => request(id, text), send)
  }

  /** Sends the request `make` builds for the next id and resolves with the result of its response. */
  request(make: (id: number) => Message, send: (message: Message) => void): Promise<unknown> {
    const id = this.nextId++
    return new Promise((resolve) => {
      this.pending.set(id, resolve)
      send(make(id))
    })
  }

  /** Settles the call a response belongs to. */
  settle(message: Message): void {
    const resolve = this.pending.get(message.id!)
    if (resolve === undefined) return
    this.pending.delete(message.id!)
    resolve(message.result)
  }
}

/** Builds a Pair from the floor's `call`. */
export const pair = (call: (text: string) => Promise<unknown>, close: () => Promise<void>): Pair => ({
  ...promiseLoops(call),
  call: async (text) => textOf(await call(text)),
  close
})

/** In process: objects handed across directly, the response delivered synchronously like the SDK's pair. */
export const inProcess = async (): Promise<Pair> => {
  const calls = new Calls()
  const toServer = (message: Message) => calls.settle(answer(message))
  return pair(
    (text) => calls.call(text, toServer),
    async () => {}
  )
}

/**
 * Spawns a stdio server and talks NDJSON to it; cold start is spawn to the
 * first answer. With `handshake`, the client first does the least an MCP
 * server asks (`initialize`, then `notifications/initialized`), so the bare
 * client can face an MCP server (W2's floor client -> effect-mcp server).
 */
export const stdio = async (
  script: string,
  options?: { readonly handshake?: boolean }
): Promise<{ readonly pair: Pair; readonly coldStartMs: number }> => {
  const start = performance.now()
  const child = spawn(process.execPath, [script], { stdio: ["pipe", "pipe", "inherit"] })
  const calls = new Calls()
  lines(child.stdout, (line) => calls.settle(JSON.parse(line) as Message))
  const send = (message: Message) => {
    child.stdin.write(`${JSON.stringify(message)}\n`)
  }
  const call = (text: string) => calls.call(text, send)
  if (options?.handshake === true) {
    await calls.request(
      (id) => ({
        jsonrpc: "2.0",
        id,
        method: "initialize",
        params: {
          protocolVersion: HANDSHAKE_REVISION,
          capabilities: {},
          clientInfo: { name: "floor", version: "1.0.0" }
        }
      }),
      send
    )
    send({ jsonrpc: "2.0", method: "notifications/initialized" })
  }
  await call("")
  const coldStartMs = performance.now() - start
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  return {
    pair: pair(call, async () => {
      child.stdin.end()
      await exited
    }),
    coldStartMs
  }
}
