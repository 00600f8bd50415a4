/**
 * A Streamable HTTP MCP server on 127.0.0.1 (port 0) that answers the
 * handshake (2025-11-25, with a session id) and then stalls on one thing:
 * `tools/list` (never answered) or the DELETE that ends the session (never
 * answered; `tools/list` then lists no tools). The rest of what a client
 * sends is answered: notifications 202, the GET stream 405. Or
 * (`authorization`) it answers every POST 401, naming its own protected
 * resource metadata, which it never serves. Closed with the scope.
 */
import * as http from "node:http"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"

/** A stalling server. */
export interface StallingServer {
  /** `http://127.0.0.1:<port>/mcp` */
  readonly url: string
  /** Completed when the request it stalls on arrives, with its arrival time (Date.now()). */
  readonly stalled: Deferred.Deferred<number>
}

const json = (response: http.ServerResponse, message: object, headers: Record<string, string> = {}) =>
  response
    .writeHead(200, { "content-type": "application/json", ...headers })
    .end(JSON.stringify({ jsonrpc: "2.0", ...message }))

/** Starts the server in the scope, stalling on `stall`. */
export const make = (
  stall: "tools/list" | "DELETE" | "authorization"
): Effect.Effect<StallingServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<StallingServer & { readonly server: http.Server }>((resume) => {
      const stalled = Deferred.makeUnsafe<number>()
      const server = http.createServer((request, response) => {
        if (stall === "authorization") {
          if (request.method === "GET") return void Deferred.doneUnsafe(stalled, Exit.succeed(Date.now()))
          const { port } = server.address() as { readonly port: number }
          const metadata = `http://127.0.0.1:${port}/.well-known/oauth-protected-resource`
          return void response.writeHead(401, { "www-authenticate": `Bearer resource_metadata="${metadata}"` }).end()
        }
        if (request.method === "DELETE") {
          if (stall !== "DELETE") return void response.writeHead(200).end()
          return void Deferred.doneUnsafe(stalled, Exit.succeed(Date.now()))
        }
        if (request.method !== "POST") return void response.writeHead(405).end()
        let body = ""
        request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk))
        request.on("end", () => {
          const message = JSON.parse(body) as { readonly id?: number; readonly method?: string }
          if (message.id === undefined) return void response.writeHead(202).end()
          switch (message.method) {
            case "initialize":
              return json(
                response,
                {
                  id: message.id,
                  result: {
                    protocolVersion: "2025-11-25",
                    capabilities: { tools: {} },
                    serverInfo: { name: "stalling", version: "1.0.0" }
                  }
                },
                { "mcp-session-id": "s1" }
              )
            case "tools/list":
              if (stall !== "tools/list") return json(response, { id: message.id, result: { tools: [] } })
              return void Deferred.doneUnsafe(stalled, Exit.succeed(Date.now()))
            default:
              return json(response, { id: message.id, error: { code: -32601, message: "Method not found" } })
          }
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as { readonly port: number }
        resume(Effect.succeed({ url: `http://127.0.0.1:${port}/mcp`, server, stalled }))
      })
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )
