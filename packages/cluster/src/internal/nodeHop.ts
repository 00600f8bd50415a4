/**
 * The direct hop's client on Node (see DirectHop.ts): node:http with one
 * keep-alive agent per process, without effect's HTTP client layers (one
 * request per forwarded call is the hot path). A JSON reply is read whole into
 * one buffer; an SSE reply is piped back as it arrives.
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { Agent, type ClientRequest, type IncomingMessage, request as httpRequest } from "node:http"
import type * as DirectHop from "../DirectHop.ts"
import * as ClusterHeaders from "./headers.ts"

/**
 * Headers that belong to one connection and its framing, never passed across
 * the hop in either direction: the hop-by-hop ones (RFC 9110 7.6.1) and the
 * length, which each side sets for the body it writes.
 */
const ofOneConnection = [
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "content-length"
]

/** An owner's reply headers the receiving server sets itself (the type with the body it writes, and the date). */
const connectionHeaders = new Set([...ofOneConnection, "content-type", "date", ClusterHeaders.HOP_REFUSED])

const unsent: DirectHop.Result = { _tag: "Unsent" }
const refused: DirectHop.Result = { _tag: "Refused" }
const lost: DirectHop.Result = { _tag: "Lost" }
const empty = new Uint8Array(0)

/** How long (ms) an idle keep-alive connection to an owner is kept. */
const IDLE_MS = 2_000

/**
 * How long (ms) a new connection to an owner may take. Runners share a network, where a handshake
 * takes well under a millisecond, and a machine that does not answer (a partition drops its SYNs)
 * would hold the exchange for the OS connect timeout (about two minutes on Linux). A second is the
 * first SYN retransmission: past it the owner is taken as unreachable and, nothing having been
 * sent, the exchange is located again (it waits for the shard to move) at the cost of that second.
 */
export const CONNECT_TIMEOUT_MS = 1_000

/** The owner did not accept the connection in time: nothing was sent. */
class NotConnected extends Error {
  constructor() {
    super("the runner owning the session did not accept a connection in time")
  }
}

/** The owner's reply was cut before its end: the owner was lost. */
class Cut extends Error {
  constructor() {
    super("the runner owning the session was lost before its reply ended")
  }
}

const headersOf = (response: IncomingMessage): Record<string, string> => {
  const headers: Record<string, string> = {}
  const parsed = response.headers
  for (const name in parsed) {
    const value = parsed[name]
    if (value === undefined || connectionHeaders.has(name)) continue
    headers[name] = Array.isArray(value) ? value.join(", ") : value
  }
  return headers
}

/** A client's headers the hop does not carry: those of its own connection, and `expect` (the hop sends the whole body at once). */
const notCarried = new Set([...ofOneConnection, "expect"])

/** Headers as a client sent them: an exchange's, or Node's parsed ones (a repeated header an array). */
export type ClientHeaders = { readonly [name: string]: string | ReadonlyArray<string> | undefined }

/**
 * Headers of the hop's request: the client's without the private ones (a
 * runner's to set), those of the client's own connection and its framing
 * (the length set here, for the body sent), repeated ones joined, and the secret.
 */
export const hopHeaders = (
  clientHeaders: ClientHeaders,
  secret: string,
  body: string | Uint8Array | undefined
): Record<string, string | number> => {
  // One copy, built whole: deleting a property afterwards would turn the object into a slower dictionary.
  const headers: Record<string, string | number> = {}
  for (const name in clientHeaders) {
    const value = clientHeaders[name]
    if (value === undefined || ClusterHeaders.PRIVATE.has(name) || notCarried.has(name)) continue
    headers[name] = typeof value === "string" ? value : value.join(", ")
  }
  headers[ClusterHeaders.HOP] = secret
  if (body !== undefined)
    headers["content-length"] = typeof body === "string" ? Buffer.byteLength(body) : body.byteLength
  return headers
}

/**
 * Destroys `request` (with `NotConnected`) when its connection is not made
 * within `timeoutMs`; calls `connected` once it is (at once for a pooled one).
 */
const boundConnect = (request: ClientRequest, timeoutMs: number, connected: () => void): void => {
  request.on("socket", (socket) => {
    if (!socket.connecting) return connected()
    const timer = setTimeout(() => request.destroy(new NotConnected()), timeoutMs)
    socket.once("connect", () => {
      clearTimeout(timer)
      connected()
    })
    socket.once("close", () => clearTimeout(timer))
  })
}

/** The direct hop on Node, with the callback form the Node relay (nodeRelay.ts) uses. */
export interface NodeHop extends DirectHop.DirectHop {
  /**
   * Sends a request to `target` (`headers` as the client sent them, the
   * secret added here) and calls `settle` once with the result; the function
   * returned abandons the request (the client went away).
   */
  readonly exchange: (
    target: DirectHop.Target,
    method: string,
    url: string,
    headers: ClientHeaders,
    body: string | Uint8Array,
    settle: (result: DirectHop.Result) => void
  ) => () => void
  /** Drops the idle connections. */
  readonly close: () => void
}

/**
 * The hop of this process, `self` being its own endpoint; a connection not
 * made within `connectTimeoutMs` (default `CONNECT_TIMEOUT_MS`) is `Unsent`.
 */
export const make = (self: DirectHop.Target, connectTimeoutMs: number = CONNECT_TIMEOUT_MS): NodeHop => {
  // LIFO reuses the warmest connection. An idle one is closed after 2 s, well before the owner's
  // server closes it (5 s): a request written on a connection the owner is closing would fail
  // as if the owner were lost (Node's agent keeps it until it sees the close, up to 6 s).
  const agent = new Agent({ keepAlive: true, scheduling: "lifo", timeout: IDLE_MS })

  // Parsed once per owner: a URL string per request would be parsed each time.
  const addresses = new Map<string, { readonly hostname: string; readonly port: string }>()
  const addressOf = (origin: string) => {
    let address = addresses.get(origin)
    if (address === undefined) {
      const url = new URL(origin)
      // An IPv6 literal comes bracketed in a URL, bare in a socket address.
      address = { hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"), port: url.port || "80" }
      addresses.set(origin, address)
    }
    return address
  }

  const exchange: NodeHop["exchange"] = (target, method, url, clientHeaders, body, resume) => {
    let connected = false
    let settled = false
    const settle = (result: DirectHop.Result) => {
      if (settled) return
      settled = true
      resume(result)
    }
    const sent = method === "POST" ? body : undefined
    const headers = hopHeaders(clientHeaders, target.secret, sent)
    const { hostname, port } = addressOf(target.origin)
    let outgoing: ClientRequest
    try {
      outgoing = httpRequest({ hostname, port, path: url, method, headers, agent })
    } catch {
      // node:http refuses some requests by throwing (a client's `Trailer` header did, before such headers
      // were left out): thrown in the relay's request handler it would end the process. The request is
      // answered once with an error, never sent again, and the owner is not taken as gone. Settled once
      // this call has returned: the caller has not yet kept the function that abandons it.
      queueMicrotask(() => settle(lost))
      return () => {
        settled = true
      }
    }
    boundConnect(outgoing, connectTimeoutMs, () => {
      connected = true
    })
    // Before a connection there is no exchange: the caller may send it another way.
    outgoing.on("error", () => settle(connected ? lost : unsent))
    outgoing.on("response", (response) => {
      if (response.headers[ClusterHeaders.HOP_REFUSED] !== undefined) {
        response.resume()
        return settle(refused)
      }
      const status = response.statusCode ?? 502
      const contentType = response.headers["content-type"]
      // Only an event stream is piped: any other body (JSON) is one message, read whole.
      if (contentType === undefined || !contentType.startsWith("text/event-stream")) {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("error", () => settle(lost))
        response.on("close", () => {
          if (!response.complete) return settle(lost)
          const whole = chunks.length === 0 ? empty : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
          settle({ _tag: "Reply", status, headers: headersOf(response), contentType, body: whole, stream: undefined })
        })
        return
      }
      response.setEncoding("utf8")
      const arriving = NodeStream.fromReadable<string, unknown>({ evaluate: () => response, onError: (e) => e })
      // A stream that ends without its last chunk ended with its owner.
      const stream = Stream.concat(
        arriving,
        Stream.suspend(() => (response.complete ? Stream.empty : Stream.fail(new Cut())))
      )
      settle({ _tag: "Reply", status, headers: headersOf(response), contentType, body: empty, stream })
    })
    outgoing.end(sent)
    // Once settled the reply is the caller's (a socket back in the pool must not be destroyed).
    return () => {
      if (settled) return
      settled = true
      outgoing.destroy()
    }
  }

  const send = (target: DirectHop.Target, request: DirectHop.Request) =>
    Effect.callback<DirectHop.Result>((resume) => {
      const abandon = exchange(target, request.method, request.url, request.headers, request.body, (result) =>
        resume(Effect.succeed(result))
      )
      return Effect.sync(abandon)
    })

  return { self, send, exchange, close: () => agent.destroy() }
}
