/**
 * The official SDK side (`@modelcontextprotocol/sdk` 1.32.2): its high-level
 * `McpServer` with the `echo` tool (a zod input, as its documentation
 * shows), and its `Client` driven by `async` loops.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { type Pair, promiseLoops, textOf } from "./Pair.ts"
import * as SdkEchoServer from "./SdkEchoServer.ts"

export const clientInfo = { name: "bench-client", version: "1.0.0" }

export const makeServer = SdkEchoServer.make

/** A connected SDK client over `transport`. */
export const connect = async (transport: Transport): Promise<Client> => {
  const client = new Client(clientInfo)
  await client.connect(transport)
  return client
}

/** Drives a connected SDK client; `release` closes whatever else the pair holds. */
export const clientPair = (client: Client, release: () => Promise<void> = async () => {}): Pair => {
  const call = (text: string) => client.callTool({ name: "echo", arguments: { text } })
  return {
    ...promiseLoops(call),
    call: async (text) => textOf(await call(text)),
    close: async () => {
      await client.close()
      await release()
    }
  }
}

/** SDK client and server in one process over its InMemoryTransport pair. */
export const inProcess = async (): Promise<Pair> => {
  const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair()
  const server = makeServer()
  await server.connect(serverEnd)
  const client = await connect(clientEnd)
  return clientPair(client, () => server.close())
}

/** The SDK client spawning `script` (any MCP server over stdio) with this Node. */
export const stdio = async (script: string): Promise<{ readonly pair: Pair; readonly coldStartMs: number }> => {
  const start = performance.now()
  const client = await connect(
    new StdioClientTransport({ command: process.execPath, args: [script], stderr: "inherit" })
  )
  const coldStartMs = performance.now() - start
  return { pair: clientPair(client), coldStartMs }
}
