/**
 * A Node readable as the engine's `DirectReader`: its bytes are pushed to the
 * transport from the `data` events, with no fiber or queue in between.
 */
import type * as StdioTransport from "@effect-mcp/engine/StdioTransport"
import type { Readable } from "node:stream"

/**
 * The readable `evaluate` returns (on start: `process.stdin` exists only once
 * asked for) as a `DirectReader`; `what` names it in the error for a close
 * before its end.
 */
export const directReader = (evaluate: () => Readable, what: string): StdioTransport.DirectReader => ({
  start: (handlers) => {
    const readable = evaluate()
    let ended = false
    let paused = false
    const onData = (chunk: Uint8Array) => handlers.chunk(chunk)
    const onEnd = () => {
      ended = true
      handlers.end()
    }
    const onError = (error: Error) => handlers.fail(error)
    const onClose = () => {
      if (!ended) handlers.fail(new Error(`${what} closed before its end`))
    }
    readable.on("data", onData)
    readable.on("end", onEnd)
    readable.on("error", onError)
    readable.on("close", onClose)
    return {
      pause: () => {
        if (paused) return
        paused = true
        readable.pause()
      },
      resume: () => {
        if (!paused) return
        paused = false
        readable.resume()
      },
      stop: () => {
        readable.off("data", onData)
        readable.off("end", onEnd)
        readable.off("error", onError)
        readable.off("close", onClose)
        readable.pause()
      }
    }
  }
})
