/**
 * What the demo's host does, printing as it goes: the catalog of both
 * servers, calls on both at once with their progress bars, a call cancelled
 * on its server (which confirms on its stderr), and the stdio server killed,
 * reported and respawned by the host, then called again.
 */
import * as Render from "@effect-mcp/cli/Render"
import type * as McpHost from "@effect-mcp/host/McpHost"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { DemoError, type ServerLog } from "./Everything.ts"

const say = (label: string, text: string) => Console.log(`  ${label.padEnd(9)}${text}`)
const more = (text: string) => Console.log(`  ${" ".repeat(9)}${text}`)

const textOf = (result: Tools.CallToolResult) =>
  result.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join(" ")

const asDemoError = (what: string) => (cause: { readonly message: string }) =>
  new DemoError({ message: `${what}: ${cause.message}`, cause })

/** The catalog: how many tools each server brings, under which names. */
export const catalog = (host: McpHost.McpHostShape): Effect.Effect<number> =>
  Effect.gen(function* () {
    const tools = yield* host.tools
    for (const server of host.servers) {
      const mine = tools.map((t) => t.name).filter((name) => name.startsWith(`${server}__`))
      yield* say("catalog", `${server}: ${mine.length} tools (${mine.slice(0, 3).join(", ")}, ...)`)
    }
    yield* say("catalog", `${tools.length} tools in all, no two with the same name`)
    return tools.length
  })

/**
 * One bar per call. On a terminal the bars are redrawn in place (the cursor
 * moved up over them); anywhere else each update is a line of its own.
 */
const bars = (names: ReadonlyArray<string>) => {
  const lines = names.map((name) => `${" ".repeat(11)}${name.padEnd(26)}waiting`)
  const inPlace = process.stdout.isTTY === true
  if (inPlace) process.stdout.write(`${lines.join("\n")}\n`)
  return (index: number, bar: string) =>
    Effect.suspend(() => {
      lines[index] = `${" ".repeat(11)}${names[index]!.padEnd(26)}${bar}`
      if (!inPlace) return Console.log(lines[index])
      return Effect.sync(() =>
        process.stdout.write(`\x1b[${lines.length}A${lines.map((l) => `\r${l}\x1b[K`).join("\n")}\n`)
      )
    })
}

/** Calls on both servers at once, each drawing its progress bar as its updates arrive. */
export const concurrentCalls = (host: McpHost.McpHostShape): Effect.Effect<number, DemoError> =>
  Effect.gen(function* () {
    const names = host.servers.map((server) => `${server}__test_long_running`)
    yield* say("calls", `${names.join(" and ")} {"durationMs":1000}, at once`)
    const draw = bars(names)
    let updates = 0
    const results = yield* Effect.all(
      names.map((name, index) =>
        host.callToolWithProgress(name, { durationMs: 1000 }).pipe(
          Stream.runFoldEffect(
            () => "",
            (_, event) => {
              if (event._tag === "Result") return Effect.succeed(textOf(event.value))
              updates++
              return Effect.as(draw(index, Render.progressBar(event.update, 20)), "")
            }
          ),
          Effect.mapError(asDemoError(`calling ${name}`))
        )
      ),
      { concurrency: "unbounded" }
    )
    for (const [i, text] of results.entries()) yield* more(`${names[i]} -> ${JSON.stringify(text)}`)
    return updates
  })

const UPDATES_BEFORE_CANCEL = 3

/** A long call ended after a few updates: the host cancels it on its server, which confirms on stderr. */
export const cancellation = (
  host: McpHost.McpHostShape,
  server: string,
  log: ServerLog
): Effect.Effect<{ readonly id: string; readonly confirmedMs: number }, DemoError> =>
  Effect.gen(function* () {
    const name = `${server}__test_long_running`
    yield* say("cancel", `${name} {"durationMs":60000}, ended after ${UPDATES_BEFORE_CANCEL} updates`)
    const from = yield* log.length
    // Taking a few events ends the stream early, which interrupts the call: the host's client sends
    // notifications/cancelled and the server interrupts the handler.
    yield* host.callToolWithProgress(name, { durationMs: 60_000 }).pipe(
      Stream.take(UPDATES_BEFORE_CANCEL),
      Stream.runForEach((event) =>
        event._tag === "Progress"
          ? more(`${name.padEnd(26)}${Render.progressBar(event.update, 20)}`)
          : more("finished before it could be cancelled")
      ),
      Effect.mapError(asDemoError(`calling ${name}`))
    )
    const cancelledAt = yield* Clock.currentTimeMillis
    const id = (yield* log.waitFor(/started (\S+)/, { from }))[1]!
    const confirmation = yield* log.waitFor(new RegExp(`cancelled ${id}(?!\\S)`), { from })
    const confirmedMs = (yield* Clock.currentTimeMillis) - cancelledAt
    yield* more(`server stderr: ${JSON.stringify(confirmation[0])} (${confirmedMs} ms later)`)
    return { id, confirmedMs }
  })

/** Kills the stdio server's process: the host reports the loss, spawns it again, and the next call works. */
export const respawn = (
  host: McpHost.McpHostShape,
  server: string
): Effect.Effect<{ readonly before: number; readonly after: number }, DemoError> =>
  Effect.gen(function* () {
    const ready = yield* host.awaitReady(server).pipe(Effect.mapError(asDemoError(`waiting for ${server}`)))
    const before = ready.pid!
    yield* say("respawn", `kill -9 ${before} (the ${server} server's process)`)
    const changes = host.statusChanges.pipe(
      Stream.filter((change) => change.server === server),
      Stream.tap(({ status }) => {
        switch (status._tag) {
          case "Degraded":
          case "Failed": {
            const { failure } = status
            const how = failure.signal ?? (failure.exitCode === undefined ? "" : `exit ${failure.exitCode}`)
            // The message ends with the tail of the server's stderr: its first line says what happened.
            const what = failure.message.split("\n", 1)[0]!.replace(/[;:]? ?stderr ends with:?$/, "")
            // The signal or exit code once: the message may already name it ("exited on SIGKILL").
            return more(`${status._tag}: ${what}${how === "" || what.includes(how) ? "" : ` (${how})`}`)
          }
          case "Connecting":
            return more(`Connecting (attempt ${status.attempt})`)
          case "Ready":
            return more(`Ready, pid ${status.connection.pid}`)
        }
      }),
      Stream.takeUntil(({ status }) => status._tag === "Ready" && status.connection.pid !== before),
      Stream.runDrain
    )
    // The current status comes first (Ready with the old pid); the kill follows once the watch is running.
    yield* Effect.all(
      [
        changes,
        Effect.delay(
          Effect.sync(() => process.kill(before, "SIGKILL")),
          "100 millis"
        )
      ],
      {
        concurrency: "unbounded"
      }
    ).pipe(
      Effect.timeoutOrElse({
        duration: "15 seconds",
        orElse: () => Effect.fail(new DemoError({ message: "no respawn within 15 s" }))
      })
    )
    const after = (yield* host.awaitReady(server).pipe(Effect.mapError(asDemoError(`waiting for ${server}`)))).pid!
    const name = `${server}__test_simple_text`
    const result = yield* host.callTool(name, {}).pipe(Effect.mapError(asDemoError(`calling ${name}`)))
    yield* more(`${name} -> ${JSON.stringify(textOf(result))}`)
    return { before, after }
  })
