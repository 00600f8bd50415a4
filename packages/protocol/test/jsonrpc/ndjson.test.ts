import { assert, describe, it } from "@effect/vitest"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as Ndjson from "@effect-mcp/protocol/Ndjson"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as fc from "fast-check"

const encoder = new TextEncoder()
const utf8 = (text: string) => encoder.encode(text)

/** Feeds every chunk, then ends, and returns everything the splitter produced. */
const splitAll = (chunks: ReadonlyArray<string | Uint8Array>, options?: Ndjson.SplitterOptions) => {
  const splitter = Ndjson.makeSplitter(options)
  const out: Array<Ndjson.Line> = []
  for (const chunk of chunks) out.push(...splitter.push(chunk))
  out.push(...splitter.end())
  return out
}

const describeLine = (line: Ndjson.Line) => (typeof line === "string" ? line : `<${line.reason}>`)

/** Cuts `input` at the given offsets. */
const cut = <A extends string | Uint8Array>(input: A, offsets: ReadonlyArray<number>): Array<A> => {
  const points = [...new Set(offsets.map((o) => o % (input.length + 1)))].sort((a, b) => a - b)
  const pieces: Array<A> = []
  let from = 0
  for (const point of [...points, input.length]) {
    pieces.push(input.slice(from, point) as A)
    from = point
  }
  return pieces
}

describe("Ndjson splitter", () => {
  it.effect("splits on \\n, drops a \\r before it, skips empty lines, keeps an unterminated last line", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(splitAll(["a\nb\r\n\n\r\nc\rd\ne"]), ["a", "b", "c\rd", "e"])
      assert.deepStrictEqual(splitAll([utf8("a\nb\r\n\n\r\nc\rd\ne")]), ["a", "b", "c\rd", "e"])
    })
  )

  it.effect("joins lines split across chunks, including a \\r\\n split between chunks", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(splitAll(['{"a"', ":1}\r", "\n{", "}\n"]), ['{"a":1}', "{}"])
      assert.deepStrictEqual(splitAll([utf8('{"a"'), utf8(":1}\r"), utf8("\n{"), utf8("}\n")]), ['{"a":1}', "{}"])
    })
  )

  it.effect("decodes a multi-byte character split across chunks at every byte", () =>
    Effect.sync(() => {
      const text = "é😀€\n"
      const bytes = utf8(text)
      for (let i = 0; i <= bytes.length; i++) {
        for (let j = i; j <= bytes.length; j++) {
          const chunks = [bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)]
          assert.deepStrictEqual(splitAll(chunks), ["é😀€"], `cut at ${i}, ${j}`)
        }
      }
    })
  )

  it.effect("any chunking of a stream of lines gives the same lines (strings and bytes)", () =>
    Effect.sync(() => {
      const line = fc
        .string({ unit: "grapheme" })
        .map((s) => s.replace(/[\r\n]/g, ""))
        .filter((s) => s.length > 0)
      fc.assert(
        fc.property(fc.array(line, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 6 }), (lines, offsets) => {
          const text = lines.map((l) => `${l}\n`).join("")
          assert.deepStrictEqual(splitAll(cut(text, offsets)), lines)
          assert.deepStrictEqual(splitAll(cut(utf8(text), offsets)), lines)
        })
      )
    })
  )

  it.effect("is not tricked by a chunk the producer reuses after handing it over", () =>
    Effect.sync(() => {
      const splitter = Ndjson.makeSplitter()
      const buffer = utf8("abc")
      assert.deepStrictEqual(splitter.push(buffer), [])
      buffer.set(utf8("xyz"))
      assert.deepStrictEqual(splitter.push(utf8("\n")), ["abc"])
    })
  )

  it.effect("reports invalid UTF-8 for that line only and keeps going", () =>
    Effect.sync(() => {
      const out = splitAll([utf8("a\n"), Uint8Array.from([0x62, 0xff, 0x0a]), utf8("c\n")])
      assert.deepStrictEqual(out.map(describeLine), ["a", "<InvalidUtf8>", "c"])
    })
  )

  it.effect(
    "many lines in one byte chunk: one bad line among good ones, and lines under a limit the chunk exceeds",
    () =>
      Effect.sync(() => {
        const chunk = Uint8Array.from([...utf8("a\r\n\nb"), 0xff, ...utf8("\nc\nd")])
        assert.deepStrictEqual(splitAll([chunk]).map(describeLine), ["a", "<InvalidUtf8>", "c", "d"])
        const lines = ["12345", "1234", "123456", "12"]
        assert.deepStrictEqual(
          splitAll([utf8(lines.map((l) => `${l}\n`).join(""))], { maxLineLength: 5 }).map(describeLine),
          ["12345", "1234", "<LineTooLong>", "12"]
        )
      })
  )

  it.effect("reports a too-long line once, as soon as the limit is passed, and resumes after it", () =>
    Effect.sync(() => {
      for (const asBytes of [false, true]) {
        const chunk = (s: string) => (asBytes ? utf8(s) : s)
        const splitter = Ndjson.makeSplitter({ maxLineLength: 5 })
        assert.deepStrictEqual(splitter.push(chunk("12345\n123")).map(describeLine), ["12345"])
        // The limit is passed before the line ends: reported now, not buffered.
        assert.deepStrictEqual(splitter.push(chunk("456")).map(describeLine), ["<LineTooLong>"])
        assert.deepStrictEqual(splitter.push(chunk("789")).map(describeLine), [])
        assert.deepStrictEqual(splitter.push(chunk("0\nok\n")).map(describeLine), ["ok"])
        // A too-long line inside one chunk.
        assert.deepStrictEqual(splitter.push(chunk("1234567\nok2\n")).map(describeLine), ["<LineTooLong>", "ok2"])
        assert.deepStrictEqual(splitter.end(), [])
      }
    })
  )

  it.effect("counts the limit in bytes for byte chunks", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(splitAll([utf8("éé\n")], { maxLineLength: 4 }), ["éé"])
      assert.deepStrictEqual(splitAll([utf8("ééé\n")], { maxLineLength: 4 }).map(describeLine), ["<LineTooLong>"])
      assert.deepStrictEqual(splitAll(["ééé\n"], { maxLineLength: 4 }), ["ééé"])
    })
  )

  it.effect("assembles a 10 MiB line arriving in 64 KiB chunks", () =>
    Effect.sync(() => {
      const size = 10 * 1024 * 1024
      const chunkSize = 64 * 1024
      const payload = "x".repeat(size - 64)
      const message = JsonRpc.notification("big", { payload })
      const line = JsonRpcCodec.encodeLine(message)
      const bytes = utf8(line)
      const splitter = Ndjson.makeSplitter({ maxLineLength: 16 * 1024 * 1024 })
      const lines: Array<Ndjson.Line> = []
      let pushes = 0
      for (let offset = 0; offset < bytes.length; offset += chunkSize) {
        lines.push(...splitter.push(bytes.subarray(offset, offset + chunkSize)))
        pushes++
      }
      assert.isAtLeast(pushes, 160)
      assert.strictEqual(lines.length, 1)
      assert.strictEqual((lines[0] as string).length, line.length - 1)
      assert.deepStrictEqual(Ndjson.decodeLine(lines[0]!), Result.succeed(message))
    })
  )

  it.effect("mixing string and byte chunks within a line", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(splitAll(["ab", utf8("cé"), "d\n", utf8("e"), "f\n"]), ["abcéd", "ef"])
    })
  )
})

describe("Ndjson channels", () => {
  it.effect("split as a Stream combinator", () =>
    Effect.gen(function* () {
      const lines = yield* Stream.make(utf8('{"a"'), ":1}\n", utf8("\n"), "tail").pipe(
        Stream.pipeThroughChannel(Ndjson.split()),
        Stream.runCollect
      )
      assert.deepStrictEqual(lines, ['{"a":1}', "tail"])
    })
  )

  it.effect("decodeMessages answers each bad line and keeps reading", () =>
    Effect.gen(function* () {
      const input = [
        JsonRpcCodec.encodeLine(JsonRpc.request(1, "ping")),
        "not json\n",
        '{"jsonrpc":"2.0","id":2}\n',
        "0123456789012345678901234567890123456789012345678901234567890123456789\n",
        JsonRpcCodec.encodeLine(JsonRpc.notification("n"))
      ].join("")
      const results = yield* Stream.make(utf8(input)).pipe(
        Stream.pipeThroughChannel(Ndjson.decodeMessages({ maxLineLength: 64 })),
        Stream.runCollect
      )
      const summary = results.map((r) =>
        Result.isSuccess(r) ? r.success : { reason: r.failure.reason, code: r.failure.code, id: r.failure.id }
      )
      assert.deepStrictEqual(summary, [
        JsonRpc.request(1, "ping"),
        { reason: "ParseError", code: -32700, id: null },
        { reason: "InvalidRequest", code: -32600, id: 2 },
        { reason: "FrameTooLarge", code: -32600, id: null },
        JsonRpc.notification("n")
      ])
    })
  )

  it.effect("an upstream failure is passed on without flushing the partial line", () =>
    Effect.gen(function* () {
      const result = yield* Stream.make("a\n", "partial").pipe(
        Stream.concat(Stream.fail("boom" as const)),
        Stream.pipeThroughChannel(Ndjson.split()),
        Stream.runCollect,
        Effect.flip
      )
      assert.strictEqual(result, "boom")
    })
  )

  it.effect("encodeMessages writes one NDJSON line per frame", () =>
    Effect.gen(function* () {
      const frames: ReadonlyArray<JsonRpc.Message | JsonRpc.Batch> = [
        JsonRpc.request(1, "a"),
        [JsonRpc.notification("b"), JsonRpc.success(2, { text: "x\ny" })]
      ]
      const text = (yield* Stream.fromIterable(frames).pipe(
        Stream.pipeThroughChannel(Ndjson.encodeMessages()),
        Stream.runCollect
      )).join("")
      assert.strictEqual(text, frames.map(JsonRpcCodec.encodeLine).join(""))
      const decoded = yield* Stream.make(text).pipe(
        Stream.pipeThroughChannel(Ndjson.decodeMessages()),
        Stream.runCollect
      )
      assert.deepStrictEqual(
        decoded,
        frames.map((frame) => Result.succeed(frame))
      )
    })
  )

  it.effect("encodeMessages fails on a frame JSON cannot represent", () =>
    Effect.gen(function* () {
      const error = yield* Stream.make(JsonRpc.success(1, { n: 1n })).pipe(
        Stream.pipeThroughChannel(Ndjson.encodeMessages()),
        Stream.runCollect,
        Effect.flip
      )
      assert.strictEqual(error._tag, "JsonRpcEncodeError")
    })
  )
})
