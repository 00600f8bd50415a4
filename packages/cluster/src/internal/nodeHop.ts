/**
 * The direct hop's client on Node (see DirectHop.ts): connections to the
 * owners' hop listeners (hopServer.ts), kept open between exchanges, one
 * exchange at a time on each, in hopWire.ts frames: no HTTP client or parser
 * on a forwarded call. A JSON reply is read whole; an SSE reply is piped back
 * as it arrives, the connection paused while its reader falls behind.
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { connect, type Socket } from "node:net"
import { PassThrough } from "node:stream"
import type * as DirectHop from "../DirectHop.ts"
import * as ClusterHeaders from "./headers.ts"
import * as Wire from "./hopWire.ts"
import { ioTimeout } from "./ioTimeout.ts"

const unsent: DirectHop.Result = { _tag: "Unsent" }
const refused: DirectHop.Result = { _tag: "Refused" }
const lost: DirectHop.Result = { _tag: "Lost" }
const empty = new Uint8Array(0)

/** How long (ms) an idle connection to an owner is kept. */
const IDLE_MS = 2_000

/**
 * How long (ms) a new connection to an owner may take. Runners share a network, where a handshake
 * takes well under a millisecond, and a machine that does not answer (a partition drops its SYNs)
 * would hold the exchange for the OS connect timeout (about two minutes on Linux). A second is the
 * first SYN retransmission: past it the owner is taken as unreachable and, nothing having been
 * sent, the exchange is located again (it waits for the shard to move) at the cost of that second.
 */
export const CONNECT_TIMEOUT_MS = 1_000

/** The owner's reply stream was cut before its end: the owner was lost. */
class Cut extends Error {
  constructor() {
    super("the runner owning the session was lost before its reply ended")
  }
}

/** A client's headers the hop does not carry: those of its own connection, and `expect` (the hop sends the whole body at once). */
const notCarried = new Set([...ClusterHeaders.OF_ONE_CONNECTION, "expect"])

/** Headers as a client sent them: an exchange's, or Node's parsed ones (a repeated header an array). */
export type ClientHeaders = { readonly [name: string]: string | ReadonlyArray<string> | undefined }

/**
 * Headers of the hop's request: the client's without the private ones (a
 * runner's to set) and those of the client's own connection and its framing,
 * repeated ones joined; then what the receiving process says (`said`, in
 * private headers). (The secret goes once per connection, in its `Hello`.)
 */
export const hopHeaders = (clientHeaders: ClientHeaders, said?: Record<string, string>): Record<string, string> => {
  // One copy, built whole: deleting a property afterwards would turn the object into a slower dictionary.
  const headers: Record<string, string> = {}
  for (const name in clientHeaders) {
    const value = clientHeaders[name]
    if (value === undefined || ClusterHeaders.PRIVATE.has(name) || notCarried.has(name)) continue
    headers[name] = typeof value === "string" ? value : value.join(", ")
  }
  if (said !== undefined) {
    for (const name in said) headers[name] = said[name]!
  }
  return headers
}

/** What one exchange does with the frames of its connection. */
interface Exchange {
  readonly frame: (frame: Wire.Frame) => void
  /** The connection closed; `welcomed`: the owner had taken it (the request may have reached the owner). */
  readonly closed: (welcomed: boolean) => void
}

/** A connection to one owner. */
interface Connection {
  readonly socket: Socket
  readonly origin: string
  /** The owner answered the connection's `Hello`: what is written on it from then on may run. */
  welcomed: boolean
  current: Exchange | undefined
  idle: ReturnType<typeof setTimeout> | undefined
}

/** The direct hop on Node, with the callback form the Node relay (nodeRelay.ts) uses. */
export interface NodeHop extends DirectHop.DirectHop {
  /**
   * Sends a request to `target` (`headers` as the client sent them, their
   * private ones dropped; `said`, what this process says of it, added) and
   * calls `settle` once with the result; the function returned abandons the
   * request (the client went away).
   */
  readonly exchange: (
    target: DirectHop.Target,
    method: string,
    url: string,
    headers: ClientHeaders,
    body: string | Uint8Array,
    settle: (result: DirectHop.Result) => void,
    said?: Record<string, string>
  ) => () => void
  /** Drops the idle connections. */
  readonly close: () => void
}

/**
 * The hop of this process, `self` being its own hop listener; a connection
 * not made within `connectTimeoutMs` (default `CONNECT_TIMEOUT_MS`) is `Unsent`.
 */
export const make = (self: DirectHop.Target, connectTimeoutMs: number = CONNECT_TIMEOUT_MS): NodeHop => {
  // Idle connections per owner, the warmest last (reused first).
  const idle = new Map<string, Array<Connection>>()
  const all = new Set<Connection>()

  // Parsed once per owner: a URL string per request would be parsed each time. A runner's hop port
  // is new at each start, so the map is cleared when it grows past what any cluster has.
  const addresses = new Map<string, { readonly host: string; readonly port: number }>()
  const addressOf = (origin: string) => {
    let address = addresses.get(origin)
    if (address === undefined) {
      const url = new URL(origin)
      // An IPv6 literal comes bracketed in a URL, bare in a socket address.
      address = { host: url.hostname.replace(/^\[(.*)\]$/, "$1"), port: Number(url.port) }
      if (addresses.size >= 1024) addresses.clear()
      addresses.set(origin, address)
    }
    return address
  }

  const release = (connection: Connection) => {
    connection.current = undefined
    const list = idle.get(connection.origin)
    if (list === undefined) idle.set(connection.origin, [connection])
    else list.push(connection)
    connection.idle = setTimeout(() => {
      // Out of the pool at once: the close comes a tick later, and an exchange taking the connection
      // in between would be written on a destroyed socket and read as lost.
      forget(connection)
      connection.socket.destroy()
    }, IDLE_MS)
  }

  const forget = (connection: Connection) => {
    all.delete(connection)
    if (connection.idle !== undefined) clearTimeout(connection.idle)
    const list = idle.get(connection.origin)
    if (list === undefined) return
    const at = list.indexOf(connection)
    if (at >= 0) list.splice(at, 1)
    if (list.length === 0) idle.delete(connection.origin)
  }

  const open = (target: DirectHop.Target): Connection => {
    const { host, port } = addressOf(target.origin)
    const socket = connect({ host, port, noDelay: true })
    const connection: Connection = {
      socket,
      origin: target.origin,
      welcomed: false,
      current: undefined,
      idle: undefined
    }
    all.add(connection)
    // After this turn's I/O: a connect that completed while the process was busy is kept (ioTimeout.ts).
    const timer = ioTimeout(connectTimeoutMs, () => socket.destroy())
    socket.once("connect", () => {
      timer.clear()
    })
    // Written before the connection is made: Node sends it first once it is.
    socket.write(Wire.frame(Wire.Kind.Hello, target.secret))
    socket.on(
      "data",
      Wire.reader(
        (frame) => {
          if (connection.welcomed) return connection.current?.frame(frame)
          // The owner's first word is its welcome; anything else is not a runner that took the secret.
          if (frame.kind === Wire.Kind.Welcome) connection.welcomed = true
          else socket.destroy()
        },
        () => socket.destroy()
      )
    )
    socket.on("error", () => {})
    socket.on("close", () => {
      timer.clear()
      forget(connection)
      const current = connection.current
      connection.current = undefined
      current?.closed(connection.welcomed)
    })
    return connection
  }

  const take = (target: DirectHop.Target): Connection => {
    const list = idle.get(target.origin)
    let connection = list?.pop()
    // One the owner closed may wait for its close event here: never written on.
    while (connection !== undefined && (connection.socket.destroyed || !connection.socket.writable)) {
      forget(connection)
      connection = list?.pop()
    }
    if (list !== undefined && list.length === 0) idle.delete(target.origin)
    if (connection === undefined) return open(target)
    clearTimeout(connection.idle)
    connection.idle = undefined
    return connection
  }

  const exchange: NodeHop["exchange"] = (target, method, url, clientHeaders, body, resume, said) => {
    let settled = false
    const settle = (result: DirectHop.Result) => {
      if (settled) return
      settled = true
      resume(result)
    }
    const head: Wire.RequestHead = { method, url, headers: hopHeaders(clientHeaders, said) }
    const connection = take(target)
    const socket = connection.socket
    // A streamed reply's body, once its head came.
    let piped: PassThrough | undefined
    let complete = false
    connection.current = {
      frame: (frame) => {
        switch (frame.kind) {
          case Wire.Kind.Head: {
            let reply: { readonly head: Wire.ReplyHead; readonly body: Buffer }
            try {
              reply = Wire.readReply(frame.payload)
            } catch {
              // Not a head an owner writes: the connection cannot be trusted further (the exchange is lost).
              return void socket.destroy()
            }
            const { head, body } = reply
            if (head.headers[ClusterHeaders.HOP_REFUSED] !== undefined) {
              release(connection)
              return settle(refused)
            }
            if (!head.streamed) {
              release(connection)
              return settle({
                _tag: "Reply",
                status: head.status,
                headers: head.headers,
                contentType: head.contentType,
                body,
                stream: undefined
              })
            }
            const out = new PassThrough()
            piped = out
            out.setEncoding("utf8")
            // The reader stopped before the end (its client went away): the owner's exchange is interrupted.
            out.on("close", () => {
              if (!complete) socket.destroy()
            })
            const arriving = NodeStream.fromReadable<string, unknown>({ evaluate: () => out, onError: (e) => e })
            // A stream that ends without its last chunk ended with its owner.
            const stream = Stream.concat(
              arriving,
              Stream.suspend(() => (complete ? Stream.empty : Stream.fail(new Cut())))
            )
            return settle({
              _tag: "Reply",
              status: head.status,
              headers: head.headers,
              contentType: head.contentType,
              body: empty,
              stream
            })
          }
          case Wire.Kind.Chunk:
            // Held back while the reader is behind: the owner's stream waits for the connection.
            if (piped !== undefined && !piped.write(Buffer.from(frame.payload))) {
              socket.pause()
              piped.once("drain", () => socket.resume())
            }
            return
          case Wire.Kind.End:
            complete = true
            release(connection)
            return void piped?.end()
          default:
            // A cut stream (or a frame out of place): this connection's exchange is over, and so is the connection.
            socket.destroy()
        }
      },
      closed: (welcomed) => {
        if (piped !== undefined) return void piped.end()
        // Before a connection there is no exchange: the caller may send it another way.
        settle(welcomed ? lost : unsent)
      }
    }
    socket.write(Wire.request(head, method === "POST" ? body : empty))
    // Once settled the reply is the caller's (a connection back in the pool must not be destroyed).
    return () => {
      if (settled) return
      settled = true
      socket.destroy()
    }
  }

  const send = (target: DirectHop.Target, request: DirectHop.Request) =>
    Effect.callback<DirectHop.Result>((resume) => {
      const abandon = exchange(
        target,
        request.method,
        request.url,
        request.headers,
        request.body,
        (result) => resume(Effect.succeed(result)),
        request.said
      )
      return Effect.sync(abandon)
    })

  return {
    self,
    send,
    exchange,
    close: () => {
      for (const connection of all) connection.socket.destroy()
    }
  }
}
