/**
 * Text carried through an object-mode memory pair. The memory transport hands
 * objects over untouched, so a sender can wrap JSON text (well formed or not)
 * in a `RawFrame` and the receiving end's wrapper decodes it with the real
 * codec: the code under test then sees exactly what a text transport would
 * have delivered, `Result.fail` frames included.
 */
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"

class RawFrame {
  readonly text: string
  constructor(text: string) {
    this.text = text
  }
}

/** The frame to hand to an object-mode `send` so that `text` arrives decoded. */
export const wrap = (text: string): Transport.Outgoing => new RawFrame(text) as unknown as Transport.Outgoing

/** Decodes a wrapped text frame; every other frame passes unchanged. */
export const unwrap = (incoming: Transport.Incoming): Transport.Incoming =>
  Result.isSuccess(incoming) && (incoming.success as unknown) instanceof RawFrame
    ? JsonRpcCodec.decode((incoming.success as unknown as RawFrame).text)
    : incoming

/** Encodes `frame` to text the way a text transport would, refusing values JSON cannot carry. */
export const encode = (frame: Transport.Outgoing): Effect.Effect<Transport.Outgoing, Transport.TransportError> => {
  const encoded = JsonRpcCodec.encodeResult(frame)
  return Result.isSuccess(encoded)
    ? Effect.succeed(wrap(encoded.success))
    : Effect.fail(
        new Transport.TransportError({ reason: "Protocol", message: encoded.failure.message, cause: encoded.failure })
      )
}
