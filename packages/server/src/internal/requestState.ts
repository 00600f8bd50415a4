/**
 * The `requestState` of 2026-07-28 multi-round-trip requests: what the server
 * must remember between rounds (the answers received so far, the input
 * requests still open, the request they belong to), carried by the client
 * and protected against tampering with HMAC-SHA256. A state is bound to one
 * request (method and params, less the retry fields) and expires.
 *
 * The key is generated per server unless keys are configured
 * (`RequestStateKeys`): then every process given the same keys opens the
 * states of the others, the first key signs and every key listed opens, so a
 * key is rotated by putting the new one first and dropping the old one once
 * the states it sealed have expired.
 *
 * The HMAC is computed in JavaScript (`@noble/hashes`), synchronously, not on
 * WebCrypto's `crypto.subtle`: a round's seal and a retry's checks then run
 * on the request's fiber, with no Promise settling outside it, so a
 * 2026-07-28 input round takes the turns a 2025-11-25 one does (under a
 * TestClock too) and on every runtime (`node:crypto` is not on all of them).
 * `Mac` still generates the per-server key; a key it holds only as a
 * non-extractable `CryptoKey` is signed with by `Mac` itself.
 */
import * as McpError from "@effect-mcp/protocol/McpError"
import { hmac } from "@noble/hashes/hmac.js"
import { sha256 } from "@noble/hashes/sha2.js"
import * as Clock from "effect/Clock"
import * as Mac from "effect/crypto/Mac"
import * as Base64Url from "effect/encoding/Base64Url"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as RequestStateKeys from "../RequestStateKeys.ts"

export interface State {
  /** Answers to earlier rounds, by input-request key. */
  readonly answered: { readonly [key: string]: unknown }
  /** Input requests of the last round still awaiting an answer: key -> method. */
  readonly pending: { readonly [key: string]: string }
  /** What a handler running its own rounds carried from the last one (`ServerRequest.requireInput`). */
  readonly own?: string | undefined
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
  /**
   * A keyed fingerprint of a request's method and params (retry fields
   * excluded): one per accepted key, joined by `~` (the first is sealed; a
   * state is checked against the one of the key that opens it).
   */
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

/** Signs with one key and checks tags made with it. */
interface Signer {
  readonly sign: (data: Uint8Array) => Effect.Effect<Uint8Array>
  readonly verify: (tag: Uint8Array, data: Uint8Array) => Effect.Effect<boolean>
}

/** HMAC-SHA256 over key bytes, synchronous; the key's inner and outer pads are hashed once, here. */
const signerOf = (bytes: Uint8Array): Signer => {
  const keyed = hmac.create(sha256, bytes)
  const tagOf = (data: Uint8Array): Uint8Array => keyed.clone().update(data).digest()
  return {
    sign: (data) => Effect.sync(() => tagOf(data)),
    // Constant time: a forged tag learns nothing from how long the comparison took.
    verify: (tag, data) => Effect.sync(() => Mac.timingSafeEqual(tagOf(data), tag))
  }
}

/** A generated key: its bytes when it gives them, else `Mac` signs (a non-extractable `CryptoKey`). */
const signerOfKey = (mac: Mac.Mac["Service"], key: Mac.Key): Effect.Effect<Signer> =>
  Effect.match(Mac.toBytes(key), {
    onSuccess: signerOf,
    onFailure: (): Signer => ({
      sign: (data) => Effect.orDie(mac.sign(key, data)),
      verify: (tag, data) => Effect.orDie(mac.verify(key, tag, data))
    })
  })

export const make = (options: {
  readonly ttlMs: number
  /** Accepted keys, the first signing; default the `RequestStateKeys` service, else a random key of this codec. */
  readonly keys?: ReadonlyArray<RequestStateKeys.Key> | undefined
}): Effect.Effect<Codec, never, Mac.Mac> =>
  Effect.gen(function* () {
    const mac = yield* Mac.Mac
    const given = options.keys === undefined ? undefined : RequestStateKeys.toBytes(options.keys)
    // Keys given in code that cannot be used are a programming error, reported when the server is made.
    if (given instanceof RequestStateKeys.RequestStateKeyError) return yield* Effect.die(given)
    const configured =
      given ?? Option.getOrElse(yield* Effect.serviceOption(RequestStateKeys.RequestStateKeys), () => [])
    // Made on first use: most servers never seal a request state, and making a
    // key loads the platform's crypto (its random bytes), a visible share of a stdio server's start.
    const keys = yield* Effect.cached(
      configured.length === 0
        ? Effect.flatMap(Effect.orDie(mac.generateKey(Mac.hmacSha256)), (key) =>
            Effect.map(signerOfKey(mac, key), (signer) => [signer])
          )
        : Effect.sync(() => configured.map(signerOf))
    )

    // Generators made once (a generator function made per call costs its own generator prototype and map).
    const seal: Codec["seal"] = Effect.fnUntraced(function* (fingerprint, state) {
      const now = yield* Clock.currentTimeMillis
      const tilde = fingerprint.indexOf("~")
      const f = tilde < 0 ? fingerprint : fingerprint.slice(0, tilde)
      const payload: Payload = { v: 1, f, e: now + options.ttlMs, ...state }
      const body = Base64Url.encode(JSON.stringify(payload))
      const tag = yield* (yield* keys)[0]!.sign(bytesOf(body))
      return `${body}.${Base64Url.encode(tag)}`
    })

    const open: Codec["open"] = Effect.fnUntraced(function* (fingerprint, token) {
      const dot = token.indexOf(".")
      const tag = dot < 0 ? undefined : Base64Url.decode(token.slice(dot + 1))
      if (tag === undefined || Result.isFailure(tag)) return yield* invalid("is malformed")
      const body = token.slice(0, dot)
      const data = bytesOf(body)
      const all = yield* keys
      let opened = -1
      for (let i = 0; i < all.length && opened < 0; i++) {
        if (yield* all[i]!.verify(tag.success, data)) opened = i
      }
      if (opened < 0) return yield* invalid("failed verification (tampered, or sealed under a key this server lacks)")
      const text = Base64Url.decodeString(body)
      if (Result.isFailure(text)) return yield* invalid("is malformed")
      const payload = JSON.parse(text.success) as Payload
      if (payload.f !== (all.length === 1 ? fingerprint : fingerprint.split("~")[opened])) {
        return yield* invalid("belongs to a different request")
      }
      if ((yield* Clock.currentTimeMillis) > payload.e) return yield* invalid("has expired")
      return payload.own === undefined
        ? { answered: payload.answered, pending: payload.pending }
        : { answered: payload.answered, pending: payload.pending, own: payload.own }
    })

    const fingerprint: Codec["fingerprint"] = (method, params) =>
      Effect.flatMap(keys, (all) => {
        const data = bytesOf(`${method}\n${canonical(params)}`)
        return all.length === 1
          ? Effect.map(all[0]!.sign(data), Base64Url.encode)
          : Effect.map(
              Effect.forEach(all, (key) => key.sign(data)),
              (tags) => tags.map((tag) => Base64Url.encode(tag)).join("~")
            )
      })

    return { seal, open, fingerprint }
  })
