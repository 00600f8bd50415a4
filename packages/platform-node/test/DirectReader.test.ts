/**
 * platform-node's `DirectReader` over a Node readable: every `data` chunk is
 * reported as bytes, and as text too when it is ASCII and at most 16 KiB (the
 * inbox's splitter then decodes nothing); a larger one, or one with any other
 * byte (UTF-8 beyond ASCII, part of a character, not UTF-8 at all), is
 * reported as bytes alone, for the splitter's strict decoding.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as StdioTransport from "@effect-mcp/engine/StdioTransport"
import { Readable } from "node:stream"
import { directReader } from "../src/internal/directReader.ts"

type Chunk = { readonly bytes: Array<number>; readonly text: string | undefined }

type Handlers = Parameters<StdioTransport.DirectReader["start"]>[0]

/** A readable the test pushes to by hand, read by the reader; what the handlers saw, once `count` chunks came. */
const started = (count: number) => {
  const readable = new Readable({ read() {} })
  const chunks: Array<Chunk> = []
  let resolve: (chunks: Array<Chunk>) => void = () => {}
  const all = new Promise<Array<Chunk>>((done) => {
    resolve = done
  })
  const handlers: Handlers = {
    chunk: (chunk, text) => {
      chunks.push({ bytes: [...chunk], text })
      if (chunks.length === count) resolve(chunks)
    },
    end: () => {},
    fail: () => {}
  }
  const subscription = directReader(() => readable, "test input").start(handlers)
  return { readable, all, subscription }
}

describe("the Node DirectReader", () => {
  it("reports a small ASCII chunk with its text, any other chunk as bytes alone", async () => {
    const { readable, all, subscription } = started(6)
    const ascii = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    readable.push(Buffer.from(ascii))
    readable.push(Buffer.from("caf\u00e9\n"))
    // The two bytes of U+00E9 split over two chunks, then a byte that is not UTF-8 at all.
    readable.push(Buffer.from([0x63, 0xc3]))
    readable.push(Buffer.from([0xa9, 0x0a]))
    readable.push(Buffer.from([0x7b, 0xff, 0x7d, 0x0a]))
    // A piece of a large message: ASCII, but above the 16 KiB the reader decodes as text.
    const large = Buffer.from("x".repeat(16 * 1024 + 1))
    readable.push(large)
    // A flowing readable hands its buffered chunks over one `data` event each.
    const chunks = await all
    subscription.stop()
    assert.deepStrictEqual(chunks, [
      { bytes: [...Buffer.from(ascii)], text: ascii },
      { bytes: [...Buffer.from("caf\u00e9\n")], text: undefined },
      { bytes: [0x63, 0xc3], text: undefined },
      { bytes: [0xa9, 0x0a], text: undefined },
      { bytes: [0x7b, 0xff, 0x7d, 0x0a], text: undefined },
      { bytes: [...large], text: undefined }
    ])
  })
})
