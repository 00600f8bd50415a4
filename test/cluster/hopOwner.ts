/**
 * A runner's endpoint as the direct hop sees it, for the hop's and the
 * relay's tests: a plain Node HTTP server on 127.0.0.1 that records each
 * request and answers it as the test says.
 */
import * as Effect from "effect/Effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type * as DirectHop from "../../packages/cluster/src/DirectHop.ts"

export interface Seen {
  readonly method: string | undefined
  readonly url: string | undefined
  readonly headers: IncomingMessage["headers"]
  readonly body: string
}

export interface Owner {
  readonly target: DirectHop.Target
  readonly seen: Array<Seen>
  readonly server: Server
}

/** An owner's endpoint on 127.0.0.1:0 answering with `reply`; closed with the scope. */
export const owner = (reply: (request: Seen, response: ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.callback<Owner>((resume) => {
      const seen: Array<Seen> = []
      const server = createServer((request, response) => {
        let body = ""
        request.setEncoding("utf8")
        request.on("data", (chunk: string) => (body += chunk))
        request.on("end", () => {
          const one = { method: request.method, url: request.url, headers: request.headers, body }
          seen.push(one)
          reply(one, response)
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
        resume(Effect.succeed({ target: { origin, secret: "s3cret" }, seen, server }))
      })
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )
