/**
 * The SDK HTTP echo server (`httpSdk.ts <json|sse>`): one
 * `StreamableHTTPServerTransport` + `McpServer` per session on `node:http`,
 * the body parsed first as `express.json()` would (the SDK's documented
 * pattern for stateful servers).
 */
import * as McpHeaders from "@effect-mcp/http/McpHeaders"
import { randomUUID } from "node:crypto"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import * as SdkEchoServer from "../SdkEchoServer.ts"
import { listen, mode, readBody } from "./httpCommon.ts"
const transports = new Map<string, StreamableHTTPServerTransport>()
listen(async (req, res) => {
  const sessionId = req.headers[McpHeaders.SESSION_ID]
  const body = req.method === "POST" ? JSON.parse(await readBody(req)) : undefined
  let transport = typeof sessionId === "string" ? transports.get(sessionId) : undefined
  if (transport === undefined) {
    if (typeof sessionId === "string" || req.method !== "POST") {
      res.writeHead(404).end()
      return
    }
    const created = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: mode === "json",
      onsessioninitialized: (id) => {
        transports.set(id, created)
      }
    })
    created.onclose = () => {
      if (created.sessionId !== undefined) transports.delete(created.sessionId)
    }
    await SdkEchoServer.make().connect(created)
    transport = created
  }
  await transport.handleRequest(req, res, body)
})
