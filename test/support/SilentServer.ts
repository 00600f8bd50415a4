/**
 * A misbehaving MCP server for deadline tests: an HTTP server on 127.0.0.1
 * (port 0) that takes every request and never answers it, or (`sse`) sends
 * the headers of an event stream and then nothing. Closed with the scope.
 */
import type * as http from "node:http"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import { listen } from "./Listen.ts"

/** A silent server. */
export interface SilentServer {
  /** `http://127.0.0.1:<port>/mcp` */
  readonly url: string
  readonly server: http.Server
  /** Completed by the first request, with its arrival time (Date.now()): a client is then waiting on it. */
  readonly requested: Deferred.Deferred<number>
}

/** Starts a silent server in the scope: `sse` sends event-stream headers before falling silent. */
export const make = (sse: boolean): Effect.Effect<SilentServer, never, Scope.Scope> =>
  Effect.gen(function* () {
    const requested = Deferred.makeUnsafe<number>()
    const server = yield* listen((_request, response) => {
      if (sse) {
        response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
        response.flushHeaders()
      }
      Deferred.doneUnsafe(requested, Exit.succeed(Date.now()))
    })
    const { port } = server.address() as { readonly port: number }
    return { url: `http://127.0.0.1:${port}/mcp`, server, requested }
  })
