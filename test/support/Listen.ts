/** An HTTP server on 127.0.0.1 at a free port, closed (connections included) with the scope. */
import * as http from "node:http"
import * as Effect from "effect/Effect"

/** Listens with `handler`; the scope closes the server and its open connections. */
export const listen = (handler: http.RequestListener) =>
  Effect.acquireRelease(
    Effect.callback<http.Server>((resume) => {
      const server = http.createServer(handler)
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )
