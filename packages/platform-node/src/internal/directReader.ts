/**
 * A Node readable as the engine's `DirectReader`: its bytes are pushed to the
 * transport from the `data` events, with no fiber or queue in between.
 */
import type * as StdioTransport from "@effect-mcp/engine/StdioTransport"
import * as NodeBuffer from "node:buffer"
import type { Readable } from "node:stream"

// Feature-tested: Node has it from 19.6; a runtime's Node compatibility may not.
const isAscii = (NodeBuffer as { readonly isAscii?: (input: Uint8Array) => boolean }).isAscii

/**
 * Chunks above this size (pieces of a large message) stay bytes: the byte path
 * decodes such a message once, whole, and keeps its pieces off the JavaScript
 * heap. A 10 MiB echo over stdio took 184-205 ms per call with this limit
 * against 199-209 ms with none (three alternating runs).
 */
const textChunkLimit = 16 * 1024

/**
 * A chunk as text when it is small and ASCII, as nearly every MCP frame is:
 * its lines then need no UTF-8 decoding. Node checks and decodes it in two
 * native calls, where the splitter's byte path (search the bytes, take a
 * subarray, a strict `TextDecoder`) cost 2.7-6.3 µs more per message on the
 * W2 stdio server, measured in-process with one message per wake-up (four
 * alternating pairs). Any other chunk stays bytes, decoded strictly by the
 * splitter.
 */
const asciiText = (chunk: Buffer): string | undefined =>
  chunk.length <= textChunkLimit && isAscii?.(chunk) ? chunk.toString("latin1") : undefined

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
    const onData = (chunk: Buffer) => handlers.chunk(chunk, asciiText(chunk))
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
