/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728): the document an MCP server
 * publishes so that a client that got a 401 learns which authorization
 * server(s) issue tokens for it, which scopes exist and how to present a token.
 *
 * The document lives at a well-known URL derived from the resource identifier
 * by inserting `/.well-known/oauth-protected-resource` between the host and
 * the path (`https://h/mcp` → `https://h/.well-known/oauth-protected-resource/mcp`);
 * MCP clients also try the root form, so a server serves both.
 */
import * as Schema from "effect/Schema"

/** The well-known path prefix of RFC 9728 §3. */
export const wellKnownPrefix = "/.well-known/oauth-protected-resource"

/** The metadata document (RFC 9728 §2); the fields MCP uses are typed, others pass through. */
export const Document = Schema.StructWithRest(
  Schema.Struct({
    /** The resource identifier: the URL clients use as the `resource` parameter (RFC 8707) and tokens' audience. */
    resource: Schema.String,
    /** Issuer identifiers of the authorization servers that issue tokens for this resource. */
    authorization_servers: Schema.optional(Schema.Array(Schema.String)),
    /** Scopes a client may request for this resource. */
    scopes_supported: Schema.optional(Schema.Array(Schema.String)),
    /** How a token may be presented; `["header"]` here: never in a body or query. */
    bearer_methods_supported: Schema.optional(Schema.Array(Schema.String)),
    /** A name for people. */
    resource_name: Schema.optional(Schema.String),
    /** A page for people about the resource. */
    resource_documentation: Schema.optional(Schema.String),
    /** The URL of the resource's JSON Web Key Set, when it signs anything. */
    jwks_uri: Schema.optional(Schema.String)
  }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)

/** The metadata document (RFC 9728 §2). */
export type Document = typeof Document.Type

/** What {@link make} needs. */
export interface Options {
  /** The resource identifier: the MCP endpoint's absolute URL (`https://example.com/mcp`), no fragment. */
  readonly resource: string | URL
  /** Issuer identifiers of the authorization servers whose tokens this resource accepts (at least one). */
  readonly authorizationServers: ReadonlyArray<string>
  /** Scopes a client may request; advertised so a client asks for what it needs. */
  readonly scopesSupported?: ReadonlyArray<string> | undefined
  /** A name for people. */
  readonly resourceName?: string | undefined
  /** A page for people about the resource. */
  readonly resourceDocumentation?: string | undefined
}

/** The error {@link make} throws for a resource identifier RFC 9728 does not allow. */
export class InvalidResource extends Schema.TaggedError<InvalidResource>()("InvalidResource", {
  resource: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `invalid resource identifier ${this.resource}: ${this.reason}`
  }
}

/**
 * The resource identifier in its canonical form: an absolute http(s) URL
 * without fragment, and without the trailing slash of a bare origin
 * (`https://h/` → `https://h`, the form MCP clients send as `resource`).
 * Throws {@link InvalidResource}: it is configuration, checked at start.
 */
export const canonicalResource = (resource: string | URL): string => {
  const text = String(resource)
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new InvalidResource({ resource: text, reason: "not an absolute URL" })
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new InvalidResource({ resource: text, reason: "not an http(s) URL" })
  }
  if (url.hash !== "" || text.includes("#")) throw new InvalidResource({ resource: text, reason: "has a fragment" })
  const href = url.href
  return url.pathname === "/" && url.search === "" ? href.slice(0, -1) : href
}

/**
 * The document for a resource; `bearer_methods_supported` is `["header"]`.
 * Throws {@link InvalidResource} for a resource identifier that is not an
 * absolute http(s) URL without fragment, and when no authorization server is named.
 */
export const make = (options: Options): Document => {
  const resource = canonicalResource(options.resource)
  if (options.authorizationServers.length === 0) {
    throw new InvalidResource({ resource, reason: "no authorization server is named" })
  }
  return {
    resource,
    authorization_servers: [...options.authorizationServers],
    ...(options.scopesSupported === undefined ? {} : { scopes_supported: [...options.scopesSupported] }),
    bearer_methods_supported: ["header"],
    ...(options.resourceName === undefined ? {} : { resource_name: options.resourceName }),
    ...(options.resourceDocumentation === undefined ? {} : { resource_documentation: options.resourceDocumentation })
  }
}

/**
 * The well-known path of the metadata of `resource` (RFC 9728 §3.1): the
 * prefix, then the resource's path without its trailing slash
 * (`/.well-known/oauth-protected-resource/mcp`, or the bare prefix for a
 * resource at the origin's root).
 */
export const wellKnownPath = (resource: string | URL): string => {
  const url = new URL(resource)
  const path = url.pathname.endsWith("/") ? url.pathname.slice(0, -1) : url.pathname
  return `${wellKnownPrefix}${path}`
}

/** The well-known URL of the metadata of `resource` (RFC 9728 §3.1), query of the resource kept. */
export const wellKnownUrl = (resource: string | URL): string => {
  const url = new URL(resource)
  return `${url.origin}${wellKnownPath(url)}${url.search}`
}

/**
 * The URLs where a client looks for the metadata of `resource`, in the MCP
 * order: the path-suffixed one first, then the origin's root one (once,
 * when the resource is at the root). A server answers on every path of this list.
 */
export const wellKnownUrls = (resource: string | URL): ReadonlyArray<string> => {
  const url = new URL(resource)
  const suffixed = wellKnownUrl(url)
  const root = `${url.origin}${wellKnownPrefix}`
  return suffixed === root ? [root] : [suffixed, root]
}

/**
 * Whether a fetched document is the one of `resource` (RFC 9728 §3.3): its
 * `resource` must be the identifier the client used, or the client would
 * follow an impostor's `authorization_servers`. Compared in canonical form.
 */
export const matchesResource = (document: Document, resource: string | URL): boolean => {
  try {
    return canonicalResource(document.resource) === canonicalResource(resource)
  } catch {
    return false
  }
}

/** Decodes a metadata document a client fetched; fails with a `SchemaError` when it is not one. */
export const decode = Schema.decodeUnknownEffect(Document)
