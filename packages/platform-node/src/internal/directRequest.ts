/**
 * Node-only (`node:http`, `node:https`): the HTTP client's path for a
 * request whose body is held in memory, the shape of every JSON-RPC POST.
 *
 * Why not effect's `makeNodeHttp` for these: per request it forks a fiber for
 * the upload and races it against the response (two more fibers), and reads
 * the body through `finished()` listeners and an `ArrayBuffer` copy. A body
 * in memory is written whole by `end()`, so there is no upload to race: one
 * callback waits for the response head, and the body is gathered from its
 * `data` events. Nor does it hand the abort signal to Node, whose `signal`
 * option watches the request with `finished()` too: a listener on the signal
 * destroys the request.
 *
 * Everything else goes to effect's client unchanged: streamed and form
 * bodies, upgrades. Both run inside `HttpClient.make`, which keeps the URL
 * checks, spans and trace propagation, scoped requests (`withScope`) and the
 * abort of a response dropped unread, unless the request is bare
 * (`@effect-mcp/http/BareRequests`): then it is sent without `make`'s
 * wrapper, which its caller does not need.
 *
 * Measured on loopback (W3's client, CPU per POST): bare `node:http` 85 µs,
 * effect's client 190 µs; this path, through `make`, 150 µs; bare, 100 µs.
 */
import { NodeHttpIncomingMessage } from "@effect/platform-node/NodeHttpIncomingMessage"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Cookies from "effect/http/Cookies"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import type * as Socket from "effect/socket/Socket"
import { pipeArguments } from "effect/Pipeable"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import * as BareRequests from "@effect-mcp/http/BareRequests"
import type * as Http from "node:http"
import * as NodeHttp from "node:http"
import type * as Https from "node:https"
import * as NodeHttps from "node:https"
import { Readable } from "node:stream"

/** The agents requests go through: keep-alive pools closed with the client's layer. */
export interface Agents {
  readonly http: Http.Agent
  readonly https: Https.Agent
}

const transportError = (request: HttpClientRequest.HttpClientRequest, cause: unknown) =>
  new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request, cause }) })

/** A body `end()` writes whole, on a request that asks for no protocol switch. */
const isDirect = (request: HttpClientRequest.HttpClientRequest): boolean => {
  const tag = request.body._tag
  return (tag === "Empty" || tag === "Uint8Array") && request.headers.upgrade === undefined
}

/** Error of a response whose connection closed before its body ended. */
const prematureClose = () =>
  Object.assign(new Error("the response ended early: connection closed"), { code: "ECONNRESET" })

/**
 * Reads a response's body to the end: the chunks as they come, joined once at
 * the end, bounded by `HttpIncomingMessage.MaxBodySize` when set.
 */
const readBody = (
  source: Http.IncomingMessage,
  onError: (cause: unknown) => HttpClientError.HttpClientError
): Effect.Effect<Buffer, HttpClientError.HttpClientError> =>
  Effect.withFiber((fiber) => {
    const limit = fiber.getRef(HttpIncomingMessage.MaxBodySize)
    const max = limit === undefined ? undefined : Number(limit)
    return Effect.callback<Buffer, HttpClientError.HttpClientError>((resume) => {
      const chunks: Array<Buffer> = []
      let size = 0
      const done = () => {
        source.off("data", onData)
        source.off("end", onEnd)
        source.off("error", onFail)
        source.off("close", onClose)
      }
      const onData = (chunk: Buffer) => {
        size += chunk.length
        if (max !== undefined && size > max) {
          done()
          source.destroy()
          resume(Effect.fail(onError(new Error(`the response body exceeds ${max} bytes`))))
          return
        }
        chunks.push(chunk)
      }
      const onEnd = () => {
        done()
        resume(Effect.succeed(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)))
      }
      const onFail = (cause: unknown) => {
        done()
        resume(Effect.fail(onError(cause)))
      }
      // `close` before `end`: the connection went away mid-body.
      const onClose = () => onFail(prematureClose())
      if (source.readableEnded) return resume(Effect.succeed(Buffer.alloc(0)))
      source.on("data", onData)
      source.on("end", onEnd)
      source.on("error", onFail)
      source.on("close", onClose)
      return Effect.sync(() => {
        done()
        source.destroy()
      })
    })
  })

/** A response of the direct path: effect's Node adapter, with the body gathered by `readBody`. */
class DirectResponse extends NodeHttpIncomingMessage<HttpClientError.HttpClientError> {
  readonly [HttpClientResponse.TypeId]: typeof HttpClientResponse.TypeId = HttpClientResponse.TypeId
  readonly request: HttpClientRequest.HttpClientRequest
  readonly url: string
  /** The body once a reader asked for it: every reader gets the same bytes, as with effect's adapter. */
  private body: Deferred.Deferred<Buffer, HttpClientError.HttpClientError> | undefined

  constructor(request: HttpClientRequest.HttpClientRequest, source: Http.IncomingMessage, url: string) {
    super(
      source,
      (cause) =>
        new HttpClientError.HttpClientError({
          reason: new HttpClientError.DecodeError({ request, response: this, cause })
        })
    )
    this.request = request
    this.url = url
  }

  get status(): number {
    return this.source.statusCode ?? 0
  }

  get cookies(): Cookies.Cookies {
    const header = this.source.headers["set-cookie"]
    return header === undefined ? Cookies.empty : Cookies.fromSetCookie(header)
  }

  /** The body, read once: the first reader reads it, later ones wait for what it read. */
  private get bytes(): Effect.Effect<Buffer, HttpClientError.HttpClientError> {
    return Effect.suspend(() => {
      if (this.body !== undefined) return Deferred.await(this.body)
      const body = Deferred.makeUnsafe<Buffer, HttpClientError.HttpClientError>()
      this.body = body
      return Effect.onExit(readBody(this.source, this.onError), (exit) => Deferred.done(body, exit))
    })
  }

  override get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpClientError.HttpClientError> {
    return Effect.map(
      this.bytes,
      (bytes) => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
    )
  }

  override get text(): Effect.Effect<string, HttpClientError.HttpClientError> {
    return Effect.map(this.bytes, (bytes) => bytes.toString("utf8"))
  }

  get formData(): Effect.Effect<FormData, HttpClientError.HttpClientError> {
    return Effect.tryPromise({
      try: () =>
        new Response(Readable.toWeb(this.source) as ReadableStream, {
          headers: new Headers(this.source.headers as Record<string, string>),
          status: this.status
        }).formData(),
      catch: this.onError
    })
  }

  get upgrade(): Effect.Effect<Socket.Socket, HttpClientError.HttpClientError> {
    // The direct path never asks for a protocol switch (`isDirect`).
    return Effect.fail(
      new HttpClientError.HttpClientError({
        reason: new HttpClientError.StatusCodeError({
          request: this.request,
          response: this,
          description: "no protocol switch was asked for"
        })
      })
    )
  }

  override toJSON(): unknown {
    return HttpIncomingMessage.inspect(this, {
      _id: "effect/http/HttpClientResponse",
      request: this.request.toJSON(),
      status: this.status
    })
  }

  pipe() {
    // biome-ignore lint/complexity/noArguments: the Pipeable protocol
    return pipeArguments(this, arguments)
  }
}

/**
 * What Node takes from a URL handed to `request` (its `urlToHttpOptions`:
 * the protocol, the host without an IPv6 literal's brackets, the port, the
 * path with the query, credentials), as plain options of the request. Why:
 * Node turns a `URL` into options itself on every request, at a cost. With
 * both versions loaded in one process (30 interleaved pairs of 3,000 POSTs
 * to a loopback server), these options take 5 µs of CPU per POST off a bare
 * request one at a time and 7 µs at 32 in flight, 8 and 13 µs off one sent
 * through `HttpClient.make`.
 */
const requestOptions = (
  url: URL,
  method: string,
  headers: Http.OutgoingHttpHeaders,
  agent: Http.Agent
): Http.RequestOptions => {
  const hostname = url.hostname
  const options: Http.RequestOptions = {
    protocol: url.protocol,
    hostname: hostname.charCodeAt(0) === 91 /* [ */ ? hostname.slice(1, -1) : hostname,
    path: url.pathname + url.search,
    method,
    headers,
    agent
  }
  const port = url.port
  if (port !== "") options.port = Number(port)
  if (url.username !== "" || url.password !== "") {
    options.auth = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
  }
  return options
}

/**
 * Sends a request with its body in memory and waits for the response head.
 * Interrupted before it, the request is destroyed; so it is when `signal`
 * aborts (`HttpClient.make`'s signal: an interrupted read, a scope closed, a
 * response dropped unread).
 */
const send = (
  agents: Agents,
  request: HttpClientRequest.HttpClientRequest,
  url: URL,
  signal: AbortSignal | undefined
): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> =>
  Effect.callback((resume) => {
    const outgoing =
      url.protocol === "https:"
        ? NodeHttps.request(requestOptions(url, request.method, request.headers, agents.https))
        : NodeHttp.request(requestOptions(url, request.method, request.headers, agents.http))
    const onError = (cause: unknown) => {
      outgoing.off("response", onResponse)
      resume(Effect.fail(transportError(request, cause)))
    }
    const onResponse = (response: Http.IncomingMessage) => {
      outgoing.off("error", onError)
      // A later error of the connection is the body's: `readBody` sees it on the response.
      outgoing.on("error", ignore)
      // The response's URL is the request's without its fragment (a bare request's URL has none).
      const href = url.hash === "" ? url.href : url.href.slice(0, url.href.indexOf("#"))
      resume(Effect.succeed(new DirectResponse(request, response, href)))
    }
    outgoing.on("error", onError)
    outgoing.on("response", onResponse)
    if (signal !== undefined) {
      if (signal.aborted) outgoing.destroy()
      else signal.addEventListener("abort", () => outgoing.destroy(), { once: true })
    }
    const body = request.body
    outgoing.end(body._tag === "Uint8Array" ? body.body : undefined)
    return Effect.sync(() => outgoing.destroy())
  })

const ignore = () => {}

/** A bare request this path can send without `HttpClient.make`: its URL is the request's own string. */
const isBare = (request: HttpClientRequest.HttpClientRequest): boolean =>
  isDirect(request) && request.urlParams.params.length === 0 && Option.isNone(request.hash)

/**
 * An `HttpClient` sending requests with a body in memory straight through
 * `node:http`/`node:https` on `agents`, and every other request through
 * `fallback` (effect's Node client on the same agents). A bare request
 * (`BareRequests`) skips `HttpClient.make`.
 */
export const make = (agents: Agents, fallback: HttpClient.HttpClient): HttpClient.HttpClient => {
  const wrapped = HttpClient.make((request, url, signal) =>
    isDirect(request)
      ? send(agents, request, url, signal)
      : // The span and trace headers were made by this client's own wrapper: the inner one adds none.
        Effect.provideService(fallback.execute(request), Tracer.DisablePropagation, true)
  )
  // A transport posts to one URL: the last one parsed is kept.
  let lastUrl = ""
  let lastParsed: URL | undefined
  const urlOf = (raw: string): URL | undefined => {
    if (raw === lastUrl && lastParsed !== undefined) return lastParsed
    if (!URL.canParse(raw)) return undefined
    lastUrl = raw
    lastParsed = new URL(raw)
    return lastParsed
  }
  return HttpClient.makeWith<HttpClientError.HttpClientError, never, HttpClientError.HttpClientError, never>(
    (effect) =>
      Effect.flatMap(effect, (request) =>
        Effect.withFiber((fiber) => {
          const url = fiber.getRef(BareRequests.BareRequests) && isBare(request) ? urlOf(request.url) : undefined
          return url === undefined ? wrapped.execute(request) : send(agents, request, url, undefined)
        })
      ),
    Effect.succeed
  )
}
