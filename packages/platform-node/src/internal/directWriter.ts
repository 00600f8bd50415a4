/**
 * Node-only (`node:fs`): a writable stream as the engine's `DirectWriter`,
 * writing a line with one `write(2)` on the stream's file descriptor while
 * nothing is buffered in front of it.
 *
 * A `Writable.write` to a pipe costs a write request, a completion callback
 * and a `process.nextTick` per line before and after the system call; on a
 * sequential stdio exchange those run on the path of every message, in both
 * processes (W2). The stream stays the owner of everything else: a line the
 * pipe does not take whole (full, `EAGAIN`, a partial write) or a failure
 * (`EPIPE` from an exited reader) goes through `stream.write`, which queues
 * the rest behind the pipe's backpressure or reports the failure to the
 * stream's listeners (the transport's sink), as before; a stream with bytes
 * still buffered is written through `stream.write` too, so order is kept.
 */
import type * as StdioTransport from "@effect-mcp/engine/StdioTransport"
import * as Fs from "node:fs"
import type { Writable } from "node:stream"

/**
 * `stream` written directly on `fd` (undefined: the descriptor is not known,
 * every line goes through the stream).
 */
export const directWriter = (lookup: () => Writable, fdOf: () => number | undefined): StdioTransport.DirectWriter => {
  // Looked up once: `process.stdout` is a getter, read on the path of every line otherwise.
  let stream: Writable | undefined
  const evaluate = () => (stream ??= lookup())
  // Looked up on the first write: `process.stdout` exists only once asked for. Not on Windows, whose
  // pipes Node opens for overlapped I/O: a synchronous write there is not what the stream expects.
  let fd: number | undefined | null = null
  const target = (stream: Writable): number | undefined => {
    if (fd === null) fd = process.platform === "win32" ? undefined : fdOf()
    return stream.writableLength === 0 ? fd : undefined
  }
  // Writes what the pipe takes now; the rest (or everything, on a failure) goes through the stream.
  const writeBytes = (stream: Writable, chunk: Uint8Array): void => {
    const to = target(stream)
    let written = 0
    if (to !== undefined) {
      try {
        written = Fs.writeSync(to, chunk)
      } catch {
        // EAGAIN (full), or a failure the stream reports when it meets it too.
      }
    }
    if (written < chunk.length) stream.write(written === 0 ? chunk : chunk.subarray(written))
  }
  return {
    ready: () => {
      const stream = evaluate()
      return stream.writable && !stream.writableNeedDrain
    },
    write: (chunk) => writeBytes(evaluate(), chunk),
    writeText: (line) => {
      const stream = evaluate()
      const to = target(stream)
      if (to === undefined) {
        stream.write(line)
        return
      }
      let written = 0
      try {
        written = Fs.writeSync(to, line)
      } catch {
        stream.write(line)
        return
      }
      // A partial write (a line longer than the pipe's free space): the rest as bytes.
      if (written < Buffer.byteLength(line)) stream.write(Buffer.from(line).subarray(written))
    }
  }
}

/** The file descriptor under a Node net stream (a child's pipe), when Node exposes it. */
export const handleFd = (stream: Writable): number | undefined => {
  const fd = (stream as { readonly _handle?: { readonly fd?: unknown } })._handle?.fd
  return typeof fd === "number" && fd >= 0 ? fd : undefined
}
