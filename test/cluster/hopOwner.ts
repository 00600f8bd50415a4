/**
 * A runner's endpoint as the direct hop sees it, for the hop's and the
 * relay's tests: a plain Node HTTP server on 127.0.0.1 that records each
 * request and answers it as the test says, or an endpoint whose machine does
 * not answer at all.
 */
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { type AddressInfo, connect, type Socket } from "node:net"
import type * as DirectHop from "../../packages/cluster/src/DirectHop.ts"
import type * as Scope from "effect/Scope"

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

/**
 * A process that listens on 127.0.0.1 with a backlog of one and then never
 * accepts (its only thread waits on a lock nobody releases); a listener's
 * accept queue holds backlog + 1 connections.
 */
const stalled = `
const server = require("node:net").createServer()
server.listen({ port: 0, host: "127.0.0.1", backlog: 1 }, () => {
  require("node:fs").writeSync(1, server.address().port + "\\n")
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)
})`

const destroyAll = (sockets: ReadonlyArray<Socket>) => () => {
  for (const socket of sockets) socket.destroy()
}

/**
 * An endpoint that drops SYNs, as a partitioned machine does: a process that
 * stopped accepting, its accept queue filled by two plain connections, so that
 * the kernel drops every later SYN and a connect waits for the OS's timeout
 * (minutes). Killed with the scope.
 */
export const unanswering: Effect.Effect<DirectHop.Target, Error, Scope.Scope> = Effect.acquireRelease(
  Effect.callback<{ readonly port: number; readonly kill: () => void }, Error>((resume) => {
    const child = spawn(process.execPath, ["-e", stalled], { stdio: ["ignore", "pipe", "inherit"] })
    const kill = () => child.kill("SIGKILL")
    child.once("error", (error) => resume(Effect.fail(error)))
    child.stdout.once("data", (line: Buffer) => resume(Effect.succeed({ port: Number(String(line).trim()), kill })))
    return Effect.sync(kill)
  }),
  ({ kill }) => Effect.sync(kill)
).pipe(
  Effect.flatMap(({ port }) =>
    Effect.acquireRelease(
      Effect.callback<Array<Socket>, Error>((resume) => {
        const sockets = [connect(port, "127.0.0.1"), connect(port, "127.0.0.1")]
        let waiting = sockets.length
        for (const socket of sockets) {
          socket.once("error", (error) => resume(Effect.fail(error)))
          socket.once("connect", () => {
            if (--waiting === 0) resume(Effect.succeed(sockets))
          })
        }
        return Effect.sync(destroyAll(sockets))
      }),
      (sockets) => Effect.sync(destroyAll(sockets))
    ).pipe(Effect.as({ origin: `http://127.0.0.1:${port}`, secret: "s3cret" }))
  )
)
