/**
 * DPoP (RFC 9449, the MCP DPoP extension): access tokens bound to a key the
 * client holds, so a stolen token is useless without the key. With a
 * {@link Dpop} service in context, the {@link OAuthClient} sends a proof on
 * every token request (the authorization server binds the token to the key:
 * `token_type: DPoP`, `cnf.jkt`), and the HTTP client presents such a token as
 * `Authorization: DPoP <token>` with a fresh proof per request (`htm`, `htu`,
 * `ath`). Both sides may demand a server nonce (`use_dpop_nonce`): the nonce
 * is remembered per origin and the request is sent once more.
 *
 * The key and the proofs are jose's (token requests use oauth4webapi's DPoP
 * handle on the same key pair); the key lives as long as the layer, and a
 * token bound to it is worthless without it, so a persisted token from an
 * earlier process leads to a new login.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as base64url from "jose/base64url"
import { exportJWK } from "jose/key/export"
import { generateKeyPair } from "jose/key/generate/keypair"
import type { JWTPayload } from "jose"
import { SignJWT } from "jose/jwt/sign"
import * as oauth from "oauth4webapi"
import * as Challenge from "./Challenge.ts"

/** The signature algorithms a DPoP key may use (asymmetric only, as RFC 9449 requires). */
export type Algorithm = "ES256" | "ES384" | "EdDSA" | "RS256" | "PS256"

/** The headers that present a DPoP-bound token on a request. */
export interface Presentation {
  /** `DPoP <access token>`. */
  readonly authorization: string
  /** The proof for this request. */
  readonly dpop: string
}

/** A DPoP key with its nonce memory. */
export interface DpopShape {
  /** The algorithm of the key. */
  readonly algorithm: Algorithm
  /** oauth4webapi's handle on the same key, for token requests (it keeps the authorization server's nonces). */
  readonly handle: oauth.DPoPHandle
  /** The JWK SHA-256 thumbprint of the public key (RFC 7638): the `cnf.jkt` a bound token carries. */
  readonly thumbprint: Effect.Effect<string>
  /**
   * A fresh proof for one request: `htm` and `htu` (the URL without query
   * and fragment), a new `jti`, `iat`, `ath` when a token is presented, and the
   * last nonce the origin sent.
   */
  readonly proof: (method: string, url: string | URL, accessToken?: string | undefined) => Effect.Effect<string>
  /**
   * Records that `accessToken` was issued bound to this key (`token_type:
   * DPoP`); the token requests do it. A token the server issued as Bearer
   * (one without DPoP support) is presented as Bearer.
   */
  readonly markBound: (accessToken: string) => void
  /** Whether `accessToken` is bound to this key, so it must be presented with {@link present}. */
  readonly isBound: (accessToken: string) => boolean
  /** The `Authorization` and `DPoP` headers presenting `accessToken` on a request. */
  readonly present: (method: string, url: string | URL, accessToken: string) => Effect.Effect<Presentation>
  /**
   * Reads a resource server's answer: a `DPoP-Nonce` header is remembered
   * for the origin, and `true` means the answer is a `use_dpop_nonce`
   * challenge (401 with `WWW-Authenticate: DPoP error="use_dpop_nonce"` and a
   * nonce): send the request once more with a new proof.
   */
  readonly retryWithNonce: (
    url: string | URL,
    status: number,
    header: (name: "dpop-nonce" | "www-authenticate") => string | undefined
  ) => boolean
}

/** The DPoP key of an OAuth client. */
export class Dpop extends Context.Service<Dpop, DpopShape>()("@effect-mcp/auth/Dpop") {}

/** How the key is made. */
export interface Options {
  /** The signature algorithm of a generated key; ES256 by default (the one every DPoP server supports). */
  readonly algorithm?: Algorithm | undefined
  /** A key pair of `algorithm` to use instead of a generated one (its public key must be extractable). */
  readonly keyPair?: Parameters<typeof oauth.DPoP>[1] | undefined
}

/** Servers whose nonces are kept, and bound tokens remembered (the oldest are dropped beyond it). */
const maxKept = 100

/** Adds `key` to a bounded insertion-ordered map, dropping the oldest entry when full. */
const keep = <V>(map: Map<string, V>, key: string, value: V) => {
  map.delete(key)
  if (map.size >= maxKept) map.delete(map.keys().next().value as string)
  map.set(key, value)
}

const encoder = new TextEncoder()

/** `ath`: the base64url SHA-256 of the token (RFC 9449 §4.2). */
const accessTokenHash = async (accessToken: string) =>
  base64url.encode(new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(accessToken))))

/** `htu`: the request URL without query and fragment (RFC 9449 §4.2). */
const targetUri = (url: URL) => `${url.origin}${url.pathname}`

/** Whether `WWW-Authenticate` holds a DPoP challenge asking for a nonce. */
const asksForNonce = (wwwAuthenticate: string | undefined) =>
  wwwAuthenticate !== undefined &&
  Challenge.parseAll(wwwAuthenticate).some(
    (c) => c.scheme.toLowerCase() === "dpop" && c.params.error === "use_dpop_nonce"
  )

/** A DPoP key (generated unless given) and its nonce memory. */
export const make = (options: Options = {}): Effect.Effect<DpopShape> =>
  Effect.gen(function* () {
    const algorithm = options.algorithm ?? "ES256"
    const keyPair = options.keyPair ?? (yield* Effect.promise(() => generateKeyPair(algorithm, { extractable: false })))
    const jwk = yield* Effect.promise(() => exportJWK(keyPair.publicKey))
    const header = { alg: algorithm, typ: "dpop+jwt", jwk }
    const handle = oauth.DPoP({}, keyPair)
    const nonces = new Map<string, string>()
    // The tokens issued bound to this key; a store keeps few per server, and older ones have been replaced.
    const bound = new Map<string, true>()

    const proof: DpopShape["proof"] = (method, url, accessToken) =>
      Effect.promise(async () => {
        const target = new URL(url)
        const nonce = nonces.get(target.origin)
        const claims: JWTPayload = {
          htm: method.toUpperCase(),
          htu: targetUri(target),
          ...(accessToken === undefined ? {} : { ath: await accessTokenHash(accessToken) }),
          ...(nonce === undefined ? {} : { nonce })
        }
        return new SignJWT(claims)
          .setProtectedHeader(header)
          .setIssuedAt()
          .setJti(crypto.randomUUID())
          .sign(keyPair.privateKey)
      })

    return {
      algorithm,
      handle,
      thumbprint: Effect.promise(() => handle.calculateThumbprint()),
      proof,
      markBound: (accessToken) => keep(bound, accessToken, true),
      isBound: (accessToken) => bound.has(accessToken),
      present: (method, url, accessToken) =>
        Effect.map(proof(method, url, accessToken), (dpop) => ({ authorization: `DPoP ${accessToken}`, dpop })),
      retryWithNonce: (url, status, header) => {
        const nonce = header("dpop-nonce")
        if (nonce === undefined || nonce.length === 0) return false
        keep(nonces, new URL(url).origin, nonce)
        return status === 401 && asksForNonce(header("www-authenticate"))
      }
    }
  })

/** {@link make} as a Layer: one key for the life of the layer. */
export const layer = (options: Options = {}): Layer.Layer<Dpop> => Layer.effect(Dpop, make(options))
