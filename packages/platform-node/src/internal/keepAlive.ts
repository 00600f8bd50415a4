/**
 * Node-only (`node:http`, `node:https`): the HTTP client's one rule for
 * keep-alive connections the server closed while they sat idle.
 *
 * A server closes an idle keep-alive connection when its own timeout runs
 * out (Node's `keepAliveTimeout`, 5 s by default; a proxy's, which often
 * sends no `Keep-Alive: timeout` hint). A request written on that connection
 * just before the close arrives fails with `ECONNRESET` (`socket hang up` or
 * `read ECONNRESET`) without the server ever having read it. Such a request
 * is sent again, once, on a new connection. The rule is narrow on purpose:
 * only a request that went out on a reused connection (Node's agent says so
 * through `reuseSocket`) and failed before one byte of any response came
 * back; a request that may have reached a handler is never sent twice, its
 * failure is reported. Only bodies held in memory are resent (a streamed
 * body is gone once written). Nor is a request whose connection this side
 * closed: the agent destroyed as its client closes resets its connections
 * the same way, and a request cut short then is not to go out again.
 */
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as Http from "node:http"
import * as Https from "node:https"
import type * as Net from "node:net"
import type * as Stream from "node:stream"

/** Failures of requests no byte of which can have been processed: the only ones `resendUnsent` resends. */
const unsent = new WeakSet<object>()

/** Error codes of a connection the peer closed or reset: a FIN (`socket hang up`), an RST, a write after either. */
const closedCodes = new Set(["ECONNRESET", "EPIPE"])

/**
 * Marks the failure of `request` as unsent when it comes before any response
 * byte: `bytesRead` of the socket is the same as when the request was handed
 * the connection, so the server answered nothing (not even part of a status
 * line) since the previous response ended.
 */
const watch = (agent: { readonly destroyed: boolean }, socket: Stream.Duplex, request: Http.ClientRequest): void => {
  // The agent's sockets are `net.Socket`s (TLS ones too); the type says Duplex.
  const tcp = socket as Net.Socket
  const read = tcp.bytesRead
  // Prepended so the mark is there before the client's own listener turns the error into a failure.
  request.prependOnceListener("error", (error: NodeJS.ErrnoException) => {
    if (!agent.destroyed && closedCodes.has(error.code ?? "") && tcp.bytesRead === read) unsent.add(error)
  })
}

/** Node's keep-alive agent, watching each request written on a connection it reuses. */
export class HttpAgent extends Http.Agent {
  /** Set by `destroy`: the resets that follow are this side's own doing. */
  destroyed = false
  override reuseSocket(socket: Stream.Duplex, request: Http.ClientRequest): void {
    super.reuseSocket(socket, request)
    watch(this, socket, request)
  }
  override destroy(): void {
    this.destroyed = true
    super.destroy()
  }
}

/** The same for `https:` URLs. */
export class HttpsAgent extends Https.Agent {
  /** Set by `destroy`: the resets that follow are this side's own doing. */
  destroyed = false
  override reuseSocket(socket: Stream.Duplex, request: Http.ClientRequest): void {
    super.reuseSocket(socket, request)
    watch(this, socket, request)
  }
  override destroy(): void {
    this.destroyed = true
    super.destroy()
  }
}

/** True when `error` is the failure of a request sent on a reused connection the server had already closed. */
export const isUnsent = (error: HttpClientError.HttpClientError): boolean => {
  const reason = error.reason
  if (reason._tag !== "TransportError") return false
  const body = reason.request.body._tag
  return (body === "Empty" || body === "Uint8Array") && typeof reason.cause === "object" && reason.cause !== null
    ? unsent.has(reason.cause)
    : false
}

/**
 * `client`, with a request that failed unsent (see `isUnsent`) sent once
 * more through `fresh`, a client whose agent keeps no connections, so the
 * second attempt cannot land on another stale one. The fast path adds only
 * the error handler.
 */
export const resendUnsent = (client: HttpClient.HttpClient, fresh: HttpClient.HttpClient): HttpClient.HttpClient =>
  HttpClient.transform(client, (effect, request) => Effect.catchIf(effect, isUnsent, () => fresh.execute(request)))
