/**
 * What an in-process transport offers the Peer beyond the Transport
 * contract: sending a frame as a plain call. A frame that can be buffered
 * without waiting is taken at once, so the Peer needs no effect (and no
 * fiber) to send a request or a response; otherwise the Peer sends through
 * the contract's `send`, which waits for room or fails.
 */
import type * as Transport from "../Transport.ts"

const sendNowKey: unique symbol = Symbol.for("@effect-mcp/engine/Transport/sendNow")

/** Takes `frame` if it can without waiting; false when it must go through `send`. */
export type SendNow = (frame: Transport.Outgoing) => boolean

export interface DirectSend {
  readonly [sendNowKey]: SendNow
}

/** Adds `sendNow` to a transport, not enumerable: a copy made by spreading it sends through its own `send`. */
export const withSendNow = <T extends Transport.TransportShape>(transport: T, sendNow: SendNow): T & DirectSend =>
  Object.defineProperty(transport, sendNowKey, { value: sendNow }) as T & DirectSend

export const sendNowOf = (transport: Transport.TransportShape): SendNow | undefined =>
  (transport as Partial<DirectSend>)[sendNowKey]
