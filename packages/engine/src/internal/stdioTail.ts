/**
 * The last bytes a child process wrote to stderr, kept for the error that
 * reports its exit. Chunks are stored as received and dropped from the front
 * once the rest covers the limit, so memory stays near the limit and nothing
 * is copied until the tail is read.
 */

// The engine compiles without DOM or Node typings; the global is declared with
// just the members used (every runtime effect supports has it).
declare const TextDecoder: new (
  label: "utf-8",
  options: { readonly fatal: boolean }
) => {
  decode(input: Uint8Array): string
}

const lenientDecoder = new TextDecoder("utf-8", { fatal: false })

export class Tail {
  private chunks: Array<Uint8Array> = []
  // Index of the oldest kept chunk; dropped chunks are compacted away in bulk.
  private head = 0
  private size = 0
  private readonly limit: number

  constructor(limit: number) {
    this.limit = Math.max(0, Math.floor(limit))
  }

  push(chunk: Uint8Array): void {
    if (this.limit === 0 || chunk.length === 0) return
    if (chunk.length >= this.limit) {
      this.chunks = [chunk.subarray(chunk.length - this.limit)]
      this.head = 0
      this.size = this.limit
      return
    }
    this.chunks.push(chunk)
    this.size += chunk.length
    while (this.size - this.chunks[this.head]!.length >= this.limit) {
      this.size -= this.chunks[this.head]!.length
      this.head++
    }
    if (this.head > 64 && this.head * 2 > this.chunks.length) {
      this.chunks = this.chunks.slice(this.head)
      this.head = 0
    }
  }

  /** The last `limit` bytes as text; a character cut at the start is dropped rather than shown as U+FFFD. */
  text(): string {
    if (this.size === 0) return ""
    const bytes = new Uint8Array(this.size)
    let offset = 0
    for (let i = this.head; i < this.chunks.length; i++) {
      const chunk = this.chunks[i]!
      bytes.set(chunk, offset)
      offset += chunk.length
    }
    let start = Math.max(0, bytes.length - this.limit)
    // UTF-8 continuation bytes are 0b10xxxxxx; at most three follow a lead byte.
    for (let i = 0; i < 3 && start < bytes.length && (bytes[start]! & 0xc0) === 0x80; i++) start++
    return lenientDecoder.decode(bytes.subarray(start))
  }
}
