/**
 * The gateway's configuration file: an `mcpServers` configuration (the
 * upstreams, as `McpConfig` reads them: stdio, Streamable HTTP, legacy SSE)
 * with an optional `gateway` section beside it for what only a gateway needs:
 *
 * ```json
 * {
 *   "mcpServers": {
 *     "everything": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"] },
 *     "search": { "type": "http", "url": "https://search.example.com/mcp" }
 *   },
 *   "gateway": {
 *     "naming": { "strategy": "always", "separator": "__" },
 *     "unprefixed": "everything",
 *     "credentials": { "search": { "env": "SEARCH_TOKEN" } },
 *     "discovery": { "pageSize": 20 },
 *     "startTimeoutSeconds": 20,
 *     "awaitUpstreamsSeconds": 5,
 *     "reconnectCapSeconds": 30
 *   }
 * }
 * ```
 *
 * A credential is `{ "env": "VAR" }` (sent as `Authorization: Bearer $VAR`;
 * `"header"` and `"scheme"` change that, `"scheme": null` sends the secret
 * alone), `{ "header": "x-api-key", "value": "..." }`, or
 * `{ "oauth": { "clientId": "gateway", "clientSecretEnv": "VAR", "scope": [...] } }`
 * (a token of the gateway's own from the upstream's authorization server,
 * see `UpstreamOAuth`). Prefer `env`: a file is easily shared.
 *
 * `discovery` (`true`, or `{ "pageSize": n }`) turns discovery mode on: the
 * catalog's tools are searched, described and called through three tools of
 * the gateway's instead of listed (see `Discovery`).
 *
 * `startTimeoutSeconds` is how long each upstream's connection may take to be
 * ready (the host's `startTimeout`, default 30), `awaitUpstreamsSeconds` how
 * long the gateway's first answers wait for the upstreams (`awaitUpstreams`,
 * default the start timeout, at most 10; 0 for none), `reconnectCapSeconds`
 * the longest wait between two attempts to reach an upstream that is down
 * (default 30: an upstream is tried again for as long as the gateway runs,
 * see `Gateway.reconnecting`).
 *
 * A section that does not fit fails the load naming the first wrong field,
 * why, and what it holds; so does a credential given to a stdio server.
 */
import * as McpConfig from "@effect-mcp/host/McpConfig"
import type * as Naming from "@effect-mcp/host/Naming"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Credentials from "./Credentials.ts"
import * as Discovery from "./Discovery.ts"
import * as UpstreamOAuth from "./UpstreamOAuth.ts"

/** The `gateway` section. */
export const Section = Schema.Struct({
  naming: Schema.optional(
    Schema.Struct({
      strategy: Schema.optional(Schema.Literals(["always", "onClash"])),
      separator: Schema.optional(Schema.String)
    })
  ),
  /** The upstream whose tools and prompts keep their own names. */
  unprefixed: Schema.optional(Schema.String),
  credentials: Schema.optional(
    Schema.Record(
      Schema.String,
      Schema.Union([
        Schema.Struct({
          env: Schema.NonEmptyString,
          header: Schema.optional(Schema.NonEmptyString),
          scheme: Schema.optional(Schema.NullOr(Schema.String))
        }),
        Schema.Struct({ header: Schema.NonEmptyString, value: Schema.String }),
        Schema.Struct({
          oauth: Schema.Struct({
            clientId: Schema.NonEmptyString,
            clientSecretEnv: Schema.NonEmptyString,
            authMethod: Schema.optional(Schema.Literals(["client_secret_basic", "client_secret_post"])),
            scope: Schema.optional(Schema.Array(Schema.String))
          })
        })
      ])
    )
  ),
  /** Discovery mode: on (`true`, or its page size) or off. */
  discovery: Schema.optional(
    Schema.Union([
      Schema.Boolean,
      Schema.Struct({
        pageSize: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: Discovery.maxPageSize })))
      })
    ])
  ),
  /** How long an upstream's connection may take to be ready, in seconds. */
  startTimeoutSeconds: Schema.optional(Schema.Finite.check(Schema.isGreaterThan(0))),
  /** How long the gateway's first answers wait for the upstreams, in seconds (0: not at all). */
  awaitUpstreamsSeconds: Schema.optional(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))),
  /** The longest wait between two attempts to reach an upstream that is down, in seconds. */
  reconnectCapSeconds: Schema.optional(Schema.Finite.check(Schema.isGreaterThan(0)))
})

/** What the file says: the upstreams, and how the gateway names and reaches them. */
export interface GatewayConfig {
  readonly config: McpConfig.Config
  readonly naming: Naming.Options | undefined
  readonly unprefixed: string | undefined
  readonly credentials: Credentials.ByServer
  /** Discovery mode (see `Discovery`), when the section turns it on. */
  readonly discovery: Discovery.Options | true | undefined
  /** The upstreams' start timeout, when the section sets it. */
  readonly startTimeout: Duration.Duration | undefined
  /** How long the first answers wait for the upstreams, when the section sets it. */
  readonly awaitUpstreams: Duration.Duration | undefined
  /** The longest wait between two attempts to reach an upstream that is down, when the section sets it. */
  readonly reconnectCap: Duration.Duration | undefined
}

const invalid = (message: string, path: string | undefined) =>
  new McpConfig.ConfigError({
    reason: "Invalid",
    ...(path === undefined ? {} : { path }),
    message: path === undefined ? message : `${path}: ${message}`
  })

// Every issue, to choose the one that says what the file meant (see `unfit`).
const decodeSection = Schema.decodeUnknownEffect(Section, { errors: "all" })

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/** The longest part of a configured value an error quotes. */
const quoteChars = 60

const keysOf = (path: ReadonlyArray<unknown> | undefined): ReadonlyArray<string> =>
  (path ?? []).map((p) => String(typeof p === "object" && p !== null ? (p as { readonly key: unknown }).key : p))

/** How far `keys` go into `raw` (the keys present), and what is there. */
const walk = (raw: unknown, keys: ReadonlyArray<string>): { readonly depth: number; readonly value: unknown } => {
  let value: unknown = raw
  let depth = 0
  for (const key of keys) {
    if (typeof value !== "object" || value === null || !(key in value)) return { depth, value: undefined }
    value = (value as { readonly [key: string]: unknown })[key]
    depth++
  }
  return { depth, value }
}

/**
 * Why the section does not fit, as `McpConfig` says it of a server: one wrong field, the schema's message, and
 * what the field holds (cut to `quoteChars`; only its type under `credentials`, where a `value` is a secret).
 * Of a union's issues (a credential's kinds), the one reaching deepest into what the file holds: the kind it
 * meant (`{ "oauth": {} }` lacks `oauth.clientId`, not `env`).
 */
const unfit = (error: Schema.SchemaError, raw: unknown): string => {
  let first: { readonly path?: ReadonlyArray<unknown> | undefined; readonly message: string } | undefined
  let deepest = -1
  for (const issue of formatter(error.issue).issues) {
    const depth = walk(raw, keysOf(issue.path)).depth
    if (depth > deepest) [first, deepest] = [issue, depth]
  }
  const keys = keysOf(first?.path)
  const value = walk(raw, keys).value
  const type = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`
  const text = keys[0] === "credentials" ? undefined : JSON.stringify(value)
  const got =
    value === undefined
      ? ""
      : `, got ${text === undefined ? type : text.length <= quoteChars ? text : `${text.slice(0, quoteChars)}...`}`
  const field = keys.length === 0 ? "the `gateway` section" : `gateway.${keys.join(".")}`
  return `${field}: ${first?.message ?? error.message}${got}`
}

/** Decodes parsed JSON: `mcpServers` as `McpConfig.decode` does, then the `gateway` section. */
export const decode = (input: unknown, path?: string): Effect.Effect<GatewayConfig, McpConfig.ConfigError> =>
  Effect.gen(function* () {
    const config = yield* McpConfig.decode(input).pipe(
      Effect.mapError((error) =>
        path === undefined ? error : new McpConfig.ConfigError({ ...error, path, message: `${path}: ${error.message}` })
      )
    )
    const raw = (input as { readonly gateway?: unknown }).gateway ?? {}
    const section = yield* decodeSection(raw).pipe(Effect.mapError((error) => invalid(unfit(error, raw), path)))
    const servers = Object.keys(config.mcpServers)
    if (section.unprefixed !== undefined && !servers.includes(section.unprefixed)) {
      return yield* invalid(`gateway.unprefixed names no server: ${JSON.stringify(section.unprefixed)}`, path)
    }
    const credentials: { [server: string]: Credentials.Credential } = {}
    for (const [server, c] of Object.entries(section.credentials ?? {})) {
      if (!servers.includes(server)) {
        return yield* invalid(`gateway.credentials names no server: ${JSON.stringify(server)}`, path)
      }
      // Known from the file alone: refused here, not at each connection attempt for as long as the gateway runs.
      if (McpConfig.isStdio(config.mcpServers[server]!)) {
        return yield* invalid(
          `gateway.credentials.${server}: ${JSON.stringify(server)} is a stdio server: give it its secret in \`env\`, not as a credential`,
          path
        )
      }
      credentials[server] =
        "oauth" in c
          ? UpstreamOAuth.clientCredentials(c.oauth)
          : "env" in c
            ? Credentials.fromEnv(c.env, { header: c.header, scheme: c.scheme })
            : Credentials.header(c.header, c.value)
    }
    return {
      config,
      naming:
        section.naming === undefined
          ? undefined
          : {
              ...(section.naming.strategy === undefined ? {} : { strategy: section.naming.strategy }),
              ...(section.naming.separator === undefined ? {} : { separator: section.naming.separator })
            },
      unprefixed: section.unprefixed,
      credentials,
      discovery:
        section.discovery === undefined || typeof section.discovery === "boolean"
          ? section.discovery || undefined
          : section.discovery.pageSize === undefined
            ? {}
            : { pageSize: section.discovery.pageSize },
      startTimeout: seconds(section.startTimeoutSeconds),
      awaitUpstreams: seconds(section.awaitUpstreamsSeconds),
      reconnectCap: seconds(section.reconnectCapSeconds)
    }
  })

const seconds = (value: number | undefined) => (value === undefined ? undefined : Duration.seconds(value))

/** Reads and decodes a gateway configuration file (why it cannot be read or parsed: `McpConfig.readJson`). */
export const load = (path: string): Effect.Effect<GatewayConfig, McpConfig.ConfigError, FileSystem.FileSystem> =>
  Effect.flatMap(McpConfig.readJson(path), (json) => decode(json, path))
