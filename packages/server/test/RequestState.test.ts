/**
 * The 2026-07-28 `requestState` codec (src/internal/requestState.ts): its
 * HMAC-SHA256 runs synchronously, so sealing and opening a state is never a
 * Promise the TestClock cannot see; its tags are the ones WebCrypto computes
 * (states sealed by a server signing on WebCrypto, as before, still open);
 * and a `Mac` whose key cannot be exported still signs and opens.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Mac from "effect/crypto/Mac"
import * as SecureRandom from "effect/crypto/SecureRandom"
import * as Base64Url from "effect/encoding/Base64Url"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as RequestState from "../src/internal/requestState.ts"

const key = "k".repeat(32)
const state: RequestState.State = {
  answered: { "elicitation-0": { action: "accept" } },
  pending: { "sampling-1": "x" }
}
const webCrypto = Mac.layerWebCrypto.pipe(Layer.provide(SecureRandom.layerWebCrypto))
const bytes = (text: string) => new TextEncoder().encode(text)

describe("requestState codec", () => {
  it("seals, fingerprints and opens synchronously (no Promise between the rounds of a request)", () => {
    const codec = Effect.runSync(Effect.provide(RequestState.make({ ttlMs: 60_000, keys: [key] }), webCrypto))
    const roundTrip = Effect.gen(function* () {
      const fingerprint = yield* codec.fingerprint("tools/call", { name: "greet", arguments: {} })
      const token = yield* codec.seal(fingerprint, state)
      return yield* codec.open(fingerprint, token)
    })
    // runSync throws on an effect that waits on anything asynchronous (WebCrypto's `crypto.subtle` did).
    assert.deepStrictEqual(Effect.runSync(roundTrip), state)
  })

  it.effect("its tags are WebCrypto's HMAC-SHA256: states sealed either way open on both", () =>
    Effect.gen(function* () {
      const codec = yield* RequestState.make({ ttlMs: 60_000, keys: [key] }).pipe(Effect.provide(webCrypto))
      const mac = yield* Mac.Mac.pipe(Effect.provide(webCrypto))
      const macKey = yield* Mac.key(Mac.hmacSha256, bytes(key))
      const fingerprint = yield* codec.fingerprint("tools/call", { name: "greet" })
      const expected = yield* mac.sign(macKey, bytes(`tools/call\n${RequestState.canonical({ name: "greet" })}`))
      assert.strictEqual(fingerprint, Base64Url.encode(expected))
      const token = yield* codec.seal(fingerprint, state)
      const body = token.slice(0, token.indexOf("."))
      const tag = Result.getOrThrow(Base64Url.decode(token.slice(token.indexOf(".") + 1)))
      assert.isTrue(yield* mac.verify(macKey, tag, bytes(body)))
      // A state signed on WebCrypto (a replica still running the previous release) opens here.
      const webSealed = `${body}.${Base64Url.encode(yield* mac.sign(macKey, bytes(body)))}`
      assert.deepStrictEqual(yield* codec.open(fingerprint, webSealed), state)
      // A tag one bit off is refused.
      const forged = new Uint8Array(tag)
      forged[0] = forged[0]! ^ 1
      const refused = yield* Effect.flip(codec.open(fingerprint, `${body}.${Base64Url.encode(forged)}`))
      assert.match(refused.message, /failed verification/)
    })
  )

  it.effect("a Mac whose generated key is a non-extractable CryptoKey signs and opens the states itself", () =>
    Effect.gen(function* () {
      const mac = yield* Mac.Mac.pipe(Effect.provide(webCrypto))
      let made = 0
      const opaque = Mac.Mac.of({
        ...mac,
        generateKey: (algorithm) =>
          Effect.flatMap(
            Effect.promise(() =>
              crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"])
            ),
            (cryptoKey) => {
              made++
              return Mac.fromCryptoKey(algorithm, cryptoKey)
            }
          )
      })
      const codec = yield* RequestState.make({ ttlMs: 60_000 }).pipe(Effect.provideService(Mac.Mac, opaque))
      const fingerprint = yield* codec.fingerprint("tools/call", { name: "greet" })
      const token = yield* codec.seal(fingerprint, state)
      assert.deepStrictEqual(yield* codec.open(fingerprint, token), state)
      assert.strictEqual(made, 1)
      const other = yield* codec.fingerprint("tools/call", { name: "other" })
      const refused = yield* Effect.flip(codec.open(other, token))
      assert.match(refused.message, /belongs to a different request/)
    })
  )
})
