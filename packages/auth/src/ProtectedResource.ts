/**
 * One protected MCP endpoint, transport-agnostic: its metadata document and
 * where it is served, and the whole check of a request (token from the
 * `Authorization` header only, verification, required scopes) with the
 * HTTP answer for each failure. The HTTP servers call {@link ProtectedResourceShape.authenticate}
 * per request and serve {@link ProtectedResourceShape.metadata} on every path of
 * {@link ProtectedResourceShape.metadataPaths}.
 */
import * as Effect from "effect/Effect"
import type { AuthError } from "./AuthError.ts"
import * as Bearer from "./Bearer.ts"
import * as Challenge from "./Challenge.ts"
import { checkScopes, type PrincipalShape } from "./Principal.ts"
import * as ProtectedResourceMetadata from "./ProtectedResourceMetadata.ts"
import { TokenVerifier } from "./TokenVerifier.ts"

/** What {@link make} needs: the metadata's fields and the scopes every request needs. */
export interface Options extends ProtectedResourceMetadata.Options {
  /** Scopes every request must carry (per-operation scopes are checked by the operation); none by default. */
  readonly requiredScopes?: ReadonlyArray<string> | undefined
}

/** A protected endpoint. */
export interface ProtectedResourceShape {
  /** The resource identifier, canonical: the audience its tokens must name. */
  readonly resource: string
  /** The protected resource metadata document (RFC 9728). */
  readonly metadata: ProtectedResourceMetadata.Document
  /** The document's URL named by challenges (the path-suffixed one). */
  readonly metadataUrl: string
  /** The paths to serve the document on: path-suffixed, then the origin's root. */
  readonly metadataPaths: ReadonlyArray<string>
  /**
   * Checks a request: a bearer token in the `Authorization` header only (a
   * token in the query is refused), verified by the {@link TokenVerifier},
   * holding every `requiredScopes`.
   */
  readonly authenticate: (request: {
    readonly url: string
    readonly authorization: string | ReadonlyArray<string> | undefined
  }) => Effect.Effect<PrincipalShape, AuthError, TokenVerifier>
  /** The HTTP status and `WWW-Authenticate` value for a failure of {@link authenticate} or of a scope check. */
  readonly answer: (error: AuthError) => Challenge.Answer
}

/**
 * A protected endpoint; throws `InvalidResource` for a resource identifier
 * that is not an absolute http(s) URL without fragment, or no authorization
 * server (configuration, checked at start). The challenge's `scope` is
 * `requiredScopes` when given, else `scopesSupported`.
 */
export const make = (options: Options): ProtectedResourceShape => {
  const metadata = ProtectedResourceMetadata.make(options)
  const metadataUrl = ProtectedResourceMetadata.wellKnownUrl(metadata.resource)
  const metadataPaths = ProtectedResourceMetadata.wellKnownUrls(metadata.resource).map((url) => new URL(url).pathname)
  const required = options.requiredScopes ?? []
  const challengeOptions = {
    resourceMetadata: metadataUrl,
    scope: required.length > 0 ? required : options.scopesSupported
  }
  // Made once (a generator function made per call costs its own generator prototype and map): run per request.
  const authenticate: ProtectedResourceShape["authenticate"] = Effect.fnUntraced(function* (request) {
    const token = yield* Bearer.fromRequest(request)
    const verifier = yield* TokenVerifier
    const principal = yield* verifier.verify(token)
    return required.length === 0 ? principal : yield* checkScopes(principal, required)
  })
  return {
    resource: metadata.resource,
    metadata,
    metadataUrl,
    metadataPaths,
    authenticate,
    answer: (error) => Challenge.answer(error, challengeOptions)
  }
}
