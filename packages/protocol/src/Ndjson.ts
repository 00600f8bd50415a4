/**
 * Newline-delimited JSON-RPC framing (the stdio transport): split incoming
 * chunks into lines, decode each line as one frame, encode frames as lines.
 *
 * Why not effect's `effect/encoding/Ndjson`: its decoders `JSON.parse` every
 * line themselves and fail the whole stream on the first bad line (invalid
 * JSON, invalid UTF-8, too long). An MCP peer must instead answer that line
 * with a ParseError / InvalidRequest and keep reading, and the codec wants the
 * raw line so the JSON is parsed exactly once. So the splitter here yields
 * lines and per-line failures as values, and never fails the stream.
 *
 * Lines end at "\n"; one "\r" before it is dropped; empty lines are skipped.
 * A "\n" byte never occurs inside a multi-byte UTF-8 sequence, so byte chunks
 * are split before decoding and a character split across chunks is decoded
 * whole. A bare "\r" is not a terminator: JSON text may contain it only as
 * whitespace, which `JSON.parse` accepts.
 */
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Effect from "effect/Effect"
import * as Pull from "effect/Pull"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { LineSplitter } from "./internal/ndjsonSplitter.ts"
import type * as JsonRpc from "./JsonRpc.ts"
import * as JsonRpcCodec from "./JsonRpcCodec.ts"

/**
 * A line that could not be delivered: longer than `maxLineLength` (reported
 * once, as soon as the limit is passed; the rest of that line is dropped), or
 * not UTF-8.
 */
export class NdjsonLineError extends Schema.TaggedError<NdjsonLineError>()("NdjsonLineError", {
  reason: Schema.Literals(["LineTooLong", "InvalidUtf8"]),
  limit: Schema.Number,
  /** The first bytes of an over-long line (its JSON-RPC id is recovered from them). */
  head: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return this.reason === "LineTooLong" ? `line exceeds ${this.limit}` : "line is not valid UTF-8"
  }
}

/** One item out of the splitter: a complete line (without terminator), or why a line was dropped. */
export type Line = string | NdjsonLineError

/** Settings of a line splitter. */
export interface SplitterOptions {
  /**
   * The longest line accepted, terminator excluded: UTF-8 bytes for byte
   * chunks, UTF-16 code units for string chunks. Unbounded by default.
   */
  readonly maxLineLength?: number | undefined
}

/** The plain stateful splitter, for hot paths that do not want a Channel per chunk. */
export interface Splitter {
  /** Feeds one chunk; returns the lines it completed, in order. */
  readonly push: (chunk: string | Uint8Array) => Array<Line>
  /** Ends the input; returns the final line if it had no terminator. The splitter can then be reused. */
  readonly end: () => Array<Line>
}

const lineError = (reason: "LineTooLong" | "InvalidUtf8", limit: number, head?: string) =>
  new NdjsonLineError(head === undefined ? { reason, limit } : { reason, limit, head })

const makeLineSplitter = (options?: SplitterOptions) =>
  new LineSplitter<NdjsonLineError>(options?.maxLineLength ?? Number.POSITIVE_INFINITY, lineError)

/** A splitter of newline-delimited JSON: feed it chunks, get complete lines. */
export const makeSplitter = (options?: SplitterOptions): Splitter => {
  const splitter = makeLineSplitter(options)
  return {
    push: (chunk) => {
      const out: Array<Line> = []
      splitter.push(chunk, out)
      return out
    },
    end: () => {
      const out: Array<Line> = []
      splitter.end(out)
      return out
    }
  }
}

/**
 * Decodes one item out of the splitter as a JSON-RPC frame. A too-long line
 * fails with reason `FrameTooLarge`, invalid UTF-8 with `ParseError`.
 */
export const decodeLine = (line: Line): Result.Result<JsonRpcCodec.Decoded, JsonRpcCodec.DecodeFailure> =>
  typeof line === "string"
    ? JsonRpcCodec.decode(line)
    : Result.fail(
        line.reason === "LineTooLong" ? JsonRpcCodec.frameTooLarge(line.limit, line.head) : JsonRpcCodec.invalidUtf8()
      )

/**
 * The splitter as a Channel, for `Stream.pipeThroughChannel`. The final line
 * is emitted when the upstream ends, even without a terminator; an upstream
 * failure is passed on without flushing a partial line.
 */
export const split = <IE = never, Done = unknown>(
  options?: SplitterOptions
): Channel.Channel<
  Arr.NonEmptyReadonlyArray<Line>,
  IE,
  Done,
  Arr.NonEmptyReadonlyArray<string | Uint8Array>,
  IE,
  Done
> =>
  Channel.fromTransform((upstream, _scope) =>
    Effect.sync(() => {
      const splitter = makeLineSplitter(options)
      let ended: { readonly leftover: Done } | undefined
      const pull: Pull.Pull<Arr.NonEmptyReadonlyArray<Line>, IE, Done> = Effect.suspend(() =>
        ended !== undefined
          ? Cause.done(ended.leftover)
          : Pull.matchEffect(upstream, {
              onSuccess: (chunks): Pull.Pull<Arr.NonEmptyReadonlyArray<Line>, IE, Done> => {
                const out: Array<Line> = []
                for (const chunk of chunks) splitter.push(chunk, out)
                return Arr.isArrayNonEmpty(out) ? Effect.succeed(out) : pull
              },
              onFailure: Effect.failCause,
              onDone: (leftover): Pull.Pull<Arr.NonEmptyReadonlyArray<Line>, never, Done> => {
                ended = { leftover }
                const out: Array<Line> = []
                splitter.end(out)
                return Arr.isArrayNonEmpty(out) ? Effect.succeed(out) : Cause.done(leftover)
              }
            })
      )
      return pull
    })
  )

/** Chunks in, one decode result per line out: `split` followed by `decodeLine`. */
export const decodeMessages = <IE = never, Done = unknown>(
  options?: SplitterOptions
): Channel.Channel<
  Arr.NonEmptyReadonlyArray<Result.Result<JsonRpcCodec.Decoded, JsonRpcCodec.DecodeFailure>>,
  IE,
  Done,
  Arr.NonEmptyReadonlyArray<string | Uint8Array>,
  IE,
  Done
> => Channel.map(split<IE, Done>(options), Arr.map(decodeLine))

/**
 * Frames in, one string of NDJSON lines per input chunk out. A frame JSON
 * cannot represent fails the channel with `JsonRpcEncodeError`.
 */
export const encodeMessages = <IE = never, Done = unknown>(): Channel.Channel<
  Arr.NonEmptyReadonlyArray<string>,
  IE | JsonRpcCodec.EncodeError,
  Done,
  Arr.NonEmptyReadonlyArray<JsonRpc.Message | JsonRpc.Batch>,
  IE,
  Done
> =>
  Channel.fromTransform((upstream, _scope) =>
    Effect.succeed(
      Effect.flatMap(upstream, (frames) => {
        const lines: Array<string> = new Array(frames.length + 1)
        for (let i = 0; i < frames.length; i++) {
          const encoded = JsonRpcCodec.encodeResult(frames[i]!)
          if (Result.isFailure(encoded)) return Effect.fail(encoded.failure)
          lines[i] = encoded.success
        }
        lines[frames.length] = ""
        return Effect.succeed(Arr.of(lines.join("\n")))
      })
    )
  )
