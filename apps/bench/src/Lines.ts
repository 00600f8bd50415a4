/**
 * Newline-delimited text from a byte stream, split in linear time: chunks
 * are kept until a newline arrives and joined once per line.
 */
import type { Readable } from "node:stream"

export const lines = (input: Readable, onLine: (line: string) => void): void => {
  let pending: Array<Buffer> = []
  input.on("data", (chunk: Buffer) => {
    let start = 0
    let newline = chunk.indexOf(10, start)
    while (newline >= 0) {
      const piece = chunk.subarray(start, newline)
      const line = pending.length === 0 ? piece.toString("utf8") : Buffer.concat([...pending, piece]).toString("utf8")
      pending = []
      if (line.length > 0) onLine(line)
      start = newline + 1
      newline = chunk.indexOf(10, start)
    }
    if (start < chunk.length) pending.push(chunk.subarray(start))
  })
}
