/**
 * The owner's side of the direct hop on Node: a TCP listener on the runner's
 * host that other runners connect to (hopWire.ts frames), each connection
 * proving it comes from a runner with this process's secret before anything
 * else. Each exchange is served by the clustered server's handler as the
 * same request would be from the endpoint, without Node's HTTP parser or
 * effect's HTTP server around it: the owner's cost per forwarded call.
 *
 * A connection carries one exchange at a time. When it closes during an
 * exchange (the receiving process's client went away, or that process was
 * lost) the exchange's fiber is interrupted, as effect's HTTP server
 * interrupts a handler whose client disconnected.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as HttpBody from "effect/http/HttpBody"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpMethod from "effect/http/HttpMethod"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Stream from "effect/Stream"
import { createServer, type Socket } from "node:net"
import * as DirectHop from "../DirectHop.ts"
import * as ClusterHeaders from "./headers.ts"
import * as Wire from "./hopWire.ts"
import { ioTimeout } from "./ioTimeout.ts"

/** How the owner serves one request (the clustered server's handler), and the fibers it runs in. */
export interface Serve {
  readonly handler: (
    request: HttpServerRequest.HttpServerRequest
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse>
  readonly runFork: <A, E>(effect: Effect.Effect<A, E>) => Fiber.Fiber<A, E>
}

/** A listening hop server. */
export interface HopServer {
  /** The port it listens on. */
  readonly port: number
  /** Serves exchanges from now on; those that came before wait for it. */
  readonly serve: (serve: Serve) => void
  /** Stops listening and closes every connection. */
  readonly close: () => void
}

/** How long (ms) a connection may stay silent before its `Hello`: a runner sends it at once. */
const HELLO_TIMEOUT_MS = 5_000

/**
 * How long (ms) a connection may stay idle between exchanges before the owner closes it: longer
 * than a receiving process keeps one idle (2 s, nodeHop.ts), which closes it first, so an
 * exchange is never written on a connection the owner is closing; this only ends the connections
 * of a process that stopped without closing them.
 */
const IDLE_TIMEOUT_MS = 30_000

/** The request a `Request` frame carries, or undefined when it is not one (a runner never sends such). */
const requestOf = (payload: Buffer): HttpServerRequest.HttpServerRequest | undefined => {
  try {
    const { head, body } = Wire.readRequest(payload)
    const method = head.method
    if (!HttpMethod.isHttpMethod(method)) return undefined
    const headers = head.headers
    const client = HttpClientRequest.make(method)(`http://hop${head.url}`, {
      headers,
      // The body's type is the request's own (the body would otherwise set `application/octet-stream`).
      body: body.length === 0 ? HttpBody.empty : HttpBody.uint8Array(body, headers["content-type"])
    })
    // An absolute URL: `fromClientRequest` parses it once, where a relative one costs a thrown error.
    return HttpServerRequest.fromClientRequest(client).modify({ url: head.url })
  } catch {
    return undefined
  }
}

/** Headers of a reply the frames carry themselves (the body's type and length) or that belong to one HTTP connection. */
const framed = new Set([...ClusterHeaders.OF_ONE_CONNECTION, "content-type", "date"])

const headersOf = (response: HttpServerResponse.HttpServerResponse): Record<string, string> => {
  const headers: Record<string, string> = {}
  const given = response.headers as Record<string, string>
  for (const name in given) if (!framed.has(name)) headers[name] = given[name]!
  return headers
}

/** The reply frames of a response: its head, then its body whole or as it streams. */
const reply = (socket: Socket, response: HttpServerResponse.HttpServerResponse): Effect.Effect<void> => {
  const headers = headersOf(response)
  const body = response.body
  const whole = (contentType: string | undefined, bytes?: Uint8Array | string) =>
    void socket.write(Wire.reply({ status: response.status, headers, contentType, streamed: false }, bytes))
  switch (body._tag) {
    case "Uint8Array":
      return Effect.sync(() => whole(body.contentType, body.body))
    case "Stream": {
      // Only an event stream is relayed as it comes: any other body (JSON sent headers first) is one
      // message, sent whole, so the receiving process answers it from its fast path.
      if (!body.contentType.startsWith("text/event-stream")) {
        return Effect.matchCause(Stream.mkUint8Array(body.stream), {
          onSuccess: (bytes) => whole(body.contentType, bytes),
          // The body failed before its end: the receiving process answers the exchange as lost, as for a cut reply.
          onFailure: () => void socket.destroy()
        })
      }
      const head = { status: response.status, headers, contentType: body.contentType, streamed: true }
      return Effect.suspend(() => {
        socket.write(Wire.reply(head))
        return Stream.runForEach(body.stream, (chunk) =>
          // Waits for the connection to take the chunk: a slow reader holds the stream back, not this heap.
          socket.write(Wire.frame(Wire.Kind.Chunk, chunk))
            ? Effect.void
            : Effect.callback<void>((resume) => {
                socket.once("drain", () => resume(Effect.void))
              })
        ).pipe(
          Effect.matchCause({
            onSuccess: () => void socket.write(Wire.frame(Wire.Kind.End)),
            onFailure: (cause) => {
              if (!Cause.hasInterruptsOnly(cause)) socket.write(Wire.frame(Wire.Kind.Cut))
            }
          })
        )
      })
    }
    case "Raw": {
      const raw = body.body
      const bytes = typeof raw === "string" ? raw : raw instanceof Uint8Array ? raw : undefined
      // A body of another kind (a web stream...) the endpoint never answers with: answered as lost.
      if (bytes === undefined) return Effect.sync(() => void socket.destroy())
      return Effect.sync(() => whole(body.contentType, bytes))
    }
    default:
      return Effect.sync(() => whole(undefined))
  }
}

/** Listens on `host` (port 0: any free one) for runners that know `secret`. */
export const listen = (host: string, secret: string): Effect.Effect<HopServer> =>
  Effect.callback<HopServer>((resume) => {
    let serve: Serve | undefined
    const waiting: Array<() => void> = []
    const sockets = new Set<Socket>()

    const exchange = (socket: Socket, request: HttpServerRequest.HttpServerRequest): Fiber.Fiber<void> => {
      const fiber = serve!.runFork(
        Effect.matchCauseEffect(serve!.handler(request), {
          onSuccess: (response) => reply(socket, response),
          // A defect (the handler fails with none): the receiving process answers the exchange as lost.
          onFailure: () => Effect.sync(() => void socket.destroy())
        })
      )
      return fiber
    }

    const server = createServer((socket) => {
      sockets.add(socket)
      socket.setNoDelay(true)
      let hello = false
      // An exchange was taken and has not ended; `running` its fiber once it waits for something.
      let busy = false
      let running: Fiber.Fiber<unknown, unknown> | undefined
      // After this turn's I/O: a `Hello` that came while the process was busy is read (ioTimeout.ts).
      const timer = ioTimeout(HELLO_TIMEOUT_MS, () => socket.destroy())
      socket.setTimeout(IDLE_TIMEOUT_MS, () => {
        if (!busy) socket.destroy()
      })
      const onFrame = (frame: Wire.Frame) => {
        if (!hello) {
          timer.clear()
          if (frame.kind !== Wire.Kind.Hello || !DirectHop.isSecret(secret, frame.payload.toString("utf8"))) {
            return void socket.destroy()
          }
          hello = true
          // Before any request is read: the other side learns that what it sends from now on may run.
          socket.write(Wire.frame(Wire.Kind.Welcome))
          return
        }
        // One exchange at a time: anything else is not a runner speaking this protocol.
        if (frame.kind !== Wire.Kind.Request || busy) return void socket.destroy()
        const request = requestOf(frame.payload)
        if (request === undefined) return void socket.destroy()
        busy = true
        const start = () => {
          if (socket.destroyed) return
          const fiber = exchange(socket, request)
          // Most exchanges end before runFork returns (nothing to wait for).
          if (fiber.pollUnsafe() !== undefined) {
            busy = false
            return
          }
          running = fiber
          fiber.addObserver(() => {
            busy = false
            running = undefined
          })
        }
        if (serve === undefined) waiting.push(start)
        else start()
      }
      socket.on(
        "data",
        Wire.reader(onFrame, () => socket.destroy())
      )
      socket.on("error", () => {})
      socket.on("close", () => {
        timer.clear()
        sockets.delete(socket)
        if (running !== undefined) Effect.runFork(Fiber.interrupt(running))
      })
    })
    server.once("error", (error) => resume(Effect.die(error)))
    server.listen(0, host, () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resume(
        Effect.succeed({
          port,
          serve: (given) => {
            serve = given
            for (const start of waiting.splice(0)) start()
          },
          close: () => {
            server.close()
            for (const socket of sockets) socket.destroy()
          }
        })
      )
    })
  })
