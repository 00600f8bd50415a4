/**
 * The keys that sign and open 2026-07-28 `requestState` (the state a
 * multi-round-trip request carries between rounds, sealed with HMAC-SHA256).
 *
 * Without keys, each server makes a random key of its own: a state it sealed
 * opens on that process only, so a retry that reaches another replica behind
 * a load balancer is refused (-32602). Give every process the same keys
 * (this service, or McpServer's `requestStateKeys` option) and any of them
 * opens the states of the others.
 *
 * Rotation: the first key signs, every key listed opens. Put a new key first,
 * keep the old one after it until the states it sealed have expired
 * (McpServer's `requestStateTtlMs`, 10 minutes by default), then drop it.
 * Keys are secrets: they are held `Redacted`, and never logged.
 */
import type * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Base64Url from "effect/encoding/Base64Url"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"

/** One key: text (at least 32 bytes of UTF-8, e.g. `openssl rand -base64 32`) or raw bytes (at least 32). */
export type Key = string | Redacted.Redacted<string> | Uint8Array

/** The least length of a key, in bytes: HMAC-SHA256's own output size. */
export const minimumBytes = 32

/** The environment variable `layerConfig` reads by default: a comma-separated list, the signing key first. */
export const defaultVariable = "MCP_REQUEST_STATE_KEYS"

/** A key list that cannot be used: empty, or a key shorter than `minimumBytes`. */
export class RequestStateKeyError extends Schema.TaggedError<RequestStateKeyError>()("RequestStateKeyError", {
  message: Schema.String
}) {}

/** The accepted keys as bytes, the signing key first. */
export class RequestStateKeys extends Context.Service<RequestStateKeys, ReadonlyArray<Uint8Array>>()(
  "@effect-mcp/server/RequestStateKeys"
) {}

// The UTF-8 bytes of text: base64url holds a string's UTF-8 bytes (this package has no DOM or Node types).
const utf8 = (text: string): Uint8Array => Result.getOrThrow(Base64Url.decode(Base64Url.encode(text)))

/** The bytes of each key, checked (the message never quotes a key). */
export const toBytes = (keys: ReadonlyArray<Key>): ReadonlyArray<Uint8Array> | RequestStateKeyError => {
  if (keys.length === 0) return new RequestStateKeyError({ message: "no request-state key given" })
  const bytes: Array<Uint8Array> = []
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!
    const value = key instanceof Uint8Array ? key : utf8(Redacted.isRedacted(key) ? Redacted.value(key) : key)
    if (value.length < minimumBytes) {
      return new RequestStateKeyError({
        message: `request-state key ${i + 1} of ${keys.length} is ${value.length} bytes; at least ${minimumBytes} are needed`
      })
    }
    bytes.push(value)
  }
  return bytes
}

/** Splits a comma-separated key list (spaces around keys ignored, empty entries dropped). */
export const parse = (text: string): ReadonlyArray<Redacted.Redacted<string>> =>
  text
    .split(",")
    .map((key) => key.trim())
    .filter((key) => key !== "")
    .map((key) => Redacted.make(key))

/** Provides the keys, the first signing. */
export const layer = (keys: ReadonlyArray<Key>): Layer.Layer<RequestStateKeys, RequestStateKeyError> =>
  Layer.effect(
    RequestStateKeys,
    Effect.suspend(() => {
      const bytes = toBytes(keys)
      return bytes instanceof RequestStateKeyError ? Effect.fail(bytes) : Effect.succeed(bytes)
    })
  )

/**
 * Provides the keys from configuration: the variable `name` (default
 * `MCP_REQUEST_STATE_KEYS`), a comma-separated list, the signing key first.
 */
export const layerConfig = (
  name: string = defaultVariable
): Layer.Layer<RequestStateKeys, RequestStateKeyError | Config.ConfigError> =>
  Layer.unwrap(
    // effect's Config is imported when this layer is built, not with this module: every server loads this module
    // (the service above), and Config brings ConfigProvider, Path and LogLevel, four modules that a server given its
    // keys otherwise, or none, would load at every start for nothing.
    Effect.flatMap(
      Effect.promise(() => import("effect/Config")),
      (Config) => Effect.map(Config.Redacted(name), (text) => layer(parse(Redacted.value(text))))
    )
  )
