/**
 * What the demo does with one connection, printing as it goes: list the
 * tools, call one, call one that reports progress (each update printed as it
 * arrives), then start a long call, cancel it after a few updates and wait
 * for the server to confirm on its stderr that the handler was stopped.
 */
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { type Connection, DemoError } from "./Everything.ts"

export interface Outcome {
  readonly transport: string
  readonly protocol: string
  readonly tools: number
  readonly progressUpdates: number
  /** The id of the cancelled request, as the server reported it. */
  readonly cancelledId: string
  /** From interrupting the call to the server's confirmation. */
  readonly cancelConfirmedMs: number
}

const say = (label: string, text: string) => Console.log(`  ${label.padEnd(9)}${text}`)
const more = (text: string) => Console.log(`  ${" ".repeat(9)}${text}`)

const textOf = (result: Tools.CallToolResult) =>
  result.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join(" ")

/** Names wrapped to lines of about 90 characters. */
const wrap = (names: ReadonlyArray<string>): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const name of names) {
    const next = line === "" ? name : `${line}, ${name}`
    if (next.length > 90 && line !== "") {
      lines.push(`${line},`)
      line = name
    } else line = next
  }
  if (line !== "") lines.push(line)
  return lines
}

const asDemoError = (what: string) => (cause: { readonly message: string }) =>
  new DemoError({ message: `${what}: ${cause.message}`, cause })

const LONG_TOOL = "test_long_running"
const UPDATES_BEFORE_CANCEL = 3

export const exercise = (connection: Connection): Effect.Effect<Outcome, DemoError> =>
  Effect.gen(function* () {
    const { client, log } = connection
    const server = client.serverInfo
    yield* say("server", `${server?.name ?? "?"} ${server?.version ?? ""}, protocol ${client.revision}`)

    const tools = yield* Stream.runCollect(client.tools).pipe(Effect.mapError(asDemoError("listing tools")))
    const lines = wrap(tools.map((t) => t.name))
    const shown = lines.slice(0, 2)
    const hidden = tools.length - shown.join(" ").split(", ").length
    yield* say("tools", `${tools.length}: ${shown[0] ?? ""}`)
    for (const line of shown.slice(1)) yield* more(hidden > 0 ? `${line} ... and ${hidden} more` : line)

    const simple = yield* client
      .callTool("test_simple_text", {})
      .pipe(Effect.mapError(asDemoError("calling test_simple_text")))
    yield* say("call", `test_simple_text -> ${JSON.stringify(textOf(simple))}`)

    yield* say("call", "test_tool_with_progress (progress printed as it arrives)")
    let progressUpdates = 0
    yield* client.callToolWithProgress("test_tool_with_progress", {}).pipe(
      Stream.runForEach((event) => {
        if (event._tag === "Result") return more(`result: ${JSON.stringify(textOf(event.value))}`)
        progressUpdates++
        const { progress, total } = event.update
        return more(`progress ${progress}${total === undefined ? "" : `/${total}`}`)
      }),
      Effect.mapError(asDemoError("calling test_tool_with_progress"))
    )

    yield* say("call", `${LONG_TOOL} {"durationMs":60000}, cancelled after ${UPDATES_BEFORE_CANCEL} updates`)
    const from = yield* log.length
    // Taking a few events ends the stream early, which interrupts the call: the client sends
    // notifications/cancelled and the server interrupts the handler.
    yield* client.callToolWithProgress(LONG_TOOL, { durationMs: 60_000 }).pipe(
      Stream.take(UPDATES_BEFORE_CANCEL),
      Stream.runForEach((event) =>
        event._tag === "Progress"
          ? more(`progress ${event.update.progress}/${event.update.total ?? "?"}`)
          : more("finished before it could be cancelled")
      ),
      Effect.mapError(asDemoError(`calling ${LONG_TOOL}`))
    )
    const cancelledAt = yield* Clock.currentTimeMillis
    yield* more("cancelled the call; waiting for the server to confirm")
    const started = (yield* log.waitFor(/started (\S+)/, { from }))[1]!
    const confirmation = yield* log.waitFor(new RegExp(`cancelled ${started}(?!\\S)`), { from })
    const cancelConfirmedMs = (yield* Clock.currentTimeMillis) - cancelledAt
    yield* more(`server stderr: ${JSON.stringify(confirmation[0])} (${cancelConfirmedMs} ms later)`)

    return {
      transport: connection.transport,
      protocol: client.revision,
      tools: tools.length,
      progressUpdates,
      cancelledId: started,
      cancelConfirmedMs
    }
  })
