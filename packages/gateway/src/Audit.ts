/**
 * One audit record per request the gateway routes to an upstream
 * (`tools/call`, `prompts/get`, `resources/read`), refused ones included
 * (a hidden item, a limit, an open circuit): who asked (the principal's
 * `owner`), which upstream and item, a digest of the arguments (never the
 * arguments), the outcome, the duration on the Clock and a correlation id.
 *
 * The digest is keyed (HMAC-SHA256 under the audit key), not a plain hash:
 * arguments are often guessable (an account number, a yes or no, a short
 * name), and whoever reads the logs or the traces could confirm a guess by
 * hashing it. Without the key they cannot. The key is random per gateway
 * unless configured (`digestKey`), so digests compare within one gateway's
 * life; gateways given the same key (replicas feeding one audit store) give
 * equal arguments equal digests. The HMAC is `@noble/hashes`', synchronous:
 * digesting runs on the request's fiber, with no Promise settling outside it.
 *
 * Each record goes to a sink: by default one log line "MCP gateway call"
 * through Effect's Logger, annotated with the record's fields. The request
 * also runs under a span `gateway <method> <target>` carrying them (the
 * digest, the upstream, the principal), a child of the request's SERVER span
 * and the parent of the CLIENT span of the upstream request, so a traced
 * caller's trace runs through the gateway to the upstream. The correlation
 * id is that trace's id when the request is traced, else a random id; either
 * way the log line and the span carry the same one.
 */
import * as Tracing from "@effect-mcp/engine/Tracing"
import type * as Transport from "@effect-mcp/engine/Transport"
import * as McpError from "@effect-mcp/protocol/McpError"
import { hmac } from "@noble/hashes/hmac.js"
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, randomBytes, utf8ToBytes } from "@noble/hashes/utils.js"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as LogLevel from "effect/LogLevel"

/** What became of a request. */
export type Outcome = "success" | "tool_error" | "error" | "interrupted" | "defect"

/** One audit record. */
export interface Record {
  /** The principal's `owner`, undefined when the request was not authenticated. */
  readonly principal: string | undefined
  /** The upstream the item belongs to (undefined for a name no upstream serves). */
  readonly upstream: string | undefined
  readonly method: "tools/call" | "prompts/get" | "resources/read"
  /** The tool's or prompt's catalog name, or the resource's URI. */
  readonly target: string
  /**
   * HMAC-SHA256 (hex) under the audit key (`Options.digestKey`) of the
   * arguments as canonical JSON (keys sorted); undefined for a read. Equal
   * arguments give equal digests under one key; without the key a digest
   * confirms no guess of the arguments.
   */
  readonly argumentsDigest: string | undefined
  readonly outcome: Outcome
  /** The JSON-RPC code of an `error` outcome. */
  readonly errorCode: number | undefined
  readonly durationMs: number
  /** The trace id when the request is traced, else a random id. */
  readonly correlationId: string
}

/** Options of the gateway's audit. */
export interface Options {
  /** Where records go. Default: `log(level)`. */
  readonly sink?: ((record: Record) => Effect.Effect<void>) | undefined
  /** The level of the default sink's line. Default "Info". */
  readonly level?: LogLevel.Severity | undefined
  /**
   * The key `argumentsDigest` is an HMAC under: bytes, or a string (its
   * UTF-8 bytes). Default: a random 32-byte key made once per gateway, so
   * digests compare within one gateway's life only. Gateways whose digests
   * must compare across processes or restarts (several replicas feeding one
   * audit store) are given the same key, from a secret; whoever holds it can
   * confirm guesses of the arguments, as without a key anyone could.
   */
  readonly digestKey?: string | Uint8Array | undefined
}

/** The default sink: one log line "MCP gateway call" annotated with the record (undefined fields left out). */
export const log =
  (level: LogLevel.Severity = "Info") =>
  (record: Record): Effect.Effect<void> => {
    const annotations: { [key: string]: unknown } = {}
    for (const [k, v] of Object.entries(record)) if (v !== undefined) annotations[k] = v
    return Effect.logWithLevel(level)("MCP gateway call").pipe(Effect.annotateLogs(annotations))
  }

/** `value` as JSON with every object's keys sorted, so equal arguments digest equally. */
export const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, v) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return v
    const sorted: { [key: string]: unknown } = {}
    for (const k of Object.keys(v).sort()) sorted[k] = (v as { readonly [key: string]: unknown })[k]
    return sorted
  }) ?? "null"

// The package compiles without the DOM library; Node, Bun, Deno and Workers have `crypto.randomUUID`.
const randomUUID = (): string =>
  (globalThis as unknown as { readonly crypto: { readonly randomUUID: () => string } }).crypto.randomUUID()

const keyBytes = (key: string | Uint8Array): Uint8Array =>
  // A copy: bytes the caller changes later do not change the key.
  typeof key === "string" ? utf8ToBytes(key) : Uint8Array.from(key)

const hmacHex = (key: Uint8Array, value: unknown): string =>
  bytesToHex(hmac(sha256, key, utf8ToBytes(canonicalJson(value))))

/** HMAC-SHA256 (hex) under `key` (bytes, or a string's UTF-8 bytes) of `value`'s canonical JSON. */
export const digest = (key: string | Uint8Array, value: unknown): string => hmacHex(keyBytes(key), value)

/** An audit as a gateway runs it: where its records go, and its digest of arguments. */
export interface Auditor {
  /** Where each record goes (`Options.sink`, else `log(level)`). */
  readonly sink: (record: Record) => Effect.Effect<void>
  /** HMAC-SHA256 (hex) of a value's canonical JSON under the auditor's key. */
  readonly digest: (value: unknown) => string
}

/**
 * The auditor of `options`: its sink (default `log(level)`) and its key,
 * `digestKey` or else a random 32-byte key made here, once (a gateway makes
 * its auditor once, when it is built).
 */
export const make = (options: Options = {}): Effect.Effect<Auditor> =>
  Effect.sync(() => {
    const key = options.digestKey === undefined ? randomBytes(32) : keyBytes(options.digestKey)
    return {
      sink: options.sink ?? log(options.level),
      digest: (value) => hmacHex(key, value)
    }
  })

const outcomeOf = (exit: Exit.Exit<unknown, unknown>): { outcome: Outcome; errorCode: number | undefined } => {
  if (Exit.isSuccess(exit)) {
    const value = exit.value as { readonly isError?: unknown } | undefined
    return { outcome: value?.isError === true ? "tool_error" : "success", errorCode: undefined }
  }
  const failure = exit.cause.reasons.find(Cause.isFailReason)
  if (failure !== undefined) {
    return { outcome: "error", errorCode: McpError.isMcpError(failure.error) ? failure.error.code : undefined }
  }
  return { outcome: Cause.hasDies(exit.cause) ? "defect" : "interrupted", errorCode: undefined }
}

/** What the gateway knows of a request it audits. */
export interface Audited {
  readonly method: Record["method"]
  readonly target: string
  readonly upstream: string | undefined
  readonly principal: Transport.Authenticated | undefined
  /** The arguments to digest (undefined: no digest). */
  readonly arguments: unknown
}

/**
 * Runs `effect` (the handling of `request`) under the audit span and sends
 * its record to the auditor's sink once it ends, however it ends.
 */
export const audited = <A, E, R>(
  auditor: Auditor,
  request: Audited,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.gen(function* () {
    const argumentsDigest = request.method === "resources/read" ? undefined : auditor.digest(request.arguments ?? {})
    const start = yield* Clock.currentTimeMillis
    const attributes = {
      "mcp.method.name": request.method,
      "mcp.gateway.target": request.target,
      ...(request.upstream === undefined ? {} : { "mcp.gateway.upstream": request.upstream }),
      ...(request.principal === undefined ? {} : { "mcp.gateway.principal": request.principal.owner }),
      ...(argumentsDigest === undefined ? {} : { "mcp.gateway.arguments_digest": argumentsDigest })
    }
    const run = (correlationId: string) =>
      Effect.onExit(effect, (exit) =>
        Effect.flatMap(Clock.currentTimeMillis, (end) =>
          auditor.sink({
            principal: request.principal?.owner,
            upstream: request.upstream,
            method: request.method,
            target: request.target,
            argumentsDigest,
            ...outcomeOf(exit),
            durationMs: end - start,
            correlationId
          })
        )
      )
    // Untraced (no tracer installed), a span would be work for nobody: the record alone, with an id of its own.
    if (!Tracing.enabled(yield* Effect.context<never>())) return yield* run(randomUUID())
    return yield* Effect.withSpan(
      Effect.flatMap(Effect.orDie(Effect.currentSpan), (span) => {
        span.attribute("mcp.gateway.correlation_id", span.traceId)
        return run(span.traceId)
      }),
      // A resource URI is unbounded: an attribute, never part of the name (as the request spans do).
      request.method === "resources/read" ? `gateway ${request.method}` : `gateway ${request.method} ${request.target}`,
      { attributes }
    )
  })
