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
 * one `Request` (its head, then its body) and
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
  readonly headers: Record<string, string>
}

/** A reply's head: `streamed` replies send their body in `Chunk` frames. */
export interface ReplyHead {
  readonly status: number
  readonly headers: Record<string, string>
  readonly contentType: string | undefined
  readonly streamed: boolean
}

/** A frame read: its kind and payload (a view into the bytes read). */
export interface Frame {
  readonly kind: number
  readonly payload: Buffer
}

const empty = Buffer.alloc(0)

// A head is a few fixed fields, then strings, each its UTF-8 length (4 bytes) and its bytes: a
// request's method, path and header names and values in turn; a reply's content type (when it has
// one) and header names and values. Nothing in it is JSON: the body is the only JSON a frame holds,
// and only the owner's handler reads it.
const STREAMED = 1
const TYPED = 2

const stringsBytes = (strings: ReadonlyArray<string>): number => {
  let bytes = 0
  for (const text of strings) bytes += 4 + Buffer.byteLength(text)
  return bytes
}

const writeStrings = (out: Buffer, at: number, strings: ReadonlyArray<string>): number => {
  for (const text of strings) {
    const written = out.write(text, at + 4, "utf8")
    out.writeUInt32BE(written, at)
    at += 4 + written
  }
  return at
}

/** `headers` as names and values in turn. */
const pairs = (first: ReadonlyArray<string>, headers: Record<string, string>): Array<string> => {
  const strings = [...first]
  for (const name in headers) strings.push(name, headers[name]!)
  return strings
}

/** A frame: its length, its kind, `fixed` bytes of head fields, its head's strings (length first when any), then `body`. */
const make = (
  kind: number,
  fixed: number,
  writeFixed: (out: Buffer, at: number) => void,
  strings: ReadonlyArray<string> | undefined,
  body: Uint8Array | string
): Buffer => {
  const headBytes = strings === undefined ? 0 : 4 + fixed + stringsBytes(strings)
  const bodyBytes = typeof body === "string" ? Buffer.byteLength(body) : body.byteLength
  const out = Buffer.allocUnsafe(5 + headBytes + bodyBytes)
  out.writeUInt32BE(out.length - 4, 0)
  out[4] = kind
  if (strings !== undefined) {
    out.writeUInt32BE(headBytes - 4, 5)
    writeFixed(out, 9)
    writeStrings(out, 9 + fixed, strings)
  }
  if (typeof body === "string") out.write(body, 5 + headBytes, "utf8")
  else out.set(body, 5 + headBytes)
  return out
}

const nothing = () => {}

/** A frame of `kind` without a head: `Hello` (the secret), `Welcome`, `Chunk`, `End`, `Cut`. */
export const frame = (kind: number, body: Uint8Array | string = empty): Buffer =>
  make(kind, 0, nothing, undefined, body)

/** A `Request` frame. */
export const request = (head: RequestHead, body: Uint8Array | string = empty): Buffer =>
  make(Kind.Request, 0, nothing, pairs([head.method, head.url], head.headers), body)

/** A `Head` frame: a whole reply (with `body`) or the start of a streamed one. */
export const reply = (head: ReplyHead, body: Uint8Array | string = empty): Buffer =>
  make(
    Kind.Head,
    3,
    (out, at) => {
      out.writeUInt16BE(head.status, at)
      out[at + 2] = (head.streamed ? STREAMED : 0) | (head.contentType === undefined ? 0 : TYPED)
    },
    pairs(head.contentType === undefined ? [] : [head.contentType], head.headers),
    body
  )

/** A payload's head (its fixed fields at `at`, then its strings) and the body after it; throws a RangeError when cut. */
const readHead = (payload: Buffer, fixed: number) => {
  const end = 4 + payload.readUInt32BE(0)
  if (end > payload.length || 4 + fixed > end) throw new RangeError("a hop frame's head is cut")
  const strings: Array<string> = []
  let at = 4 + fixed
  while (at < end) {
    if (at + 4 > end) throw new RangeError("a hop frame's head is cut")
    const length = payload.readUInt32BE(at)
    if (at + 4 + length > end) throw new RangeError("a hop frame's head is cut")
    strings.push(payload.toString("utf8", at + 4, at + 4 + length))
    at += 4 + length
  }
  return { strings, body: payload.subarray(end) }
}

const headersOf = (strings: ReadonlyArray<string>, from: number): Record<string, string> => {
  if ((strings.length - from) % 2 !== 0) throw new RangeError("a hop frame's header has no value")
  const headers: Record<string, string> = {}
  for (let i = from; i < strings.length; i += 2) headers[strings[i]!] = strings[i + 1]!
  return headers
}

/** A `Request` frame's head and body; throws a RangeError for a payload that is not one. */
export const readRequest = (payload: Buffer): { readonly head: RequestHead; readonly body: Buffer } => {
  const { strings, body } = readHead(payload, 0)
  if (strings.length < 2) throw new RangeError("a hop request without its method and path")
  return { head: { method: strings[0]!, url: strings[1]!, headers: headersOf(strings, 2) }, body }
}

/** A `Head` frame's head and body; throws a RangeError for a payload that is not one. */
export const readReply = (payload: Buffer): { readonly head: ReplyHead; readonly body: Buffer } => {
  const { strings, body } = readHead(payload, 3)
  const flags = payload[6]!
  const typed = (flags & TYPED) !== 0
  if (typed && strings.length === 0) throw new RangeError("a hop reply without its content type")
  return {
    head: {
      status: payload.readUInt16BE(4),
      headers: headersOf(strings, typed ? 1 : 0),
      contentType: typed ? strings[0] : undefined,
      streamed: (flags & STREAMED) !== 0
    },
    body
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
