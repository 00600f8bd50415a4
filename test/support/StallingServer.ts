/**
 * A Streamable HTTP MCP server on 127.0.0.1 (port 0) that answers the
 * handshake (2025-11-25, with a session id) and then stalls on one thing:
 * `tools/list` (never answered), the POST of `notifications/initialized`
 * (never answered, where a server must answer 202), or the DELETE that ends
 * the session (never answered; `tools/list` then lists no tools). The rest of what a client
 * sends is answered: notifications 202, the GET stream 405. Or
 * (`authorization`) it answers every POST 401, naming its own protected
 * resource metadata, which it never serves. Or (`event stream`) it answers
 * the event stream's GET with 404, as a server without a GET route does,
 * which ends each new session at once. Closed with the scope.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type * as http from "node:http"
import { listen } from "./Listen.ts"

/** A stalling server. */
export interface StallingServer {
  /** `http://127.0.0.1:<port>/mcp` */
  readonly url: string
  /** Completed when the request it stalls on arrives, with its arrival time (Date.now()). */
  readonly stalled: Deferred.Deferred<number>
  /** The arrival time (Date.now()) of each `initialize`, in order. */
  readonly initializes: Queue.Queue<number>
}

const json = (response: http.ServerResponse, message: object, headers: Record<string, string> = {}) =>
  response
    .writeHead(200, { "content-type": "application/json", ...headers })
    .end(JSON.stringify({ jsonrpc: "2.0", ...message }))

/** Starts the server in the scope, stalling on `stall`. */
export const make = (
  stall: "tools/list" | "notifications/initialized" | "DELETE" | "authorization" | "event stream"
): Effect.Effect<StallingServer, never, Scope.Scope> =>
  Effect.gen(function* () {
    const stalled = Deferred.makeUnsafe<number>()
    const initializes = yield* Queue.unbounded<number>()
    let metadata = ""
    const server = yield* listen((request, response) => {
      if (stall === "authorization") {
        if (request.method === "GET") return void Deferred.doneUnsafe(stalled, Exit.succeed(Date.now()))
        return void response.writeHead(401, { "www-authenticate": `Bearer resource_metadata="${metadata}"` }).end()
      }
      if (request.method === "DELETE") {
        if (stall !== "DELETE") return void response.writeHead(200).end()
        return void Deferred.doneUnsafe(stalled, Exit.succeed(Date.now()))
      }
      if (request.method !== "POST") return void response.writeHead(stall === "event stream" ? 404 : 405).end()
      let body = ""
      request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk))
      request.on("end", () => {
        const message = JSON.parse(body) as { readonly id?: number; readonly method?: string }
        if (message.id === undefined) {
          if (message.method === stall) return void Deferred.doneUnsafe(stalled, Exit.succeed(Date.now()))
          return void response.writeHead(202).end()
        }
        switch (message.method) {
          case "initialize":
            Queue.offerUnsafe(initializes, Date.now())
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
    const { port } = server.address() as { readonly port: number }
    metadata = `http://127.0.0.1:${port}/.well-known/oauth-protected-resource`
    return { url: `http://127.0.0.1:${port}/mcp`, stalled, initializes }
  })
