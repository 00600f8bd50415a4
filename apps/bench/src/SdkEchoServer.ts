/**
 * The SDK server every workload runs: its high-level `McpServer` with the
 * `echo` tool (a zod input, as the SDK's documentation shows).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import * as z from "zod"

export const serverInfo = { name: "bench-server", version: "1.0.0" }

/** A fresh SDK server with the echo tool. */
export const make = (): McpServer => {
  const server = new McpServer(serverInfo)
  server.registerTool(
    "echo",
    { description: "Returns its text argument", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }] })
  )
  return server
}
