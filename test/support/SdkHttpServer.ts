/**
 * The HTTP plumbing of the official SDK servers the interop tests run as
 * child processes (test/interop-client/sdkServer.ts, test/interop/sdkTaskServer.ts):
 * Streamable HTTP at /mcp with one SDK server and transport per session, and
 * a listener on 127.0.0.1 (a free port, `listening on <base url>` on stderr,
 * stopped by SIGTERM or SIGINT).
 */
import { randomUUID } from "node:crypto"
import * as Http from "node:http"
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"

export const log = (line: string) => {
  process.stderr.write(`${line}\n`)
}

/** A request's JSON body (undefined when empty). */
export const readBody = (request: Http.IncomingMessage): Promise<unknown> =>
  new Promise((resolve, reject) => {
    let text = ""
    request.setEncoding("utf8")
    request.on("data", (chunk: string) => (text += chunk))
    request.on("end", () => {
      try {
        resolve(text === "" ? undefined : JSON.parse(text))
      } catch (error) {
        reject(error)
      }
    })
    request.on("error", reject)
  })

export const reply = (response: Http.ServerResponse, status: number, text: string) => {
  response.writeHead(status, { "content-type": "text/plain" }).end(text)
}

/** Streamable HTTP at /mcp: one SDK server (`make`) and transport per session. */
export const streamableHttp = (make: () => McpServer): Http.RequestListener => {
  const sessions = new Map<string, StreamableHTTPServerTransport>()
  return async (request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1")
    if (url.pathname !== "/mcp") return reply(response, 404, "not found")
    const body = request.method === "POST" ? await readBody(request) : undefined
    const id = request.headers["mcp-session-id"]
    const existing = typeof id === "string" ? sessions.get(id) : undefined
    if (existing !== undefined) return existing.handleRequest(request, response, body)
    if (typeof id === "string") return reply(response, 404, "unknown session")
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, transport)
      }
    })
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId)
    }
    await make().connect(transport)
    await transport.handleRequest(request, response, body)
  }
}

/** Serves `listener` on 127.0.0.1, a free port, until SIGTERM or SIGINT. */
export const listen = (listener: Http.RequestListener) => {
  const server = Http.createServer((request, response) => {
    Promise.resolve(listener(request, response)).catch((error: unknown) => {
      log(`request failed: ${String(error)}`)
      if (!response.headersSent) reply(response, 500, "internal error")
    })
  })
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    if (address !== null && typeof address === "object") log(`listening on http://127.0.0.1:${address.port}`)
  })
  const stop = () => {
    server.closeAllConnections()
    server.close(() => process.exit(0))
  }
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)
}
