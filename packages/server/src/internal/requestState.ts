/**
 * The `requestState` of 2026-07-28 multi-round-trip requests: what the server
 * must remember between rounds (the answers received so far, the input
 * requests still open, the request they belong to), carried by the client
 * and protected against tampering with HMAC-SHA256 under a key generated per
 * server. A state is bound to one request (method and params, less the retry
 * fields) and expires.
 */
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Clock from "effect/Clock"
import * as Mac from "effect/crypto/Mac"
import * as Base64Url from "effect/encoding/Base64Url"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"

export interface State {
  /** Answers to earlier rounds, by input-request key. */
  readonly answered: { readonly [key: string]: unknown }
  /** Input requests of the last round still awaiting an answer: key -> method. */
  readonly pending: { readonly [key: string]: string }
}

interface Payload extends State {
  readonly v: 1
  /** Fingerprint of the request the state belongs to. */
  readonly f: string
  /** Expiry, epoch milliseconds. */
  readonly e: number
}

export interface Codec {
  readonly seal: (fingerprint: string, state: State) => Effect.Effect<string>
  readonly open: (fingerprint: string, token: string) => Effect.Effect<State, McpError.InvalidParams>
  /** A keyed fingerprint of a request's method and params (retry fields excluded). */
  readonly fingerprint: (method: string, params: unknown) => Effect.Effect<string>
}

const retryKeys = new Set(["_meta", "inputResponses", "requestState"])

/** JSON with object keys sorted, so equal values give equal text. */
export const canonical = (value: unknown, top = true): string => {
  if (Array.isArray(value)) return `[${value.map((v) => canonical(v, false)).join(",")}]`
  if (Predicate.isObject(value)) {
    const entries = Object.entries(value as { readonly [key: string]: unknown })
      .filter(([k, v]) => v !== undefined && !(top && retryKeys.has(k)))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v, false)}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

const invalid = (why: string) => new McpError.InvalidParams({ message: `Invalid params: requestState ${why}` })

// Bytes of text: base64url of a string holds its UTF-8 bytes, so decoding it back yields them.
const bytesOf = (text: string): Uint8Array => Result.getOrThrow(Base64Url.decode(Base64Url.encode(text)))

export const make = (options: { readonly ttlMs: number }): Effect.Effect<Codec, never, Mac.Mac> =>
  Effect.gen(function* () {
    const mac = yield* Mac.Mac
    // Made on first use: most servers never seal a request state, and making a
    // key loads the platform's crypto, a visible share of a stdio server's start.
    const key = yield* Effect.cached(Effect.orDie(mac.generateKey(Mac.hmacSha256)))
    const sign = (data: Uint8Array) => Effect.flatMap(key, (key) => Effect.orDie(mac.sign(key, data)))

    const seal: Codec["seal"] = (fingerprint, state) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const payload: Payload = { v: 1, f: fingerprint, e: now + options.ttlMs, ...state }
        const body = Base64Url.encode(JSON.stringify(payload))
        const tag = yield* sign(bytesOf(body))
        return `${body}.${Base64Url.encode(tag)}`
      })

    const open: Codec["open"] = (fingerprint, token) =>
      Effect.gen(function* () {
        const dot = token.indexOf(".")
        const tag = dot < 0 ? undefined : Base64Url.decode(token.slice(dot + 1))
        if (tag === undefined || Result.isFailure(tag)) return yield* invalid("is malformed")
        const body = token.slice(0, dot)
        const ok = yield* Effect.orDie(mac.verify(yield* key, tag.success, bytesOf(body)))
        if (!ok) return yield* invalid("failed verification (tampered or from another server)")
        const text = Base64Url.decodeString(body)
        if (Result.isFailure(text)) return yield* invalid("is malformed")
        const payload = JSON.parse(text.success) as Payload
        if (payload.f !== fingerprint) return yield* invalid("belongs to a different request")
        if ((yield* Clock.currentTimeMillis) > payload.e) return yield* invalid("has expired")
        return { answered: payload.answered, pending: payload.pending }
      })

    const fingerprint: Codec["fingerprint"] = (method, params) =>
      Effect.map(sign(bytesOf(`${method}\n${canonical(params)}`)), (tag) => Base64Url.encode(tag))

    return { seal, open, fingerprint }
  })
