/**
 * A server built with the official SDK (`McpServer` of
 * @modelcontextprotocol/sdk 1.32.2), the other peer of the effect-mcp client
 * in the interop tests. Run with Node (types are stripped as it loads):
 *
 *   node sdkServer.ts --stdio        stdio
 *   node sdkServer.ts --http         Streamable HTTP at /mcp, sessions on
 *   node sdkServer.ts --sse          the 2024-11-05 HTTP+SSE transport (GET /sse, POST /messages)
 *
 * HTTP binds 127.0.0.1 on a free port and prints `listening on <base url>`
 * on stderr. The `slow` tool prints `started <request id>` when it begins and
 * `aborted <request id>` when its AbortSignal fires: the tests watch for both.
 */
import type * as Http from "node:http"
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js"
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import * as z from "zod"
import { listen, log, readBody, reply, streamableHttp } from "../support/SdkHttpServer.ts"

export const serverName = "sdk-interop-server"

const make = (): McpServer => {
  const server = new McpServer({ name: serverName, version: "1.32.2" })

  server.registerTool(
    "echo",
    { description: "Echoes its text", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text: `echo: ${text}` }] })
  )
  server.registerTool(
    "add",
    {
      description: "Adds two numbers",
      inputSchema: { a: z.number(), b: z.number() },
      outputSchema: { sum: z.number() }
    },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } })
  )
  server.registerTool("fail", { description: "Always reports a tool error" }, async () => ({
    content: [{ type: "text", text: "it failed" }],
    isError: true
  }))
  server.registerTool(
    "slow",
    { description: "Waits until cancelled (or ms elapse)", inputSchema: { ms: z.number() } },
    async ({ ms }, extra) => {
      log(`started ${extra.requestId}`)
      await new Promise<void>((resolve) => {
        // The tool's own duration (the tests pass a minute and cancel it): nothing waits on this timer.
        const timer = setTimeout(resolve, ms)
        extra.signal.addEventListener("abort", () => {
          clearTimeout(timer)
          log(`aborted ${extra.requestId}`)
          resolve()
        })
      })
      return { content: [{ type: "text", text: `waited ${ms} ms` }] }
    }
  )

  server.registerResource(
    "greeting",
    "sdk://static/greeting",
    { description: "A fixed text", mimeType: "text/plain" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "hello from the SDK" }] })
  )
  server.registerResource(
    "item",
    new ResourceTemplate("sdk://items/{id}", { list: undefined }),
    { description: "An item by id", mimeType: "application/json" },
    async (uri, { id }) => ({
      contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify({ id }) }]
    })
  )

  server.registerPrompt("greet", { description: "Greets someone", argsSchema: { name: z.string() } }, ({ name }) => ({
    messages: [{ role: "user", content: { type: "text", text: `Say hello to ${name}` } }]
  }))
  server.registerPrompt("plain", { description: "A prompt without arguments" }, () => ({
    messages: [{ role: "assistant", content: { type: "text", text: "Nothing to fill in" } }]
  }))
  return server
}

/** The 2024-11-05 transport: GET /sse opens a session, POST /messages?sessionId= carries the client's messages. */
const legacySse = (): Http.RequestListener => {
  const sessions = new Map<string, SSEServerTransport>()
  return async (request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1")
    if (request.method === "GET" && url.pathname === "/sse") {
      const transport = new SSEServerTransport("/messages", response)
      sessions.set(transport.sessionId, transport)
      transport.onclose = () => sessions.delete(transport.sessionId)
      return make().connect(transport)
    }
    if (request.method === "POST" && url.pathname === "/messages") {
      const transport = sessions.get(url.searchParams.get("sessionId") ?? "")
      if (transport === undefined) return reply(response, 404, "unknown session")
      return transport.handlePostMessage(request, response, await readBody(request))
    }
    reply(response, 404, "not found")
  }
}

const mode = process.argv[2]
if (mode === "--stdio") await make().connect(new StdioServerTransport())
else if (mode === "--http") listen(streamableHttp(make))
else if (mode === "--sse") listen(legacySse())
else {
  log("usage: node sdkServer.ts --stdio | --http | --sse")
  process.exitCode = 2
}
