/**
 * W3C Baggage across the wire: application key/value pairs (a tenant, a user,
 * a feature flag) that travel with a request's trace context in
 * `params._meta.baggage`, as the OpenTelemetry semantic conventions for MCP
 * and SEP-414 name it. A traced session serves a request whose `_meta` has
 * `baggage` with `Current` set to it, so its handler reads it and every
 * request the handler makes (sampling, elicitation, a call to another
 * server) passes it on; a traced request sends the `Current` of its caller.
 * Like the trace context, it goes only where tracing is on (see `Tracing`):
 * an untraced session reads and writes no `_meta` for it.
 *
 * @example
 * ```ts
 * import * as Baggage from "@effect-mcp/engine/Baggage"
 * import * as Effect from "effect/Effect"
 *
 * // A client: the calls made inside carry `_meta.baggage: "tenant=acme,user=ada"`.
 * export const asTenant = <A, E, R>(call: Effect.Effect<A, E, R>) =>
 *   call.pipe(Baggage.withEntries({ tenant: "acme", user: "ada" }))
 *
 * // A tool handler: the baggage of the request it serves.
 * export const tenant = Effect.map(Baggage.entries, (entries) => entries.tenant ?? "unknown")
 * ```
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

/** The `_meta` key of the W3C `baggage`. */
export const BAGGAGE = "baggage"

/**
 * The W3C `baggage` value of the current request (as received, so it is
 * passed on unchanged), or undefined. Set by a traced session for the
 * handler of a request that carried one; set it yourself (`withEntries`, or
 * `Effect.provideService`) around the requests that should carry it.
 */
export const Current: Context.Reference<string | undefined> = Context.Reference<string | undefined>(
  "@effect-mcp/engine/Baggage/Current",
  { defaultValue: () => undefined }
)

// A list-member's key is an RFC 7230 token.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/** The members of a baggage value as `[key, member text]`, in order; malformed members are dropped. */
const membersOf = (value: string): Array<readonly [string, string]> => {
  const members: Array<readonly [string, string]> = []
  for (const raw of value.split(",")) {
    const member = raw.trim()
    const equals = member.indexOf("=")
    if (equals <= 0) continue
    const key = member.slice(0, equals).trim()
    if (TOKEN.test(key)) members.push([key, member])
  }
  return members
}

const decode = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

/**
 * The entries of a W3C `baggage` value: each member's key and its
 * percent-decoded value (a member's `;` properties are left out). Malformed
 * members are skipped, as the W3C format asks; a later duplicate key wins.
 */
export const parse = (value: string): Record<string, string> => {
  const entries: Record<string, string> = {}
  for (const [key, member] of membersOf(value)) {
    const text = member.slice(member.indexOf("=") + 1)
    const semicolon = text.indexOf(";")
    const decoded = decode((semicolon < 0 ? text : text.slice(0, semicolon)).trim())
    if (decoded !== undefined) entries[key] = decoded
  }
  return entries
}

/** A W3C `baggage` value of `entries`, each value percent-encoded. */
export const format = (entries: Readonly<Record<string, string>>): string =>
  Object.entries(entries)
    .filter(([key]) => TOKEN.test(key))
    .map(([key, value]) => `${key}=${encodeURIComponent(value)}`)
    .join(",")

/** The entries of the current baggage (`Current`, parsed); empty when there is none. */
export const entries: Effect.Effect<Record<string, string>> = Effect.map(Effect.service(Current), (value) =>
  value === undefined ? {} : parse(value)
)

/**
 * Runs `self` with `entries` added to the current baggage (a key already
 * there takes the new value; the other members are kept as they were).
 */
export const withEntries =
  (added: Readonly<Record<string, string>>) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiber((fiber) => {
      const current = fiber.getRef(Current)
      const kept =
        current === undefined
          ? []
          : membersOf(current)
              .filter(([key]) => !Object.hasOwn(added, key))
              .map(([, member]) => member)
      const fresh = format(added)
      const value = [...kept, ...(fresh === "" ? [] : [fresh])].join(",")
      return Effect.provideService(self, Current, value === "" ? undefined : value)
    })
