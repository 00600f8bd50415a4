/**
 * How `effect-mcp` prints what a server answered: short human-readable text
 * by default, the result itself as JSON with `--json`, and a progress bar on
 * stderr while a call reports progress (only on a terminal: piped stderr
 * gets nothing, so logs and scripts stay clean).
 *
 * Every text a server sent (names, descriptions, results, log lines,
 * progress messages) goes through `TerminalText` before it is printed: a
 * server must not drive the user's terminal with control characters (clear
 * the screen, set the title, write the clipboard, overwrite a line), so they
 * are shown escaped. `--json` prints JSON, its strings escaped the same way.
 */
import * as Transport from "@effect-mcp/engine/Transport"
import type * as Content from "@effect-mcp/protocol/Content"
import type * as Logging from "@effect-mcp/protocol/Logging"
import type * as Prompts from "@effect-mcp/protocol/Prompts"
import type * as Resources from "@effect-mcp/protocol/Resources"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as TerminalText from "./internal/terminalText.ts"

/** `value` as indented JSON, the `--json` output of every command (see `TerminalText.json`). */
export const json = (value: unknown): string => TerminalText.json(value, 2)

const firstLine = (text: string | undefined): string => (text ?? "").split("\n", 1)[0]!.trim()

/**
 * `name  description` lines, the names padded to one column. Every cell is a
 * server's text, escaped here, before the padding measures it.
 */
const table = (rows: ReadonlyArray<readonly [string, string]>): string => {
  const escaped = rows.map(([name, text]) => [TerminalText.line(name), TerminalText.line(text)] as const)
  const width = Math.min(40, Math.max(0, ...escaped.map(([name]) => name.length)))
  return escaped.map(([name, text]) => (text === "" ? name : `${name.padEnd(width)}  ${text}`)).join("\n")
}

/** A tool's arguments from its input schema's `properties`, `*` marking the `required` ones. */
const toolArguments = (tool: Tools.Tool): ReadonlyArray<string> => {
  const schema = tool.inputSchema as { readonly properties?: unknown; readonly required?: unknown }
  const properties = typeof schema.properties === "object" && schema.properties !== null ? schema.properties : {}
  const required = new Set(Array.isArray(schema.required) ? schema.required : [])
  return Object.keys(properties).map((name) => (required.has(name) ? `${name}*` : name))
}

/** Tools: name, the first line of the description, and the arguments (`*` marks a required one), as `prompts`. */
export const tools = (list: ReadonlyArray<Tools.Tool>): string =>
  list.length === 0
    ? "(no tools)"
    : table(
        list.map((t) => {
          const args = toolArguments(t)
          const text = firstLine(t.description ?? t.title)
          return [t.name, args.length === 0 ? text : `${text} (${args.join(", ")})`.trim()]
        })
      )

/** Prompts: name, description, and the arguments (`*` marks a required one). */
export const prompts = (list: ReadonlyArray<Prompts.Prompt>): string =>
  list.length === 0
    ? "(no prompts)"
    : table(
        list.map((p) => {
          const args = (p.arguments ?? []).map((a) => (a.required === true ? `${a.name}*` : a.name))
          const text = firstLine(p.description ?? p.title)
          return [p.name, args.length === 0 ? text : `${text} (${args.join(", ")})`.trim()]
        })
      )

/** Resources and resource templates: URI (or template), name and MIME type. */
export const resources = (
  list: ReadonlyArray<Resources.Resource>,
  templates: ReadonlyArray<Resources.ResourceTemplate>
): string => {
  const rows: Array<readonly [string, string]> = list.map((r) => [
    r.uri,
    `${r.name}${r.mimeType === undefined ? "" : ` (${r.mimeType})`}`
  ])
  for (const t of templates) {
    rows.push([t.uriTemplate, `${t.name}${t.mimeType === undefined ? "" : ` (${t.mimeType})`} [template]`])
  }
  return rows.length === 0 ? "(no resources)" : table(rows)
}

const bytesOf = (base64: string): number => Math.floor((base64.length * 3) / 4)

const contents = (c: Resources.ReadResourceResult["contents"][number]): string =>
  "text" in c
    ? TerminalText.lines(c.text)
    : TerminalText.line(`[${c.mimeType ?? "binary"} ${bytesOf(c.blob)} bytes: ${c.uri}]`)

/** A content block: text as it is (control characters escaped), anything else as a one-line summary. */
export const block = (b: Content.ContentBlock): string => {
  switch (b.type) {
    case "text":
      return TerminalText.lines(b.text)
    case "image":
    case "audio":
      return TerminalText.line(`[${b.type} ${b.mimeType}, ${bytesOf(b.data)} bytes]`)
    case "resource_link":
      return TerminalText.line(`[resource link ${b.uri}${b.name === "" ? "" : ` (${b.name})`}]`)
    case "resource":
      return `${TerminalText.line(`[resource ${b.resource.uri}]`)}\n${contents(b.resource)}`
  }
}

/** A tool result: its content blocks, else its structured content as JSON. */
export const toolResult = (result: Tools.CallToolResult): string => {
  const blocks = (result.content ?? []).map(block)
  // `json` escapes every control character in the server's strings, as for `--json`.
  if (blocks.length === 0 && result.structuredContent !== undefined) return json(result.structuredContent)
  return blocks.join("\n")
}

/** The contents of a resource read. */
export const readResult = (result: Resources.ReadResourceResult): string => result.contents.map(contents).join("\n")

/** A prompt's messages, each under its role. */
export const promptResult = (result: Prompts.GetPromptResult): string =>
  result.messages.map((m) => `${m.role}: ${block(m.content)}`).join("\n")

/**
 * What `info` prints: the server's name and version, the negotiated revision,
 * its capabilities and its instructions (their newlines kept).
 */
export const info = (server: {
  readonly serverInfo: { readonly name: string; readonly version: string } | undefined
  readonly revision: string
  readonly capabilities: object
  readonly instructions: string | undefined
}): string =>
  [
    TerminalText.line(`${server.serverInfo?.name ?? "(unnamed server)"} ${server.serverInfo?.version ?? ""}`.trim()),
    `revision: ${server.revision}`,
    // The keys are the server's too: an unknown capability is kept, whatever its name.
    `capabilities: ${TerminalText.line(Object.keys(server.capabilities).join(", ")) || "(none)"}`,
    ...(server.instructions === undefined ? [] : [`instructions: ${TerminalText.lines(server.instructions)}`])
  ].join("\n")

/** A log message of the server, on one line (a newline in it is shown as `\n`: it cannot forge a second line). */
export const logMessage = (params: Logging.LoggingMessageParams): string => {
  const data = typeof params.data === "string" ? params.data : JSON.stringify(params.data)
  return TerminalText.line(`[${params.level}]${params.logger === undefined ? "" : ` ${params.logger}:`} ${data}`)
}

/** A progress bar of `width` cells for `progress` of `total` (or a count when the total is unknown). */
export const progressBar = (
  update: { readonly progress: number; readonly total?: number | undefined; readonly message?: string | undefined },
  width = 30
): string => {
  // The server's message, on the one line the progress line redraws.
  const message = update.message === undefined ? "" : ` ${TerminalText.line(update.message)}`
  if (update.total === undefined || !(update.total > 0)) return `[${"?".repeat(width)}] ${update.progress}${message}`
  const ratio = Math.max(0, Math.min(1, update.progress / update.total))
  const filled = Math.round(ratio * width)
  const percent = `${Math.round(ratio * 100)}%`.padStart(4)
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${percent} ${update.progress}/${update.total}${message}`
}

/** Writes and redraws a progress line on a terminal stream; a no-op on anything else. */
export interface ProgressLine {
  readonly draw: (line: string) => void
  readonly clear: () => void
}

/** A progress line on `stream` when it is a terminal (or `force`), else one that draws nothing. */
export const progressLine = (
  stream: { readonly isTTY?: boolean | undefined; readonly columns?: number | undefined; write(s: string): unknown },
  force = false
): ProgressLine => {
  if (stream.isTTY !== true && !force) return { draw: () => {}, clear: () => {} }
  let drawn = false
  return {
    draw: (line) => {
      const columns = stream.columns !== undefined && stream.columns > 0 ? stream.columns : 80
      // Carriage return, the line cut to the terminal's width, then erase what an older, longer line left.
      stream.write(`\r${line.slice(0, Math.max(10, columns - 1))}\x1b[K`)
      drawn = true
    },
    clear: () => {
      if (drawn) stream.write("\r\x1b[K")
      drawn = false
    }
  }
}

/** What `--json` prints on stderr for a failure: the exit code, the one-line message, and what matches. */
export interface ErrorReport {
  readonly error: {
    readonly exitCode: number
    readonly message: string
    /** The failure's tag (`InitializeError`, `RequestTimeout`, `ResourceNotFound`, ...). */
    readonly type?: string | undefined
    /** Its `reason` (`InitializeError`: `Transport`, `Timeout`, `Rejected`, ...). */
    readonly reason?: string | undefined
    /** The system error code behind it (`ECONNREFUSED`, `ENOTFOUND`, `ENOENT`, ...). */
    readonly systemCode?: string | undefined
    /** A JSON-RPC error's code and data, as the server sent them. */
    readonly rpcCode?: number | undefined
    readonly data?: unknown
  }
}

/**
 * A failure as `--json` reports it. Only named fields are read from the
 * error behind it: its message is already the one line, and a stack or a
 * nested cause (which may quote a request's headers) is never printed.
 */
export const errorReport = (exit: { readonly code: number; readonly message: string; readonly cause?: unknown }) => {
  const cause = exit.cause as
    | { readonly _tag?: unknown; readonly reason?: unknown; readonly code?: unknown; readonly data?: unknown }
    | undefined
  const error: { -readonly [K in keyof ErrorReport["error"]]: ErrorReport["error"][K] } = {
    exitCode: exit.code,
    message: exit.message
  }
  if (typeof cause?._tag === "string") error.type = cause._tag
  if (typeof cause?.reason === "string") error.reason = cause.reason
  const systemCode = Transport.systemErrorCode(cause)
  if (systemCode !== undefined) error.systemCode = systemCode
  if (typeof cause?.code === "number") {
    error.rpcCode = cause.code
    if (cause.data !== undefined) error.data = cause.data
  }
  return { error } satisfies ErrorReport
}
