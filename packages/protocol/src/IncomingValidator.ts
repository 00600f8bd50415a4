/**
 * MCP-level checks on a decoded JSON-RPC request or notification, driven by a
 * `RevisionSpec`: is the method known (and sent by the right side), are its
 * params an object where required, do they match the method's schema, may a
 * batch be used at all. Synchronous, `Result`-returning, no exceptions.
 *
 * Each params schema gets one decoder, built on first use and shared by every
 * validator (a revision's specs are long-lived), so nothing is compiled per message.
 */
import * as Result from "effect/Result"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaParser from "effect/SchemaParser"
import type * as JsonRpc from "./JsonRpc.ts"
import * as McpError from "./McpError.ts"
import * as RepeatedMeta from "./internal/repeatedMeta.ts"
import type { AnyCodec, MethodSpec, RevisionSpec } from "./Revision.ts"

/** A message that passed: its method's spec and its decoded params (`undefined` when absent and optional). */
export interface Validated {
  readonly spec: MethodSpec
  readonly params: unknown
}

/** Why an incoming message was rejected. */
export type ValidationError =
  | McpError.MethodNotFound
  | McpError.InvalidParams
  | McpError.InvalidRequest
  | McpError.InternalError

/** Settings of a validator. */
export interface ValidatorOptions {
  /**
   * The side that receives the messages. When set, a method the spec says
   * only this side sends (e.g. `sampling/createMessage` arriving at a server)
   * is reported as MethodNotFound.
   */
  readonly receiver?: "client" | "server" | undefined
}

/** Checks incoming requests and notifications against one revision's schemas. */
export interface IncomingValidator {
  readonly revision: RevisionSpec
  /** Validates one request or notification; `inBatch` marks an entry of a batch. */
  readonly validate: (
    message: JsonRpc.Request | JsonRpc.Notification,
    context?: { readonly inBatch?: boolean | undefined }
  ) => Result.Result<Validated, ValidationError>
  /** Whether a batch may be received at all; validate its entries with `inBatch: true` afterwards. */
  readonly validateBatch: (batch: ReadonlyArray<unknown>) => Result.Result<void, McpError.InvalidRequest>
}

type Decoder = (input: unknown) => Result.Result<unknown, SchemaIssue.Issue>

const decoders = new WeakMap<AnyCodec, Decoder>()

// Valid params (nearly all of them) take the compiled synchronous decoder,
// which runs no Effect and no fiber; invalid ones are decoded again by the
// Result adapter, so the issues reported are the same.
const decoderFor = (schema: AnyCodec): Decoder => {
  let decoder = decoders.get(schema)
  if (decoder === undefined) {
    const fast = SchemaParser.decodeUnknownSync(schema)
    const detailed = SchemaParser.decodeUnknownResult(schema)
    decoder = (input) => {
      let value: unknown
      try {
        value = fast(input)
      } catch {
        return detailed(input)
      }
      return Result.succeed(value)
    }
    decoders.set(schema, decoder)
  }
  return decoder
}

const paramsDecoders = new WeakMap<AnyCodec, Decoder>()

// A method's params: a required `_meta` (the stateless revision's) is decoded through a memo (see
// internal/repeatedMeta.ts), anything else by the schema's decoder alone.
const paramsDecoderFor = (schema: AnyCodec): Decoder => {
  let decoder = paramsDecoders.get(schema)
  if (decoder === undefined) {
    decoder = RepeatedMeta.decoder(schema, decoderFor) ?? decoderFor(schema)
    paramsDecoders.set(schema, decoder)
  }
  return decoder
}

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * The issues, deepest path first (a stable sort: equal depths keep their
 * order). A union reports one issue per member it tried, in member order; the
 * member that matched furthest is the one the peer meant, and its issue is the
 * real reason, so it leads instead of coming after every other member's noise.
 * Exported for the other decoders of peer input (the server's tool arguments),
 * so every decode error leads the same way.
 */
export const deepestFirst = <I extends { readonly path?: ReadonlyArray<unknown> | undefined }>(
  issues: ReadonlyArray<I>
): ReadonlyArray<I> =>
  issues.length < 2 ? issues : [...issues].sort((a, b) => (b.path?.length ?? 0) - (a.path?.length ?? 0))

// Keys come from the peer and the path is repeated in `data`: each is cut, so a huge key does not come back.
const formatPath = (path: ReadonlyArray<PropertyKey>): string => {
  let out = "params"
  for (const key of path) {
    const name = String(key)
    out += typeof key === "number" ? `[${key}]` : `.${name.length > 100 ? `${name.slice(0, 100)}...` : name}`
  }
  return out
}

// Method names come from the peer; keep an unknown one from bloating the reply.
const quote = (method: string): string => JSON.stringify(method.length > 100 ? `${method.slice(0, 100)}...` : method)

const methodNotFound = (method: string) =>
  Result.fail(new McpError.MethodNotFound({ message: `Method not found: ${quote(method)}` }))

const invalidParams = (method: string, detail: string, data?: unknown) =>
  Result.fail(
    new McpError.InvalidParams(
      data === undefined
        ? { message: `Invalid params for ${method}: ${detail}` }
        : { message: `Invalid params for ${method}: ${detail}`, data }
    )
  )

const decodeParams = (spec: MethodSpec, params: object): Result.Result<Validated, ValidationError> => {
  let decoded: Result.Result<unknown, SchemaIssue.Issue>
  try {
    decoded = paramsDecoderFor(spec.params)(params)
  } catch (cause) {
    // Only a broken schema (a defect, or an asynchronous decoder) gets here.
    const detail = cause instanceof Error ? cause.message : String(cause)
    return Result.fail(new McpError.InternalError({ message: `Internal error: params of ${spec.method}: ${detail}` }))
  }
  if (Result.isSuccess(decoded)) return Result.succeed({ spec, params: decoded.success })
  const issues = deepestFirst(formatIssues(decoded.failure).issues).map((issue) => ({
    path: formatPath(issue.path as ReadonlyArray<PropertyKey>),
    message: issue.message
  }))
  const detail = issues.map((issue) => `${issue.message} at ${issue.path}`).join("; ")
  return invalidParams(spec.method, detail, { issues })
}

/** A validator for one revision. */
export const make = (revision: RevisionSpec, options?: ValidatorOptions): IncomingValidator => {
  const receiver = options?.receiver
  // Made on first use: an error captures a stack trace, and most validators never reject a batch.
  let batchesRejected: Result.Result<never, McpError.InvalidRequest> | undefined

  const validate = (
    message: JsonRpc.Request | JsonRpc.Notification,
    context?: { readonly inBatch?: boolean | undefined }
  ): Result.Result<Validated, ValidationError> => {
    const method = message.method
    const spec = revision.methods.get(method)
    const isRequest = (message as JsonRpc.Request).id !== undefined
    if (
      spec === undefined ||
      spec._tag !== (isRequest ? "Request" : "Notification") ||
      (receiver !== undefined && spec.sender === receiver)
    ) {
      return methodNotFound(method)
    }
    if (context?.inBatch === true && method === "initialize") {
      return Result.fail(new McpError.InvalidRequest({ message: "Invalid Request: initialize must not be in a batch" }))
    }
    const params = message.params
    if (params === undefined) {
      return spec.paramsRequired ? invalidParams(method, "params are required") : Result.succeed({ spec, params })
    }
    if (Array.isArray(params)) return invalidParams(method, "params must be an object, not an array")
    return decodeParams(spec, params)
  }

  return {
    revision,
    validate,
    validateBatch: () => {
      if (revision.batches) return Result.void
      if (batchesRejected === undefined) {
        batchesRejected = Result.fail(
          new McpError.InvalidRequest({
            message: `Invalid Request: batches are not supported on protocol version ${revision.version}`
          })
        )
      }
      return batchesRejected
    }
  }
}
