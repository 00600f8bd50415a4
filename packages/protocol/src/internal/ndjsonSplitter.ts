/**
 * The incremental line splitter behind `Ndjson`. Linear in the input: a line
 * spanning many chunks is kept as a list of pieces and joined once when its
 * terminator arrives, never by repeated concatenation.
 */
import { lenientUtf8Decoder, utf8Decoder, utf8Encoder } from "./jsonRpcUtf8.ts"

export type LineFailure = "LineTooLong" | "InvalidUtf8"

/** How much of an over-long line is kept to recover its id. */
const headLength = 256
const LF = 0x0a
const CR = 0x0d

export class LineSplitter<E> {
  // Pieces of the current, unterminated line. Only one list is in use at a
  // time: string chunks fill `text`, byte chunks fill `bytes`.
  private text: Array<string> = []
  private bytes: Array<Uint8Array> = []
  private pending = 0
  // Set after an over-long line was reported: its remaining input is dropped
  // up to the next terminator, so memory stays bounded by `max`.
  private discarding = false
  private readonly max: number
  private readonly fail: (reason: LineFailure, limit: number, head?: string) => E

  /** `fail` gets, for an over-long line, its first bytes (`headLength` at most), to recover its id. */
  constructor(max: number, fail: (reason: LineFailure, limit: number, head?: string) => E) {
    this.max = max
    this.fail = fail
  }

  push(chunk: string | Uint8Array, out: Array<string | E>): void {
    if (typeof chunk === "string") {
      // A line that started as bytes stays bytes.
      if (this.bytes.length > 0) this.pushBytes(utf8Encoder.encode(chunk), out)
      else this.pushText(chunk, out)
    } else {
      if (this.text.length > 0) {
        const head = utf8Encoder.encode(this.text.join(""))
        this.text = []
        this.bytes.push(head)
        this.pending = head.length
      }
      this.pushBytes(chunk, out)
    }
  }

  end(out: Array<string | E>): void {
    if (this.discarding) {
      this.discarding = false
    } else if (this.text.length > 0) {
      const line = this.text.length === 1 ? this.text[0]! : this.text.join("")
      this.emitText(line, out)
    } else if (this.bytes.length > 0) {
      this.emitBytes(this.takeBytes(), out)
    }
    this.reset()
  }

  private reset(): void {
    this.text = []
    this.bytes = []
    this.pending = 0
  }

  private overflow(out: Array<string | E>, discardRest: boolean, chunk: string | Uint8Array, start: number): void {
    out.push(this.fail("LineTooLong", this.max, this.head(chunk, start)))
    this.reset()
    this.discarding = discardRest
  }

  // The start of the line being dropped: its first piece, or the chunk it starts in.
  private head(chunk: string | Uint8Array, start: number): string {
    const first = this.text[0] ?? this.bytes[0] ?? chunk.slice(start, start + headLength)
    const piece = first.slice(0, headLength)
    // Lenient: the cut may split a character, and the line may not be UTF-8 at all.
    return typeof piece === "string" ? piece : lenientUtf8Decoder.decode(piece)
  }

  private pushText(chunk: string, out: Array<string | E>): void {
    let start = 0
    let nl = chunk.indexOf("\n")
    while (nl !== -1) {
      if (this.discarding) {
        this.discarding = false
      } else if (this.pending + nl - start > this.max) {
        this.overflow(out, false, chunk, start)
      } else if (this.text.length === 0) {
        this.emitText(chunk.slice(start, nl), out)
      } else {
        this.text.push(chunk.slice(start, nl))
        this.emitText(this.text.join(""), out)
        this.reset()
      }
      start = nl + 1
      nl = chunk.indexOf("\n", start)
    }
    if (start >= chunk.length || this.discarding) return
    const size = chunk.length - start
    if (this.pending + size > this.max) {
      this.overflow(out, true, chunk, start)
    } else {
      this.text.push(start === 0 ? chunk : chunk.slice(start))
      this.pending += size
    }
  }

  private pushBytes(chunk: Uint8Array, out: Array<string | E>): void {
    let start = 0
    let nl = chunk.indexOf(LF)
    // The first line may finish one begun in earlier chunks, or a dropped one.
    if (nl !== -1 && (this.discarding || this.bytes.length > 0)) {
      this.lineFromBytes(chunk, start, nl, out)
      start = nl + 1
      nl = chunk.indexOf(LF, start)
    }
    if (nl !== -1) {
      const last = chunk.lastIndexOf(LF)
      // The remaining complete lines all fit the limit, so they are decoded
      // with one call; a UTF-8 error falls back to line by line to find its line.
      if (last - start <= this.max && this.emitDecoded(chunk.subarray(start, last), out)) {
        start = last + 1
      } else {
        while (nl !== -1) {
          this.lineFromBytes(chunk, start, nl, out)
          start = nl + 1
          nl = chunk.indexOf(LF, start)
        }
      }
    }
    if (start >= chunk.length || this.discarding) return
    const size = chunk.length - start
    if (this.pending + size > this.max) {
      this.overflow(out, true, chunk, start)
    } else {
      // Copied: the producer may reuse its buffer once the chunk is handed over.
      this.bytes.push(chunk.slice(start))
      this.pending += size
    }
  }

  private lineFromBytes(chunk: Uint8Array, start: number, nl: number, out: Array<string | E>): void {
    if (this.discarding) {
      this.discarding = false
    } else if (this.pending + nl - start > this.max) {
      this.overflow(out, false, chunk, start)
    } else if (this.bytes.length === 0) {
      this.emitBytes(chunk.subarray(start, nl), out)
    } else {
      this.bytes.push(chunk.subarray(start, nl))
      this.emitBytes(this.takeBytes(), out)
    }
  }

  /** Emits the "\n"-separated lines of `bytes`; false, emitting nothing, when they are not all UTF-8. */
  private emitDecoded(bytes: Uint8Array, out: Array<string | E>): boolean {
    let text: string
    try {
      text = utf8Decoder.decode(bytes)
    } catch {
      return false
    }
    let from = 0
    let nl = text.indexOf("\n")
    while (nl !== -1) {
      this.emitText(text.slice(from, nl), out)
      from = nl + 1
      nl = text.indexOf("\n", from)
    }
    this.emitText(from === 0 ? text : text.slice(from), out)
    return true
  }

  private takeBytes(): Uint8Array {
    const pieces = this.bytes
    let length = 0
    for (const piece of pieces) length += piece.length
    const line = new Uint8Array(length)
    let offset = 0
    for (const piece of pieces) {
      line.set(piece, offset)
      offset += piece.length
    }
    this.reset()
    return line
  }

  // Empty lines carry no message and are skipped; a "\r" before the "\n" is dropped.
  private emitText(line: string, out: Array<string | E>): void {
    const end = line.charCodeAt(line.length - 1) === CR ? line.length - 1 : line.length
    if (end > 0) out.push(end === line.length ? line : line.slice(0, end))
  }

  private emitBytes(line: Uint8Array, out: Array<string | E>): void {
    const end = line[line.length - 1] === CR ? line.length - 1 : line.length
    if (end === 0) return
    try {
      out.push(utf8Decoder.decode(end === line.length ? line : line.subarray(0, end)))
    } catch {
      out.push(this.fail("InvalidUtf8", this.max))
    }
  }
}
