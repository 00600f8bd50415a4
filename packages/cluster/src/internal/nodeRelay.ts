/**
 * The Node relay of a clustered server (NodeClusteredServer): a POST on a
 * session another runner owns, whose owner's direct hop is known, is taken
 * before effect's HTTP server sees it and carried with Node's own request and
 * response objects. Why: on a forwarded call the receiving process only
 * passes bytes along, and most of its work was effect's HTTP server around
 * that (the request object, a fiber, the router, the response); the W8
 * benchmark measures what this saves.
 *
 * It answers only what it can answer whole: the owner's complete (JSON or
 * empty) reply. Every other outcome (the owner refused the hop, could not be
 * reached or was lost, or streams its reply) is handed to effect's handler
 * with the request as it came, its body and the hop's result attached
 * (`attemptOf`), and the handler settles it as if it had sent the hop itself:
 * one hop per request, never two. A request the relay does not take (GET,
 * DELETE, no session, no known owner, a body without `Content-Length` or
 * above the limit, a hop from another runner) goes to the handler untouched.
 */
import * as McpHeaders from "@effect-mcp/http/McpHeaders"
import type { IncomingMessage, ServerResponse } from "node:http"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as ClusteredHttpServer from "../ClusteredHttpServer.ts"
import type * as DirectHop from "../DirectHop.ts"
import * as ClusterHeaders from "./headers.ts"
import type { NodeHop } from "./nodeHop.ts"

/** A Node `request` filter (see platform-node's `NodeHttpServer.RequestFilter`). */
export type Filter = (
  request: IncomingMessage,
  response: ServerResponse,
  app: (request: IncomingMessage, response: ServerResponse) => void
) => boolean

/** What the relay asks of the clustered server. */
export type Route = Pick<ClusteredHttpServer.ClusteredHttpServer, "directRoute" | "countForwarded">

/** The relay of one process: its filter for a server, and the attempts it hands to that server's handler. */
export interface NodeRelay {
  readonly attemptOf: (request: HttpServerRequest.HttpServerRequest) => DirectHop.Attempt | undefined
  readonly filter: (server: Route) => Filter
}

/** The relay for the endpoint at `path`, bodies of at most `maxBodyBytes`. */
export const make = (hop: NodeHop, options: { readonly path: string; readonly maxBodyBytes: number }): NodeRelay => {
  // Keyed by Node's request: effect's request object for it carries it as `source`.
  const attempts = new WeakMap<object, DirectHop.Attempt>()

  const relay = (
    server: Route,
    target: DirectHop.Target,
    request: IncomingMessage,
    response: ServerResponse,
    app: (request: IncomingMessage, response: ServerResponse) => void
  ) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    // A client that goes away before its body ended has nothing to be answered.
    request.on("error", () => response.destroy())
    request.on("end", () => {
      // Passed on as bytes: only a request handed to the handler needs its text.
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
      const abandon = hop.exchange(target, "POST", request.url!, request.headers, body, (result) => {
        response.off("close", abandon)
        if (result._tag !== "Reply" || result.stream !== undefined) {
          attempts.set(request, { target, body: body.toString("utf8"), result })
          return app(request, response)
        }
        server.countForwarded()
        if (result.contentType === undefined) {
          response.writeHead(result.status, result.headers)
          return response.end()
        }
        response.writeHead(result.status, {
          ...result.headers,
          "content-type": result.contentType,
          "content-length": result.body.byteLength
        })
        response.end(result.body)
      })
      response.once("close", abandon)
    })
  }

  return {
    attemptOf: (request) => attempts.get(request.source),
    filter: (server) => (request, response, app) => {
      if (request.method !== "POST") return false
      const headers = request.headers
      const sessionId = headers[McpHeaders.SESSION_ID]
      if (typeof sessionId !== "string" || headers[ClusterHeaders.HOP] !== undefined) return false
      // Framed by its length and within the limit: a chunked or too large body is the handler's to refuse.
      const length = headers["content-length"]
      if (length === undefined || !(Number(length) <= options.maxBodyBytes)) return false
      const url = request.url ?? ""
      const query = url.indexOf("?")
      if ((query < 0 ? url : url.slice(0, query)) !== options.path) return false
      const target = server.directRoute(sessionId)
      if (target === undefined) return false
      relay(server, target, request, response, app)
      return true
    }
  }
}
