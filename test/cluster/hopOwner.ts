/**
 * A runner's hop listener as the direct hop's client sees it, for the hop's
 * and the relay's tests: a plain Node TCP server on 127.0.0.1 that speaks the
 * hop's frames (packages/cluster internal/hopWire.ts), records each request
 * and answers it as the test says through a small response object (the subset
 * of Node's `ServerResponse` the tests use), or an endpoint whose machine
 * does not answer at all.
 */
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net"
import type * as DirectHop from "../../packages/cluster/src/DirectHop.ts"
import * as Wire from "../../packages/cluster/src/internal/hopWire.ts"
import type * as Scope from "effect/Scope"

export interface Seen {
  readonly method: string
  readonly url: string
  readonly headers: Record<string, string | undefined>
  readonly body: string
}

/** How a test answers: a status line and headers, then the body whole or (an event stream) piece by piece. */
export class Response {
  private streamed = false
  private status = 200
  private headers: Record<string, string> = {}
  private contentType: string | undefined
  private readonly pieces: Array<string> = []
  readonly socket: Socket
  constructor(socket: Socket) {
    this.socket = socket
  }
  writeHead(status: number, headers: Record<string, string> = {}): this {
    this.status = status
    for (const [name, value] of Object.entries(headers)) {
      if (name.toLowerCase() === "content-type") this.contentType = value
      else this.headers[name.toLowerCase()] = value
    }
    if (this.contentType?.startsWith("text/event-stream")) {
      this.streamed = true
      this.socket.write(Wire.reply(this.head()))
    }
    return this
  }
  write(piece: string): void {
    if (this.streamed) this.socket.write(Wire.frame(Wire.Kind.Chunk, piece))
    else this.pieces.push(piece)
  }
  end(piece?: string): void {
    if (piece !== undefined) this.write(piece)
    this.socket.write(this.streamed ? Wire.frame(Wire.Kind.End) : Wire.reply(this.head(), this.pieces.join("")))
  }
  /** `close`: the connection closed (the hop was abandoned, or the test cut it). */
  on(_event: "close", listener: () => void): void {
    this.socket.once("close", listener)
  }
  private head(): Wire.ReplyHead {
    return { status: this.status, headers: this.headers, contentType: this.contentType, streamed: this.streamed }
  }
}

export interface Owner {
  readonly target: DirectHop.Target
  readonly seen: Array<Seen>
  /** The secrets the connections opened with. */
  readonly hellos: Array<string>
  readonly server: Server
}

// The connections of each owner's listener, destroyed with it.
const connections = new WeakMap<Server, Set<Socket>>()

/** An owner's hop listener on 127.0.0.1:0 answering with `reply`; closed with the scope. */
export const owner = (reply: (request: Seen, response: Response) => void) =>
  Effect.acquireRelease(
    Effect.callback<Owner>((resume) => {
      const seen: Array<Seen> = []
      const hellos: Array<string> = []
      const sockets = new Set<Socket>()
      const server = createServer((socket) => {
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
        socket.on("error", () => {})
        socket.on(
          "data",
          Wire.reader(
            (frame) => {
              if (frame.kind === Wire.Kind.Hello) {
                hellos.push(frame.payload.toString("utf8"))
                return void socket.write(Wire.frame(Wire.Kind.Welcome))
              }
              const { head, body } = Wire.readRequest(frame.payload)
              const one = {
                method: head.method,
                url: head.url,
                headers: head.headers as Record<string, string>,
                body: body.toString("utf8")
              }
              seen.push(one)
              reply(one, new Response(socket))
            },
            () => socket.destroy()
          )
        )
      })
      connections.set(server, sockets)
      server.listen(0, "127.0.0.1", () => {
        const origin = `tcp://127.0.0.1:${(server.address() as AddressInfo).port}`
        resume(
          Effect.succeed({
            target: { origin, secret: "s3cret" },
            seen,
            hellos,
            server
          })
        )
      })
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        for (const socket of connections.get(server) ?? []) socket.destroy()
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
