/**
 * The frames of the direct hop between runners (nodeHop.ts, hopServer.ts):
 * one connection carries one exchange at a time, as a keep-alive HTTP
 * connection does, in frames that need no HTTP parser on either side.
 *
 * A frame is its length (4 bytes, big-endian, what follows it), its kind (1
 * byte) and its payload. A connection opens with `Hello` (the owner's secret),
 * which the owner answers with `Welcome` before it reads anything else: a
 * connection closed before `Welcome` served nothing (a process that is not
 * the owner, or no longer the one the address named). Then each exchange is
 * one `Request` (its head as JSON, then its body) and
 * its reply: a `Head` carrying the whole body, or a `Head` marked streamed
 * followed by `Chunk`s and an `End` (or a `Cut` when the owner's stream
 * failed).
 */

/** The kinds of frame. */
export const Kind = {
  Hello: 1,
  Request: 2,
  Head: 3,
  Chunk: 4,
  End: 5,
  Cut: 6,
  Welcome: 7
} as const

/** The largest frame a side accepts: a body the endpoint takes (4 MiB) with room for its head. */
export const MAX_FRAME_BYTES = 4 * 1024 * 1024 + 64 * 1024

/** A request's head. */
export interface RequestHead {
  readonly method: string
  readonly url: string
  readonly headers: Record<string, string | number>
}

/** A reply's head: `streamed` replies send their body in `Chunk` frames. */
export interface ReplyHead {
  readonly status: number
  readonly headers: Record<string, string>
  readonly contentType: string | undefined
  readonly streamed: boolean
}

const empty = Buffer.alloc(0)

/** A frame of `kind` whose payload is `head` (JSON, when given, length first) then `body`. */
export const frame = (kind: number, head: object | undefined, body: Uint8Array | string = empty): Buffer => {
  const headText = head === undefined ? undefined : JSON.stringify(head)
  const headBytes = headText === undefined ? 0 : Buffer.byteLength(headText)
  const bodyBytes = typeof body === "string" ? Buffer.byteLength(body) : body.byteLength
  const prefix = head === undefined ? 5 : 9
  const out = Buffer.allocUnsafe(prefix + headBytes + bodyBytes)
  out.writeUInt32BE(out.length - 4, 0)
  out[4] = kind
  if (headText !== undefined) {
    out.writeUInt32BE(headBytes, 5)
    out.write(headText, 9, "utf8")
  }
  if (typeof body === "string") out.write(body, prefix + headBytes, "utf8")
  else out.set(body, prefix + headBytes)
  return out
}

/** A frame read: its kind and payload (a view into the bytes read). */
export interface Frame {
  readonly kind: number
  readonly payload: Buffer
}

/** A payload's JSON head and the body after it. */
export const split = <A>(payload: Buffer): { readonly head: A; readonly body: Buffer } => {
  const length = payload.readUInt32BE(0)
  return {
    head: JSON.parse(payload.toString("utf8", 4, 4 + length)) as A,
    body: payload.subarray(4 + length)
  }
}

/**
 * Splits the bytes of a connection into frames, calling `onFrame` for each
 * whole one; `onInvalid` once for a frame above `MAX_FRAME_BYTES` (the
 * connection is then to be closed: nothing after it can be trusted). The
 * pieces of a frame are joined once, when it is whole.
 */
export const reader = (onFrame: (frame: Frame) => void, onInvalid: () => void) => {
  let parts: Array<Buffer> = []
  let size = 0
  // The size of the frame being read (its length prefix included), once known.
  let need: number | undefined
  let invalid = false
  return (chunk: Buffer): void => {
    if (invalid) return
    parts.push(chunk)
    size += chunk.length
    if (need === undefined && size >= 4) {
      const first = parts[0]!.length >= 4 ? parts[0]! : Buffer.concat(parts, size)
      const length = first.readUInt32BE(0)
      if (length < 1 || length > MAX_FRAME_BYTES) {
        invalid = true
        onInvalid()
        return
      }
      need = 4 + length
    }
    if (need === undefined || size < need) return
    const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size)
    parts = []
    size = 0
    need = undefined
    let at = 0
    while (bytes.length - at >= 4) {
      const length = bytes.readUInt32BE(at)
      if (length < 1 || length > MAX_FRAME_BYTES) {
        invalid = true
        onInvalid()
        return
      }
      if (bytes.length - at - 4 < length) {
        need = 4 + length
        break
      }
      onFrame({ kind: bytes[at + 4]!, payload: bytes.subarray(at + 5, at + 4 + length) })
      if (invalid) return
      at += 4 + length
    }
    if (at < bytes.length) {
      parts = [bytes.subarray(at)]
      size = bytes.length - at
    }
  }
}
