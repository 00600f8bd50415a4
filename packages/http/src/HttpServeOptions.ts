/**
 * The options every MCP HTTP server of this project takes, one name each:
 * `StreamableHttpServer` and `SseServer` here, `@effect-mcp/platform-node`'s
 * `NodeHttpServer` and `NodeMcpServer`, the clustered server and the
 * everything server's command line (`--allowed-host`, `--stateless`,
 * `--max-sessions`, ...) all read them under these names. A server takes
 * those that apply to it (the legacy SSE server has no event store).
 */
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import type * as Duration from "effect/Duration"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as EventStore from "./EventStore.ts"
import type * as HttpAuthentication from "./HttpAuthentication.ts"
import type * as Headers from "./internal/httpHeaders.ts"

/** DNS-rebinding protection: which `Host` and `Origin` values a server accepts. */
export interface HostChecks {
  /** Host names (no port) accepted in `Host` and `Origin`. Default: loopback names only. */
  readonly allowedHosts?: ReadonlyArray<string> | undefined
  /** Full origins (`https://app.example.com`) accepted besides those whose host is allowed (browser clients). */
  readonly allowedOrigins?: ReadonlyArray<string> | undefined
  /**
   * Checks `Host` and `Origin` against the allowed names. Default true; false
   * turns the checks off (behind a proxy that does them).
   */
  readonly dnsRebindingProtection?: boolean | undefined
}

/** The options of serving MCP over HTTP (see the module's documentation). */
export interface HttpServeOptions extends HostChecks {
  /**
   * Serves every request on its own (no `Mcp-Session-Id`, no GET stream)
   * instead of in stateful sessions. Default false; 2026-07-28 requests are
   * stateless either way.
   */
  readonly stateless?: boolean | undefined
  /** How POSTs carrying requests are answered. Default `"sse"`. */
  readonly responseMode?: "sse" | "json" | undefined
  /**
   * Offer the GET stream for server-initiated messages. Default true
   * (stateful sessions only). Without it a session has no channel for what
   * the server sends outside a request: an McpServer promises it no
   * `listChanged` nor `resources.subscribe` (`CurrentHttpSession.carriesUnsolicited`).
   */
  readonly standaloneStream?: boolean | undefined
  /**
   * Keeps sent events so dropped streams can be resumed. Default: the
   * `EventStore` service when provided, else an in-memory store; `false` disables.
   */
  readonly eventStore?: EventStore.EventStoreShape | false | undefined
  /** The `retry` sent with the priming event of each resumable stream. Default 1 second. */
  readonly retryInterval?: Duration.Input | undefined
  /** Largest POST body accepted; larger ones get 413. Default 4 MiB. */
  readonly maxBodyBytes?: number | undefined
  /**
   * Events each SSE connection buffers for a client that reads slowly; `send`
   * suspends while that many wait, and suspended sends go out in the order
   * they were made. Default 1,024.
   */
  readonly maxBufferedMessages?: number | undefined
  /**
   * An SSE connection whose client takes nothing for this long while events
   * wait for it is closed (the client can resume it with `Last-Event-ID`);
   * `stats().evictedConnections` and the `mcp_http_evicted_connections`
   * counter count them. Default 30 seconds.
   */
  readonly writeTimeout?: Duration.Input | undefined
  /** How often a silent SSE connection gets a keepalive comment. Default 15 seconds. */
  readonly keepaliveInterval?: Duration.Input | undefined
  /**
   * A session without any request from its client, or any event read by it,
   * for this long is closed; an open but silent GET stream does not keep it.
   * Default 30 minutes.
   */
  readonly sessionIdleTimeout?: Duration.Input | undefined
  /** Sessions open at once; an `initialize` beyond it gets 503. Default 10,000. */
  readonly maxSessions?: number | undefined
  /**
   * Sessions one client may hold open at once; an `initialize` beyond it
   * gets 429, so one client cannot take every session. Default 1,000.
   */
  readonly maxSessionsPerClient?: number | undefined
  /**
   * Who a request comes from, for `maxSessionsPerClient`: its remote address
   * by default; return the authenticated principal to count per user. A
   * request it returns undefined for is counted against `maxSessions` only.
   */
  readonly clientOf?: ((request: HttpServerRequest.HttpServerRequest) => string | undefined) | undefined
  /** Revisions accepted in `MCP-Protocol-Version`. Default: all. */
  readonly supportedVersions?: ReadonlyArray<ProtocolVersion.ProtocolVersion> | undefined
  /**
   * The arguments of a tool mirrored into `Mcp-Param-*` headers (SEP-2243),
   * or undefined for an unknown tool. On stateless revisions a `tools/call`
   * whose headers disagree with its arguments is refused with HeaderMismatch
   * (HTTP 400). `paramHeadersOf` reads them from a tool's `inputSchema`.
   * Default: none are checked.
   */
  readonly paramHeaders?: ((toolName: string) => ReadonlyArray<Headers.ParamHeader> | undefined) | undefined
  /**
   * The scopes a message needs (a tool's, a resource's, a prompt's), checked
   * against the principal before the message reaches its session: a request
   * lacking one is refused with the hook's 403 `insufficient_scope`.
   * McpServer's `requiredScopesOf(server)` reads them from the registered
   * items. Used only with `authentication`.
   */
  readonly requiredScopes?: HttpAuthentication.RequiredScopes | undefined
}
