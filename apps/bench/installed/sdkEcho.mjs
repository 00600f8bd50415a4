// The SDK's equivalent echo server against the installed packages: its high-level McpServer, a zod input.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import * as z from "zod"

const server = new McpServer({ name: "bench-server", version: "1.0.0" })
server.registerTool(
  "echo",
  { description: "Returns its text argument", inputSchema: { text: z.string() } },
  async ({ text }) => ({ content: [{ type: "text", text }] })
)
await server.connect(new StdioServerTransport())
