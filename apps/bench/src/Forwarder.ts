/**
 * A round-robin forwarder on loopback (W8): what a load balancer without
 * sticky sessions does (or, `sticky`, one with session affinity), each
 * request to the next backend (its body read first: requests are small),
 * the reply piped back. Keep-alive on both sides,
 * so it costs one extra hop and no connects.
 */
import * as McpHeaders from "@effect-mcp/http/McpHeaders"
import { Agent, createServer, request, type Server } from "node:http"
import type { AddressInfo } from "node:net"

export interface Forwarder {
  /** The endpoint clients use, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string
  readonly close: () => Promise<void>
}

/**
 * Forwards each request to the next of `backends` (endpoint URLs), in turn;
 * with `sticky`, a request naming a session goes to the backend that opened
 * it (learned from the `Mcp-Session-Id` of its reply), as a load balancer
 * with session affinity does.
 */
export const start = (backends: ReadonlyArray<string>, options?: { readonly sticky?: boolean }): Promise<Forwarder> =>
  new Promise((resolve) => {
    const targets = backends.map((backend) => new URL(backend))
    // Idle connections close before the backends' 5 s keep-alive timeout, as a load balancer's should.
    const agent = new Agent({ keepAlive: true, maxSockets: 256, timeout: 2_000 })
    let next = 0
    const sticky = options?.sticky === true
    const pins = new Map<string, URL>()
    const server: Server = createServer((req, res) => {
      const session = req.headers[McpHeaders.SESSION_ID]
      const pinned = typeof session === "string" ? pins.get(session) : undefined
      const target = pinned ?? targets[next++ % targets.length]!
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        const body = Buffer.concat(chunks)
        // A keep-alive connection the backend closed while idle fails as ECONNRESET when reused, before
        // the backend read anything: the request goes once more on a new connection, as a load balancer
        // retries a request whose upstream connection failed before it was sent.
        const send = (retry: boolean) => {
          const upstream = request(
            {
              host: target.hostname,
              port: target.port,
              path: target.pathname,
              method: req.method,
              agent: retry ? agent : false,
              headers: { ...req.headers, host: target.host }
            },
            (reply) => {
              const opened = reply.headers[McpHeaders.SESSION_ID]
              if (sticky && typeof opened === "string" && !pins.has(opened)) pins.set(opened, target)
              res.writeHead(reply.statusCode ?? 502, reply.headers)
              reply.pipe(res)
            }
          )
          upstream.on("error", (error: NodeJS.ErrnoException) => {
            if (retry && upstream.reusedSocket && error.code === "ECONNRESET" && !res.headersSent) return send(false)
            if (!res.headersSent) res.writeHead(502)
            res.end()
          })
          upstream.end(body)
        }
        send(true)
      })
    })
    server.keepAliveTimeout = 60_000
    server.listen(0, "127.0.0.1", () => {
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
        close: () =>
          new Promise((done) => {
            agent.destroy()
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
