/**
 * What `effect-mcp gateway` says of its upstreams on stderr: each one that
 * cannot be reached (and why, and when it is tried again), gives up, or is
 * back. A gateway's operator otherwise sees an upstream's tools missing and
 * nothing else (its clients are answered with the rest).
 */
import * as McpHost from "@effect-mcp/host/McpHost"
import type * as ServerStatus from "@effect-mcp/host/ServerStatus"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TerminalText from "./terminalText.ts"

/**
 * The line a change is reported with, if any (`said`: the failure last reported for this upstream while it is
 * down): a failure once, until it changes or the upstream is back; first connections and attempts say nothing.
 */
const lineOf = (change: ServerStatus.StatusChange, said: string | undefined): string | undefined => {
  const name = JSON.stringify(change.server)
  const status = change.status
  switch (status._tag) {
    case "Degraded": {
      if (status.failure.message === said) return undefined
      // The retry before the failure, whose text may end with lines of the server's stderr.
      const retry = status.retryIn === undefined ? "" : ` (trying again in ${Duration.format(status.retryIn)})`
      return `effect-mcp gateway: upstream ${name} is unavailable${retry}: ${status.failure.message}`
    }
    case "Failed":
      return `effect-mcp gateway: upstream ${name} failed for good (no more attempts): ${status.failure.message}`
    case "Ready":
      return said === undefined ? undefined : `effect-mcp gateway: upstream ${name} is ready again`
    case "Connecting":
      return undefined
  }
}

/** Reports the host's upstreams on stderr for as long as the Layer lives. */
export const layerReport: Layer.Layer<never, never, McpHost.McpHost> = Layer.effectDiscard(
  Effect.gen(function* () {
    const host = yield* McpHost.McpHost
    // The failure last reported for each upstream that is down.
    const down = new Map<string, string>()
    yield* host.statusChanges.pipe(
      Stream.runForEach((change) => {
        const status = change.status
        const line = lineOf(change, down.get(change.server))
        if (status._tag === "Degraded" || status._tag === "Failed") down.set(change.server, status.failure.message)
        else if (status._tag === "Ready") down.delete(change.server)
        // A failure's text may quote the upstream (its stderr, its error): its control characters are escaped.
        return line === undefined ? Effect.void : Console.error(TerminalText.line(line))
      }),
      Effect.forkScoped
    )
  })
)
