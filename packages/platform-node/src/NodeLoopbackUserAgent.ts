/**
 * The user-agent step of a login for command-line hosts (RFC 8252, native
 * apps): the user opens the authorization URL in a browser, and the
 * authorization server redirects it to `http://127.0.0.1:<port>/callback`,
 * where this process listens just for that one request.
 *
 * The port is chosen when the layer is built (a free one by default), since
 * the redirect URI is registered before any login; the listener itself is
 * open only while a login waits for its redirect: it answers the browser with
 * a small page, hands the redirect to the OAuth client (which checks its
 * `state` and `iss`) and closes. Only 127.0.0.1 is bound, never a public
 * interface.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { AuthorizationFailed } from "@effect-mcp/auth/OAuthClientError"
import * as UserAgent from "@effect-mcp/auth/UserAgent"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** How the loopback user agent listens and sends the user to the browser. */
export interface Options {
  /** The port on 127.0.0.1; 0 (the default) picks a free one when the layer is built. */
  readonly port?: number | undefined
  /** The redirect URI's path; `/callback` by default. */
  readonly path?: `/${string}` | undefined
  /**
   * Sends the user to the authorization URL: opens a browser, shows the URL
   * in a UI... By default it is printed to stderr for the user to open.
   */
  readonly open?: ((authorizationUrl: URL) => Effect.Effect<void>) | undefined
  /** How long to wait for the redirect; 5 minutes by default. */
  readonly timeout?: Duration.Input | undefined
}

const failed = (detail: string) => new AuthorizationFailed({ step: "user agent", detail })

const printToStderr = (authorizationUrl: URL) =>
  Effect.sync(() => {
    process.stderr.write(`Open this URL in a browser to log in:\n\n  ${authorizationUrl.href}\n\n`)
  })

const listen = (port: number): Effect.Effect<http.Server, AuthorizationFailed> =>
  Effect.callback<http.Server, AuthorizationFailed>((resume) => {
    const server = http.createServer()
    server.once("error", (error) => resume(Effect.fail(failed(`cannot listen on 127.0.0.1:${port}: ${error.message}`))))
    server.listen(port, "127.0.0.1", () => resume(Effect.succeed(server)))
  })

const close = (server: http.Server) =>
  Effect.callback<void>((resume) => {
    server.closeAllConnections()
    server.close(() => resume(Effect.void))
  })

// The page says what happened, never what the redirect carried (the code is the client's alone).
const page = (title: string, text: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head>` +
  `<body style="font-family: sans-serif; margin: 3em"><h1>${title}</h1><p>${text}</p></body></html>`

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

const errorCode = /^[\x21\x23-\x5b\x5d-\x7e]{1,64}$/

/** Answers the browser; `done` runs once the page is out (closing the listener earlier could cut it). */
const answer = (response: http.ServerResponse, redirect: URL, done: () => void) => {
  const error = redirect.searchParams.get("error")
  const body =
    error === null
      ? page("Logged in", "You can close this window and return to the application.")
      : page("Login failed", `The authorization server answered ${errorCode.test(error) ? escape(error) : "an error"}.`)
  response.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" }).end(body, done)
}

/**
 * Waits on `server` for the one request to `path` carrying the login's
 * `state`; anything else gets 404, and a request with another state 400 (any
 * local process can reach the port: a stray request must not end the login).
 */
const redirectOn = (server: http.Server, base: string, path: string, state: string | null) =>
  Effect.callback<URL>((resume) => {
    server.on("request", (request: http.IncomingMessage, response: http.ServerResponse) => {
      const url = new URL(request.url ?? "/", base)
      if (request.method !== "GET" || url.pathname !== path) {
        response.writeHead(404, { "content-type": "text/plain" }).end("Not found")
        return
      }
      if (state !== null && url.searchParams.get("state") !== state) {
        response.writeHead(400, { "content-type": "text/plain" }).end("Not the login this application waits for")
        return
      }
      answer(response, url, () => resume(Effect.succeed(url)))
    })
  })

/**
 * A loopback user agent: finds its port (listening for a moment when it is
 * 0), then each `authorize` listens on it, sends the user to the
 * authorization URL and returns the redirect, or fails with
 * `AuthorizationFailed` after `timeout`.
 */
export const make = (options: Options = {}): Effect.Effect<UserAgent.UserAgentShape, AuthorizationFailed> =>
  Effect.gen(function* () {
    const path = options.path ?? "/callback"
    const open = options.open ?? printToStderr
    const timeout = Duration.fromInputUnsafe(options.timeout ?? Duration.minutes(5))
    const probe = yield* listen(options.port ?? 0)
    const port = (probe.address() as AddressInfo).port
    yield* close(probe)
    const base = `http://127.0.0.1:${port}`
    const redirectUri = `${base}${path}`
    return UserAgent.make(redirectUri, (authorizationUrl) =>
      Effect.acquireUseRelease(
        listen(port),
        (server) =>
          Effect.andThen(
            open(authorizationUrl),
            redirectOn(server, base, path, authorizationUrl.searchParams.get("state")).pipe(
              Effect.timeoutOrElse({
                duration: timeout,
                orElse: () => Effect.fail(failed(`no redirect to ${redirectUri} within ${Duration.format(timeout)}`))
              })
            )
          ),
        close
      )
    )
  })

/** {@link make} as the `UserAgent` service. */
export const layer = (options: Options = {}): Layer.Layer<UserAgent.UserAgent, AuthorizationFailed> =>
  Layer.effect(UserAgent.UserAgent, make(options))
