/**
 * Credentials out: what the gateway sends each remote upstream to prove
 * itself, one credential per upstream, and nothing of the downstream
 * client's. A downstream request's `Authorization` header (or any other
 * header) never reaches an upstream: the upstreams are reached by the host's
 * own connections, whose headers are the configuration's `headers` and the
 * credential given here, and nothing else.
 *
 * A credential is a header: a fixed value (`header`, `bearer`), or a secret
 * read from the environment on each connection (`fromEnv`), so a rotated
 * secret is used from the next reconnection on and never sits in the
 * configuration file. Values are `Redacted`: they do not show in logs, and a
 * missing variable fails the connection with a message that names the
 * variable, not a value.
 *
 * @example
 * ```ts
 * import * as Credentials from "@effect-mcp/gateway/Credentials"
 *
 * export const credentials: Credentials.ByServer = {
 *   search: Credentials.fromEnv("SEARCH_TOKEN"), // Authorization: Bearer $SEARCH_TOKEN
 *   tickets: Credentials.header("x-api-key", "not-a-secret-in-real-life")
 * }
 * ```
 */
import * as Transport from "@effect-mcp/engine/Transport"
import * as Connector from "@effect-mcp/host/Connector"
import * as McpConfig from "@effect-mcp/host/McpConfig"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { withHeader } from "./internal/headers.ts"

/** A header sent with every request to one upstream. */
export type Credential =
  | {
      readonly _tag: "Static"
      /** The header's name (`authorization`, `x-api-key`, ...). */
      readonly header: string
      readonly value: Redacted.Redacted<string>
    }
  | {
      readonly _tag: "Env"
      readonly header: string
      /** The environment variable holding the secret, read on each connection. */
      readonly variable: string
      /** Put before the secret with a space (`"Bearer"`); none when undefined. */
      readonly scheme: string | undefined
    }
  | {
      readonly _tag: "Effect"
      readonly header: string
      /** The header's value for a connection to `server` (the upstream named `name`), obtained as it is made. */
      readonly value: (
        name: string,
        server: McpConfig.RemoteServer
      ) => Effect.Effect<Redacted.Redacted<string>, Transport.TransportError>
    }

/** Credentials by upstream name. */
export type ByServer = { readonly [server: string]: Credential }

/** A fixed header value. */
export const header = (name: string, value: string | Redacted.Redacted<string>): Credential => ({
  _tag: "Static",
  header: name,
  value: Redacted.isRedacted(value) ? (value as Redacted.Redacted<string>) : Redacted.make(value as string)
})

/** `Authorization: Bearer <token>`. */
export const bearer = (token: string | Redacted.Redacted<string>): Credential =>
  header("authorization", Redacted.make(`Bearer ${typeof token === "string" ? token : Redacted.value(token)}`))

/**
 * A secret from the environment variable `variable`, read through effect's
 * `ConfigProvider` on each connection: by default `Authorization: Bearer <secret>`.
 */
export const fromEnv = (
  variable: string,
  options: { readonly header?: string | undefined; readonly scheme?: string | null | undefined } = {}
): Credential => ({
  _tag: "Env",
  header: options.header ?? "authorization",
  variable,
  scheme: options.scheme === null ? undefined : (options.scheme ?? "Bearer")
})

/**
 * A header whose value an effect obtains for each connection (a token from
 * an authorization server, a secret from a vault); its failure fails the
 * connection, which the host retries on its reconnect schedule.
 */
export const fromEffect = (
  header: string,
  value: (
    name: string,
    server: McpConfig.RemoteServer
  ) => Effect.Effect<Redacted.Redacted<string>, Transport.TransportError>
): Credential => ({ _tag: "Effect", header, value })

/**
 * The header's value now (an `Env` credential reads its variable, an
 * `Effect` credential runs for the upstream `target`, which it needs).
 */
export const resolve = (
  credential: Credential,
  target?: { readonly name: string; readonly server: McpConfig.RemoteServer } | undefined
): Effect.Effect<Redacted.Redacted<string>, Transport.TransportError> => {
  if (credential._tag === "Static") return Effect.succeed(credential.value)
  if (credential._tag === "Effect") {
    return target === undefined
      ? Effect.fail(new Transport.TransportError({ reason: "Io", message: "the credential needs its upstream" }))
      : credential.value(target.name, target.server)
  }
  return Config.Redacted(credential.variable).pipe(
    Effect.map((secret) =>
      credential.scheme === undefined ? secret : Redacted.make(`${credential.scheme} ${Redacted.value(secret)}`)
    ),
    Effect.mapError(
      () =>
        new Transport.TransportError({
          reason: "Io",
          message: `the credential variable ${credential.variable} is not set`
        })
    )
  )
}

/**
 * Wraps a connect function: each remote upstream with a credential is
 * reached with its header added to the configured ones. A stdio upstream
 * given a credential fails to connect (a child process has no headers:
 * give it its secret in `env`).
 */
export const wrap =
  (credentials: ByServer, connect: Connector.Connect): Connector.Connect =>
  (name, server) => {
    const credential = credentials[name]
    if (credential === undefined) return connect(name, server)
    if (McpConfig.isStdio(server)) {
      return Effect.fail(
        new Transport.TransportError({
          reason: "Io",
          message: `${JSON.stringify(name)} is a stdio server: give it its secret in \`env\`, not as a credential`
        })
      )
    }
    return Effect.flatMap(resolve(credential, { name, server }), (value) =>
      connect(name, { ...server, headers: withHeader(server.headers, credential.header, Redacted.value(value)) })
    )
  }

/** The `Connector` below it, with the credentials added (see `wrap`). */
export const layer = (credentials: ByServer): Layer.Layer<Connector.Connector, never, Connector.Connector> =>
  Layer.effect(
    Connector.Connector,
    Effect.gen(function* () {
      const below = yield* Connector.Connector
      return { connect: wrap(credentials, below.connect) }
    })
  )
