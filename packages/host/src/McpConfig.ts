/**
 * The `mcpServers` configuration that Claude Desktop, Cursor and VS Code use:
 * a JSON object naming each server. A server is either a command the host
 * spawns and speaks to over stdio (`command`, `args`, `env`, `cwd`), or a
 * remote endpoint (`url`, `headers`; `type` picks Streamable HTTP or the
 * legacy HTTP+SSE transport). VS Code's `servers` key is read as well.
 *
 * `decode` turns parsed JSON into a `Config` and fails with a `ConfigError`
 * that names the server and the field; `load` reads a file with effect's
 * `FileSystem`. A `Config` is plain data, so a host can be built in code too.
 *
 * @example
 * ```ts
 * import * as McpConfig from "@effect-mcp/host/McpConfig"
 *
 * // The same shape as the file: { "mcpServers": { ... } }
 * export const config: McpConfig.Config = {
 *   mcpServers: {
 *     files: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] },
 *     search: { type: "http", url: "https://search.example.com/mcp", headers: { authorization: "Bearer ..." } }
 *   }
 * }
 * ```
 */
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

/** A server the host spawns as a child process and speaks to over its stdin and stdout. */
export const StdioServer = Schema.Struct({
  /** Optional: VS Code writes `"stdio"`; a `command` alone means stdio. */
  type: Schema.optional(Schema.Literal("stdio")),
  command: Schema.NonEmptyString,
  args: Schema.optional(Schema.Array(Schema.String)),
  /** Variables on top of the host's environment. */
  env: Schema.optional(Schema.Record(Schema.String, Schema.String)),
  cwd: Schema.optional(Schema.String)
})

/** A stdio server entry. */
export type StdioServer = typeof StdioServer.Type

/**
 * A remote server. `type`: `"http"` or `"streamable-http"` (the default)
 * speaks Streamable HTTP (falling back to legacy SSE when the server only has
 * that); `"sse"` speaks the legacy HTTP+SSE transport directly.
 */
export const RemoteServer = Schema.Struct({
  type: Schema.optional(Schema.Literals(["http", "streamable-http", "sse"])),
  url: Schema.String.check(
    Schema.makeFilter((url: string) => /^https?:\/\/[^\s/?#]+/i.test(url), { expected: "an http(s) URL" })
  ),
  /** Sent with every request (e.g. `authorization`). */
  headers: Schema.optional(Schema.Record(Schema.String, Schema.String))
})

/** A remote server entry. */
export type RemoteServer = typeof RemoteServer.Type

/** One server of the configuration. */
export type ServerConfig = StdioServer | RemoteServer

/** The configuration: servers by name. */
export interface Config {
  readonly mcpServers: { readonly [name: string]: ServerConfig }
}

/** Whether a server entry is spawned over stdio (as opposed to reached over HTTP). */
export const isStdio = (server: ServerConfig): server is StdioServer => "command" in server

/** A configuration that could not be read or does not have the `mcpServers` shape. */
export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  /** `Read`: the file could not be read; `Json`: it is not JSON; `Invalid`: an entry does not fit. */
  reason: Schema.Literals(["Read", "Json", "Invalid"]),
  /** The file, when the configuration came from one. */
  path: Schema.optional(Schema.String),
  /** The server whose entry is wrong. */
  server: Schema.optional(Schema.String),
  /** The field of that entry, as a dotted path (`args.1`, `env.TOKEN`). */
  field: Schema.optional(Schema.String),
  message: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const pathOf = (path: ReadonlyArray<unknown> | undefined): string | undefined =>
  path === undefined || path.length === 0
    ? undefined
    : path.map((p) => String(typeof p === "object" && p !== null ? (p as { readonly key: unknown }).key : p)).join(".")

const isRecord = (u: unknown): u is { readonly [key: string]: unknown } =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** The longest part of a configured value an error quotes. */
const quoteChars = 60

/**
 * What a wrong field holds, for its error: the value (cut to `quoteChars`),
 * but only its type under `headers` and `env`, which carry tokens and keys.
 */
const received = (entry: { readonly [key: string]: unknown }, field: string | undefined): string => {
  if (field === undefined) return ""
  const keys = field.split(".")
  let value: unknown = entry
  for (const key of keys) {
    if (typeof value !== "object" || value === null) return ""
    value = (value as { readonly [key: string]: unknown })[key]
  }
  if (value === undefined) return ""
  const type = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`
  if (keys[0] === "headers" || keys[0] === "env") return `, got ${type}`
  const text = JSON.stringify(value) ?? type
  return `, got ${text.length <= quoteChars ? text : `${text.slice(0, quoteChars)}...`}`
}

const remoteTypes: ReadonlySet<unknown> = new Set(["http", "streamable-http", "sse"])

const invalid = (server: string | undefined, field: string | undefined, detail: string) =>
  new ConfigError({
    reason: "Invalid",
    ...(server === undefined ? {} : { server }),
    ...(field === undefined ? {} : { field }),
    message:
      server === undefined
        ? detail
        : `server ${JSON.stringify(server)}${field === undefined ? "" : `, field ${field}`}: ${detail}`
  })

const decodeStdio = Schema.decodeUnknownResult(StdioServer)
const decodeRemote = Schema.decodeUnknownResult(RemoteServer)

/** One entry: the kind chosen by `type`, else by which of `command` and `url` it has. */
const decodeServer = (name: string, entry: unknown): Result.Result<ServerConfig, ConfigError> => {
  if (!isRecord(entry)) return Result.fail(invalid(name, undefined, "expected an object"))
  const type = entry.type
  const stdio = type === "stdio" || (type === undefined && "command" in entry)
  if (!stdio && type === undefined && !("url" in entry)) {
    return Result.fail(invalid(name, undefined, "needs `command` (a stdio server) or `url` (a remote server)"))
  }
  if (!stdio && type !== undefined && !remoteTypes.has(type)) {
    return Result.fail(
      invalid(name, "type", `expected "stdio", "http", "streamable-http" or "sse", got ${JSON.stringify(type)}`)
    )
  }
  const decoded: Result.Result<ServerConfig, Schema.SchemaError> = stdio ? decodeStdio(entry) : decodeRemote(entry)
  return Result.mapError(decoded, (error) => {
    const first = formatter(error.issue).issues[0]
    const field = pathOf(first?.path)
    return invalid(name, field, `${first?.message ?? error.message}${received(entry, field)}`)
  })
}

/**
 * Decodes parsed JSON into a `Config`: `mcpServers` (or VS Code's `servers`)
 * holding one entry per server. Fails with the first wrong entry, naming the
 * server and the field.
 */
export const decode = (input: unknown): Effect.Effect<Config, ConfigError> =>
  Effect.suspend(() => {
    if (!isRecord(input)) return Effect.fail(invalid(undefined, undefined, "expected an object with `mcpServers`"))
    const servers = input.mcpServers ?? input.servers
    if (!isRecord(servers)) {
      return Effect.fail(invalid(undefined, undefined, "expected `mcpServers` to be an object of servers by name"))
    }
    const out: { [name: string]: ServerConfig } = {}
    for (const [name, entry] of Object.entries(servers)) {
      const decoded = decodeServer(name, entry)
      if (Result.isFailure(decoded)) return Effect.fail(decoded.failure)
      out[name] = decoded.success
    }
    return Effect.succeed({ mcpServers: out })
  })

/** Why a file could not be read, in a few words: the file system's own message repeats the path and the call. */
const readFailure = (cause: { readonly message: string; readonly reason?: unknown }): string => {
  const tag = (cause.reason as { readonly _tag?: unknown } | undefined)?._tag
  return tag === "NotFound"
    ? "no such file"
    : tag === "PermissionDenied"
      ? "permission denied"
      : tag === "BadResource"
        ? "not a file"
        : cause.message
}

/** JSON text as a value; the parser's own message on failure, naming `path` when given. */
const parseJson = (text: string, path?: string): Effect.Effect<unknown, ConfigError> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(JSON.parse(text) as unknown)
    } catch (cause) {
      return Effect.fail(
        new ConfigError({
          reason: "Json",
          ...(path === undefined ? {} : { path }),
          message: `${path ?? "the configuration"} is not JSON: ${cause instanceof Error ? cause.message : String(cause)}`
        })
      )
    }
  })

/** Parses JSON text and decodes it (see `decode`). */
export const parse = (text: string, path?: string): Effect.Effect<Config, ConfigError> =>
  Effect.flatMap(parseJson(text, path), (json) =>
    decode(json).pipe(
      Effect.mapError((error) =>
        path === undefined ? error : new ConfigError({ ...error, path, message: `${path}: ${error.message}` })
      )
    )
  )

/**
 * Reads a JSON file as a value, with the reason it could not be read (not
 * found, a directory, no permission) or parsed: for a file that holds an
 * `mcpServers` section beside sections of its own (a gateway's, say).
 */
export const readJson = (path: string): Effect.Effect<unknown, ConfigError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs
      .readFileString(path)
      .pipe(
        Effect.mapError(
          (cause) =>
            new ConfigError({ reason: "Read", path, message: `cannot read ${path}: ${readFailure(cause)}`, cause })
        )
      )
    return yield* parseJson(text, path)
  })

/** Reads and decodes a configuration file (JSON, `mcpServers` or `servers`). */
export const load = (path: string): Effect.Effect<Config, ConfigError, FileSystem.FileSystem> =>
  Effect.flatMap(readJson(path), (json) =>
    decode(json).pipe(
      Effect.mapError((error) => new ConfigError({ ...error, path, message: `${path}: ${error.message}` }))
    )
  )
