/**
 * Node wiring for the engine's HTTP transports: serves an `HttpRouter` app
 * (`StreamableHttpServer.layer`, `SseServer.layer`, or both) with Node's
 * `http` server. Everything else lives in the engine, which knows no Node.
 *
 * Binds 127.0.0.1 by default. On a loopback bind the engine's DNS-rebinding
 * protection is on (only loopback names in `Host` and `Origin`). On any other
 * interface `layerStreamableHttp` and `layerSse` turn it off unless
 * `rebinding` is given (with a warning): pass `rebinding.allowedHosts` with
 * the names clients use to keep it.
 */
import * as SseServer from "@effect-mcp/engine/SseServer"
import type { RebindingOptions } from "@effect-mcp/engine/StreamableHttpServer"
import * as StreamableHttpServer from "@effect-mcp/engine/StreamableHttpServer"
import * as PlatformNodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import type * as HttpServerError from "effect/http/HttpServerError"
import * as Layer from "effect/Layer"
import { createServer } from "node:http"

export interface ListenOptions {
  /** Interface to bind. Default `127.0.0.1`. */
  readonly host?: string | undefined
  /** Port to bind; 0 picks a free one (read it back with `url`). Default 0. */
  readonly port?: number | undefined
}

/** Serves the routes `app` adds to the `HttpRouter` on `host:port`; releasing the layer closes the server. */
export const layer = <E, R>(app: Layer.Layer<never, E, R>, options?: ListenOptions) =>
  HttpRouter.serve(app, { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provideMerge(
      PlatformNodeHttpServer.layer(() => createServer(), {
        host: options?.host ?? "127.0.0.1",
        port: options?.port ?? 0
      })
    )
  )

const isLoopback = (host: string) =>
  host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host)

/** The rebinding options for a bind: the engine's default on loopback, off elsewhere unless configured. */
const rebindingFor = <O extends { readonly rebinding?: RebindingOptions | undefined } & ListenOptions>(
  options: O
): { readonly options: O; readonly warning: Layer.Layer<never> } => {
  const host = options.host ?? "127.0.0.1"
  if (options.rebinding !== undefined || isLoopback(host)) return { options, warning: Layer.empty }
  return {
    options: { ...options, rebinding: { enabled: false } },
    warning: Layer.effectDiscard(
      Effect.logWarning(
        `MCP endpoint on ${host} without rebinding options: Host/Origin checks are off; set rebinding.allowedHosts`
      )
    )
  }
}

/** A Streamable HTTP endpoint (at `options.path`, default `/mcp`) on `host:port`. */
export const layerStreamableHttp = <E, R>(
  options: StreamableHttpServer.Options<E, R> & ListenOptions
): Layer.Layer<HttpServer.HttpServer, HttpServerError.ServeError, Exclude<R, StreamableHttpServer.Provided>> => {
  const bound = rebindingFor(options)
  return Layer.merge(layer(StreamableHttpServer.layer(bound.options), options), bound.warning) as Layer.Layer<
    HttpServer.HttpServer,
    HttpServerError.ServeError,
    Exclude<R, StreamableHttpServer.Provided>
  >
}

/** A legacy HTTP+SSE endpoint pair (`/sse` and `/messages` by default) on `host:port`. */
export const layerSse = <E, R>(
  options: SseServer.Options<E, R> & ListenOptions
): Layer.Layer<HttpServer.HttpServer, HttpServerError.ServeError, Exclude<R, SseServer.Provided>> => {
  const bound = rebindingFor(options)
  return Layer.merge(layer(SseServer.layer(bound.options), options), bound.warning) as Layer.Layer<
    HttpServer.HttpServer,
    HttpServerError.ServeError,
    Exclude<R, SseServer.Provided>
  >
}

/** The base URL the server listens on, e.g. `http://127.0.0.1:54321`. */
export const url: Effect.Effect<string, never, HttpServer.HttpServer> = Effect.map(
  Effect.service(HttpServer.HttpServer),
  (server) => HttpServer.formatAddress(server.address)
)
