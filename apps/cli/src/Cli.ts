/**
 * The `effect-mcp` command line: one connection to one MCP server per run.
 * The target is a URL, a command after `--` (spoken to over stdio), or the
 * name of a server in an `mcpServers` config file; the commands are `info`,
 * `tools`, `call`, `resources`, `read`, `prompts`, `prompt`, `ping` and
 * `watch`; `gateway` serves a config's servers behind one endpoint. Built on effect's `effect/cli` (help, completions, typed flags).
 * `run` returns the exit code (see `ExitCode`); docs/cli.md is the reference.
 */
// The package's own manifest, by the package's name (its `exports` has `./package.json`): the same file from the
// sources and from `dist/`, and the version `changeset version` wrote.
import packageJson from "@effect-mcp/cli/package.json" with { type: "json" }
import * as McpClient from "@effect-mcp/client/McpClient"
import * as Transport from "@effect-mcp/engine/Transport"
import * as McpConfig from "@effect-mcp/host/McpConfig"
import * as NodeConnector from "@effect-mcp/host/NodeConnector"
import * as Features from "@effect-mcp/protocol/Features"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Argument from "effect/cli/Argument"
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as ExitCode from "./ExitCode.ts"
import * as Failure from "./internal/failure.ts"
import { aboutUri, quoted, report, withCause } from "./internal/failure.ts"
import * as TerminalText from "./internal/terminalText.ts"
import * as Gateway from "./Gateway.ts"
import * as Login from "./Login.ts"
import * as Render from "./Render.ts"
import * as Target from "./Target.ts"

/** The version `--version` prints (and the client's `clientInfo` gives): the one in the package's package.json. */
export const version: string = packageJson.version

const common = {
  json: Flag.Boolean("json").pipe(
    Flag.withDescription("Print the result as JSON (watch: one JSON object per line)"),
    Flag.withDefault(false)
  ),
  config: Flag.String("config").pipe(
    Flag.withAlias("c"),
    Flag.withDescription("The mcpServers config file a server name is looked up in"),
    Flag.withDefault("mcp.json")
  ),
  revision: Flag.Literals("revision", ProtocolVersion.all).pipe(
    Flag.withDescription("Speak only this protocol revision (default: negotiate the newest both sides speak)"),
    Flag.optional
  ),
  sse: Flag.Boolean("sse").pipe(
    Flag.withDescription("Speak the legacy HTTP+SSE transport to the URL directly"),
    Flag.withDefault(false)
  ),
  // A deadline of no time (or less) is a mistake on the command line, not a server that timed out: exit 2.
  timeout: Flag.Finite("timeout").pipe(
    Flag.filter(
      (seconds) => seconds > 0,
      () => "a positive number of seconds"
    ),
    Flag.withDescription("Seconds a request may take (progress restarts the clock); default 60"),
    Flag.optional
  ),
  serverStderr: Flag.Boolean("server-stderr").pipe(
    Flag.withDescription("Show a stdio server's stderr as it comes (else kept, its tail reported if it exits)"),
    Flag.withDefault(false)
  ),
  login: Flag.Boolean("login").pipe(
    Flag.withDescription("Log in with OAuth when a URL target asks (the default); --no-login refuses instead"),
    Flag.withDefault(true)
  ),
  tokenFile: Flag.String("token-file").pipe(
    Flag.withDescription("Where OAuth tokens are kept (default $XDG_CONFIG_HOME/effect-mcp/tokens.json)"),
    Flag.optional
  ),
  args: Argument.String("target-and-arguments").pipe(
    Argument.withDescription(
      "The target (a URL or a server name; or a command after --), then the command's arguments"
    ),
    Argument.variadic()
  )
}

type Common = {
  readonly json: boolean
  readonly config: string
  readonly revision: Option.Option<ProtocolVersion.ProtocolVersion>
  readonly sse: boolean
  readonly timeout: Option.Option<number>
  readonly serverStderr: boolean
  readonly login: boolean
  readonly tokenFile: Option.Option<string>
  readonly args: ReadonlyArray<string>
}

/** What followed `--` on the command line: a stdio server's command and arguments (`run` provides it). */
export const StdioCommand = Context.Reference<ReadonlyArray<string>>("@effect-mcp/cli/Cli/StdioCommand", {
  defaultValue: () => []
})

const usage = (message: string) => new ExitCode.Exit({ code: ExitCode.Usage, message })

const requestOptions = (input: Common): McpClient.RequestOptions =>
  Option.match(input.timeout, {
    onNone: () => ({}),
    onSome: (seconds) => ({ timeout: seconds * 1000, resetTimeoutOnProgress: true })
  })

/**
 * The command's own arguments: the positionals after the target (or all of
 * them when the target came after `--`), checked against `names` (a trailing
 * `?` marks an optional one).
 */
const operands = (
  input: Common,
  stdioCommand: ReadonlyArray<string>,
  names: ReadonlyArray<string>
): Effect.Effect<{ readonly target: string | undefined; readonly values: ReadonlyArray<string> }, ExitCode.Exit> => {
  const [target, values] = stdioCommand.length > 0 ? [undefined, input.args] : [input.args[0], input.args.slice(1)]
  // No target at all: that is what to say (Target.resolve says it), not that the arguments are missing.
  if (target === undefined && stdioCommand.length === 0) return Effect.succeed({ target, values })
  const required = names.filter((n) => !n.endsWith("?")).length
  if (values.length < required || values.length > names.length) {
    const expected = names.map((n) => (n.endsWith("?") ? `[${n.slice(0, -1)}]` : `<${n}>`)).join(" ")
    return Effect.fail(
      usage(`expected ${expected === "" ? "no arguments" : expected} after the target, got ${received(values)}`)
    )
  }
  return Effect.succeed({ target, values })
}

/** How many values a message quotes at most. */
const quoteCount = 4

/**
 * What was given, for a message that says it was wrong: `nothing`, or the
 * count and the first few, each bounded (an argument may be a long JSON text).
 */
const received = (values: ReadonlyArray<string>): string => {
  if (values.length === 0) return "nothing"
  const shown = values
    .slice(0, quoteCount)
    .map((v) => quoted(v))
    .join(" ")
  const more = values.length > quoteCount ? ` and ${values.length - quoteCount} more` : ""
  return `${values.length} (${shown}${more})`
}

/** The JSON type of a parsed value, for a message. */
const jsonType = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`

/** A JSON object given on the command line (tool or prompt arguments). */
const jsonObject = (text: string | undefined): Effect.Effect<{ readonly [key: string]: unknown }, ExitCode.Exit> => {
  if (text === undefined) return Effect.succeed({})
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (e) {
    return Effect.fail(usage(`the arguments are not JSON (${(e as Error).message}): ${quoted(text)}`))
  }
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
    ? Effect.succeed(parsed as { readonly [key: string]: unknown })
    : Effect.fail(
        usage(`the arguments must be a JSON object, like '{"name": "value"}', got ${jsonType(parsed)}: ${quoted(text)}`)
      )
}

/**
 * How long the CLI, about to exit, waits for a server to answer the DELETE
 * that ends its session: a server that never answers must not hold the exit
 * past the command's own deadline by more than this.
 */
const closeWait = "1 second"

/**
 * How long a stdio server, its stdin closed once the command is done, has to
 * exit before it gets SIGTERM (then 2 s more before SIGKILL). A server that
 * ends on its stdin's end, as MCP's shutdown asks, does so well within it; one
 * that does not (stuck, or no longer reading its stdin) would otherwise hold
 * the exit for the transport's default 2 s past the command's own deadline.
 */
const stdioExitGrace = "500 millis"

/** Connects to the target in the current scope: the transport, then the handshake. */
const connect = (
  input: Common,
  stdioCommand: ReadonlyArray<string>,
  target: string | undefined,
  keepalive: boolean
): Effect.Effect<McpClient.McpClientShape, ExitCode.Exit, FileSystem.FileSystem | Scope.Scope> =>
  Effect.gen(function* () {
    const resolved = yield* Target.resolve({ target, command: stdioCommand, config: input.config, sse: input.sse })
    const server = resolved.server
    const transport =
      McpConfig.isStdio(server) || !input.login
        ? yield* Effect.map(
            NodeConnector.connect({
              stderr: () => (input.serverStderr ? "inherit" : "capture"),
              shutdown: { exitGrace: stdioExitGrace },
              terminateTimeout: closeWait
            })(resolved.name, server),
            (c) => c.transport
          )
        : yield* Login.connect(server, Option.getOrElse(input.tokenFile, Login.defaultTokenFile), {
            terminateTimeout: closeWait,
            // A quarter of a short handshake deadline: an authorization server that does not answer is then
            // what the error names, before the handshake's own deadline (whose probe has half) runs out.
            discoveryTimeout: Option.getOrUndefined(Option.map(input.timeout, (s) => Math.min(10_000, (s * 1000) / 4)))
          })
    return yield* McpClient.make({
      clientInfo: { name: "effect-mcp", version },
      supportedVersions: Option.match(input.revision, { onNone: () => undefined, onSome: (v) => [v] }),
      // Every request's deadline, the listings' pages and `logging/setLevel` included (the commands that
      // take `requestOptions` also let progress restart the clock).
      peer: {
        ...Option.match(input.timeout, { onNone: () => ({}), onSome: (s) => ({ requestTimeout: s * 1000 }) }),
        // A command that only listens (watch) learns of a server that died or went silent by pinging it.
        ...(keepalive ? { keepalive: keepaliveOf(input) } : {})
      },
      handshakeTimeout: Option.getOrElse(
        Option.map(input.timeout, (s) => s * 1000),
        () => 30_000
      )
    }).pipe(Effect.provideService(Transport.Transport, transport))
  }).pipe(
    Effect.mapError((error) => {
      if (error instanceof ExitCode.Exit) return error
      // docs/cli.md: a server that cannot be reached is a bad target (3), one that refused the handshake a
      // protocol error (4), one that did not answer it in time a timeout (5).
      const code =
        error._tag !== "InitializeError" || error.reason === "Transport"
          ? ExitCode.Target
          : error.reason === "Timeout"
            ? ExitCode.Connection
            : ExitCode.Protocol
      return new ExitCode.Exit({ code, message: `cannot connect: ${Target.oneLine(error.message)}`, cause: error })
    })
  )

/** How often `watch` pings its server, and how long each ping may take: `--timeout`, else 10 s. */
const keepaliveOf = (input: Common) => {
  const every = Duration.seconds(Option.getOrElse(input.timeout, () => 10))
  return { schedule: Schedule.spaced(every), timeout: every }
}

/**
 * A command of the CLI: `names` are its arguments after the target, `body`
 * runs with the connected client and those arguments; with `keepalive` the
 * server is pinged (a command that only listens, see `keepaliveOf`).
 */
const command = <Name extends string>(
  name: Name,
  description: string,
  names: ReadonlyArray<string>,
  body: (
    client: McpClient.McpClientShape,
    values: ReadonlyArray<string>,
    input: Common
  ) => Effect.Effect<void, unknown, FileSystem.FileSystem | Scope.Scope>,
  options: { readonly keepalive?: boolean } = {}
) =>
  Command.make(name, common, (input) =>
    Effect.scoped(
      Effect.gen(function* () {
        const stdioCommand = yield* StdioCommand
        const { target, values } = yield* operands(input, stdioCommand, names)
        const client = yield* connect(input, stdioCommand, target, options.keepalive === true)
        yield* body(client, values, input)
      }).pipe(
        // Said before the scope closes: what went wrong is known now, and the connection's release (a stdio
        // server stopped, a DELETE waited for) must not hold the line up.
        Effect.catch((error) => {
          const exit = classify(error)
          return Effect.andThen(report(input.json, exit), Effect.fail(exit))
        })
      )
    )
  ).pipe(Command.withDescription(description))

const print = (input: Common, value: unknown, text: () => string) =>
  Console.log(input.json ? Render.json(value) : text())

const info = command(
  "info",
  "Show the server's name, version, capabilities and the negotiated revision",
  [],
  (client, _, input) => {
    const described = {
      serverInfo: client.serverInfo,
      revision: client.revision,
      capabilities: client.serverCapabilities,
      instructions: client.instructions
    }
    return print(input, described, () => Render.info(described))
  }
)

const tools = command("tools", "List the server's tools (every page)", [], (client, _, input) =>
  Effect.flatMap(Stream.runCollect(client.tools), (list) => print(input, { tools: list }, () => Render.tools(list)))
)

const prompts = command("prompts", "List the server's prompts (every page)", [], (client, _, input) =>
  Effect.flatMap(Stream.runCollect(client.prompts), (list) =>
    print(input, { prompts: list }, () => Render.prompts(list))
  )
)

const resources = command("resources", "List the server's resources and resource templates", [], (client, _, input) =>
  Effect.gen(function* () {
    const list = yield* Stream.runCollect(client.resources)
    const templates = yield* Stream.runCollect(client.resourceTemplates)
    yield* print(input, { resources: list, resourceTemplates: templates }, () => Render.resources(list, templates))
  })
)

const read = command("read", "Read a resource by URI", ["uri"], (client, [uri], input) =>
  client.readResource(uri!, requestOptions(input)).pipe(
    Effect.mapError((error) =>
      McpError.isMcpError(error) && !error.message.includes(uri!) ? withCause(aboutUri(error, uri!), error) : error
    ),
    Effect.flatMap((result) => print(input, result, () => Render.readResult(result)))
  )
)

const prompt = command(
  "prompt",
  "Get a prompt, with its arguments as a JSON object of strings",
  ["name", "json-args?"],
  (client, [name, args], input) =>
    Effect.gen(function* () {
      const parsed = yield* jsonObject(args)
      const result = yield* client.getPrompt(name!, parsed as { readonly [key: string]: string }, requestOptions(input))
      yield* print(input, result, () => Render.promptResult(result))
    })
)

const ping = command(
  "ping",
  "Check that the server answers (ping, or server/discover on 2026-07-28)",
  [],
  (client, _, input) =>
    Effect.gen(function* () {
      const started = Date.now()
      yield* Features.has(client.revision, "ping")
        ? client.ping(requestOptions(input))
        : Effect.asVoid(client.request("server/discover", {}, requestOptions(input)))
      const ms = Date.now() - started
      yield* print(input, { ok: true, ms }, () => `ok (${ms} ms)`)
    })
)

const call = command(
  "call",
  "Call a tool with its arguments as a JSON object; a bar shows its progress on a terminal, Ctrl-C cancels it",
  ["tool", "json-args?"],
  (client, [tool, args], input) =>
    Effect.gen(function* () {
      const parsed = yield* jsonObject(args)
      const bar = Render.progressLine(process.stderr, process.env.EFFECT_MCP_PROGRESS === "always")
      let result: McpClient.ProgressEvent<unknown> | undefined
      yield* client.callToolWithProgress(tool!, parsed, requestOptions(input)).pipe(
        Stream.runForEach((event) =>
          Effect.sync(() => {
            if (event._tag === "Progress") bar.draw(Render.progressBar(event.update))
            else result = event
          })
        ),
        Effect.ensuring(Effect.sync(bar.clear)),
        Effect.onInterrupt(() => Effect.sync(() => process.stderr.write(`cancelled ${tool}\n`)))
      )
      if (result === undefined || result._tag !== "Result") return
      const value = result.value as Parameters<typeof Render.toolResult>[0]
      yield* print(input, value, () => Render.toolResult(value))
      if (value.isError === true) {
        return yield* new ExitCode.Exit({ code: ExitCode.ToolError, message: `tool ${tool} reported an error` })
      }
    })
)

const watch = command(
  "watch",
  "Print the server's log messages and notifications as they arrive, until Ctrl-C",
  [],
  (client, _, input) => {
    const line = (kind: string, value: unknown, text: string) =>
      Console.log(input.json ? TerminalText.json({ kind, ...(value as object) }) : text)
    const changed = (kind: string, stream: Stream.Stream<void, unknown>) =>
      Stream.mapEffect(stream, () => line(kind, {}, `notification: ${kind}`))
    return Effect.gen(function* () {
      if (client.serverCapabilities.logging !== undefined) {
        yield* client.setLoggingLevel("debug").pipe(Effect.ignore)
      }
      const streams: Array<Stream.Stream<unknown, unknown>> = [
        Stream.mapEffect(client.logMessages, (m) => line("log", m, Render.logMessage(m)))
      ]
      const caps = client.serverCapabilities
      if (caps.tools?.listChanged === true) streams.push(changed("tools/list_changed", client.toolListChanged))
      if (caps.prompts?.listChanged === true) streams.push(changed("prompts/list_changed", client.promptListChanged))
      if (caps.resources?.listChanged === true) {
        streams.push(changed("resources/list_changed", client.resourceListChanged))
      }
      if (!input.json) {
        yield* Console.error(`watching ${TerminalText.line(client.serverInfo?.name ?? "the server")}; Ctrl-C to stop`)
      }
      // Until Ctrl-C, or until the connection is over: the server exited, dropped it, or stopped answering the
      // keepalive pings (the notification streams outlive a session, which the client may renew).
      yield* Effect.raceFirst(
        Stream.runDrain(Stream.mergeAll(streams, { concurrency: "unbounded" })),
        connectionEnd(client)
      )
    })
  },
  { keepalive: true }
)

/** Fails once the client's connection is over, with why (an expired HTTP session the client renews is not). */
const connectionEnd = (client: McpClient.McpClientShape): Effect.Effect<never, unknown> =>
  Effect.flatMap(client.closed, (exit) =>
    Effect.fail(
      Exit.isFailure(exit)
        ? Cause.squash(exit.cause)
        : new Transport.TransportError({ reason: "Closed", message: "the server closed the connection" })
    )
  )

/** The exit code and one-line message of a failure of a command. */
export const classify: (error: unknown) => ExitCode.Exit = Failure.classify

/**
 * The exit code and line of a failure the commands did not expect (a defect):
 * classified like any failure, a thrown `TypeError` and the like named as
 * such, never an empty line; for a program that runs `run` itself.
 */
export const unexpected: (defect: unknown) => ExitCode.Exit = Failure.unexpected

/** The root command, with every subcommand. */
export const cli = Command.make("effect-mcp").pipe(
  Command.withDescription(
    "Talk to an MCP server: a URL, a server name from an mcpServers config (--config, default mcp.json), or a command after --; " +
      "or serve a config's servers behind one endpoint (gateway). " +
      "OTEL_EXPORTER_OTLP_ENDPOINT (and the other standard OTEL_* variables) exports the run's traces and metrics over OTLP/HTTP"
  ),
  Command.withSubcommands([info, tools, call, resources, read, prompts, prompt, ping, watch, Gateway.command])
)

/**
 * Runs the command line `argv` (without `node` and the script) and returns
 * the exit code. What follows `--` is the stdio server's command line.
 * A usage error is explained (with the help) by `effect/cli`; any other
 * failure is printed here as one line on stderr, a defect too (a bug, or a
 * package of the install that cannot be loaded): exit code 4, its message
 * without the stack. Only an interruption is left to the caller (main.ts: 130).
 */
export const run = (argv: ReadonlyArray<string>): Effect.Effect<number, never, Command.Environment> => {
  const end = argv.indexOf("--")
  const own = end === -1 ? argv : argv.slice(0, end)
  return Command.runWith(cli, { version })(own).pipe(
    Effect.provideService(StdioCommand, end === -1 ? [] : argv.slice(end + 1)),
    Effect.as(ExitCode.Success),
    Effect.catch((error) => {
      // `--help` is a ShowHelp without errors: the help was asked for.
      if (CliError.isCliError(error)) {
        return Effect.succeed(
          error._tag === "ShowHelp" && error.errors.length === 0 ? ExitCode.Success : ExitCode.Usage
        )
      }
      const exit = classify(error)
      return Effect.as(report(own.includes("--json"), exit), exit.code)
    }),
    // `catch` leaves a cause with a defect in it: without this the process would end with no word of why.
    Effect.catchCause((cause) => {
      if (Cause.hasInterrupts(cause)) return Effect.failCause(cause)
      const exit = unexpected(Cause.squash(cause))
      return Effect.as(report(own.includes("--json"), exit), exit.code)
    })
  )
}
