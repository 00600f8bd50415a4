/**
 * The errors that travel in a JSON-RPC `error` member: the five JSON-RPC 2.0
 * codes, the MCP-specific ones, and `JsonRpcError` for any other code. Each is a
 * `Schema.TaggedError` whose `_tag` is the reason callers match on, with `code`,
 * `message` and optional `data`.
 *
 * Which codes a revision defines is data (`codes`), never an `if` on a revision
 * string. Resource-not-found is the one error whose code moved: `-32002` up to
 * 2025-11-25, `-32602` (Invalid params, with `data.uri`) from 2026-07-28 (SEP-2164).
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as JsonRpc from "./JsonRpc.ts"
import type { ProtocolVersion } from "./ProtocolVersion.ts"

/** Every error code effect-mcp knows by name, at its canonical value. */
export const Code = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  ResourceNotFound: -32002,
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
  UrlElicitationRequired: -32042
} as const

const messageOr = (fallback: string) => Schema.String.pipe(Schema.withConstructorDefault(Effect.succeed(fallback)))

const OptionalData = Schema.optionalKey(Schema.Unknown)

// Objects the spec leaves open (no `additionalProperties: false`) keep their
// unknown members instead of having them stripped.
const OpenObject = Schema.Record(Schema.String, Schema.Unknown)

// ---------------------------------------------------------------------------
// JSON-RPC 2.0
// ---------------------------------------------------------------------------

/** Invalid JSON was received (-32700). */
export class ParseError extends Schema.TaggedError<ParseError>()("ParseError", {
  message: messageOr("Parse error"),
  data: OptionalData
}) {
  get code(): typeof Code.ParseError {
    return Code.ParseError
  }
}

/** The JSON is not a valid JSON-RPC message (-32600). */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  message: messageOr("Invalid Request"),
  data: OptionalData
}) {
  get code(): typeof Code.InvalidRequest {
    return Code.InvalidRequest
  }
}

/** The method does not exist or is not available (-32601). */
export class MethodNotFound extends Schema.TaggedError<MethodNotFound>()("MethodNotFound", {
  message: messageOr("Method not found"),
  data: OptionalData
}) {
  get code(): typeof Code.MethodNotFound {
    return Code.MethodNotFound
  }
}

/** Invalid method parameters (-32602). */
export class InvalidParams extends Schema.TaggedError<InvalidParams>()("InvalidParams", {
  message: messageOr("Invalid params"),
  data: OptionalData
}) {
  get code(): typeof Code.InvalidParams {
    return Code.InvalidParams
  }
}

/** An internal error on the receiver (-32603). */
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", {
  message: messageOr("Internal error"),
  data: OptionalData
}) {
  get code(): typeof Code.InternalError {
    return Code.InternalError
  }
}

// ---------------------------------------------------------------------------
// MCP
// ---------------------------------------------------------------------------

/**
 * The requested resource does not exist. `code` is the canonical -32002; on
 * 2026-07-28 `toErrorObject` sends -32602 instead (see `codes`). Put the URI in
 * `data: { uri }`.
 */
export class ResourceNotFound extends Schema.TaggedError<ResourceNotFound>()("ResourceNotFound", {
  message: messageOr("Resource not found"),
  data: OptionalData
}) {
  get code(): typeof Code.ResourceNotFound {
    return Code.ResourceNotFound
  }
}

/** The request needs URL-mode elicitations completed first (-32042, 2025-11-25). */
export class UrlElicitationRequired extends Schema.TaggedError<UrlElicitationRequired>()("UrlElicitationRequired", {
  message: messageOr("URL elicitation required"),
  data: Schema.StructWithRest(Schema.Struct({ elicitations: Schema.Array(OpenObject) }), [OpenObject])
}) {
  get code(): typeof Code.UrlElicitationRequired {
    return Code.UrlElicitationRequired
  }
}

/** HTTP headers disagree with the body, or are missing/malformed (-32020, 2026-07-28; HTTP 400). */
export class HeaderMismatch extends Schema.TaggedError<HeaderMismatch>()("HeaderMismatch", {
  message: messageOr("Header mismatch"),
  data: OptionalData
}) {
  get code(): typeof Code.HeaderMismatch {
    return Code.HeaderMismatch
  }
}

/** The request needs a client capability the client did not declare (-32021, 2026-07-28; HTTP 400). */
export class MissingRequiredClientCapability extends Schema.TaggedError<MissingRequiredClientCapability>()(
  "MissingRequiredClientCapability",
  {
    message: messageOr("Missing required client capability"),
    data: Schema.StructWithRest(Schema.Struct({ requiredCapabilities: OpenObject }), [OpenObject])
  }
) {
  get code(): typeof Code.MissingRequiredClientCapability {
    return Code.MissingRequiredClientCapability
  }
}

/** The request's protocol version is unknown or unsupported (-32022, 2026-07-28; HTTP 400). */
export class UnsupportedProtocolVersion extends Schema.TaggedError<UnsupportedProtocolVersion>()(
  "UnsupportedProtocolVersion",
  {
    message: messageOr("Unsupported protocol version"),
    data: Schema.StructWithRest(Schema.Struct({ requested: Schema.String, supported: Schema.Array(Schema.String) }), [
      OpenObject
    ])
  }
) {
  get code(): typeof Code.UnsupportedProtocolVersion {
    return Code.UnsupportedProtocolVersion
  }
}

/** Any other code, including server-defined ones (-32000..-32099) and named codes whose `data` is malformed. */
export class JsonRpcError extends Schema.TaggedError<JsonRpcError>()("JsonRpcError", {
  code: Schema.Int,
  message: Schema.String,
  data: OptionalData
}) {}

/** Any protocol error (a JSON-RPC error the other side sent, or one to send). */
export type McpError =
  | ParseError
  | InvalidRequest
  | MethodNotFound
  | InvalidParams
  | InternalError
  | ResourceNotFound
  | UrlElicitationRequired
  | HeaderMismatch
  | MissingRequiredClientCapability
  | UnsupportedProtocolVersion
  | JsonRpcError

/** The Schema of every protocol error. */
export const McpError = Schema.Union([
  ParseError,
  InvalidRequest,
  MethodNotFound,
  InvalidParams,
  InternalError,
  ResourceNotFound,
  UrlElicitationRequired,
  HeaderMismatch,
  MissingRequiredClientCapability,
  UnsupportedProtocolVersion,
  JsonRpcError
])

/** The tag of every named error (everything but `JsonRpcError`). */
export type Reason = Exclude<McpError["_tag"], "JsonRpcError">

const classes = [
  ParseError,
  InvalidRequest,
  MethodNotFound,
  InvalidParams,
  InternalError,
  ResourceNotFound,
  UrlElicitationRequired,
  HeaderMismatch,
  MissingRequiredClientCapability,
  UnsupportedProtocolVersion,
  JsonRpcError
] as const

/** Whether `u` is a protocol error. */
export const isMcpError = (u: unknown): u is McpError => classes.some((C) => u instanceof C)

// ---------------------------------------------------------------------------
// Per-revision codes
// ---------------------------------------------------------------------------

type CodeTable = { readonly [R in Reason]?: number }

const jsonRpcCodes = {
  ParseError: Code.ParseError,
  InvalidRequest: Code.InvalidRequest,
  MethodNotFound: Code.MethodNotFound,
  InvalidParams: Code.InvalidParams,
  InternalError: Code.InternalError
} as const

/** The codes each revision defines, by reason. A reason missing from a revision does not exist there. */
export const codes: { readonly [V in ProtocolVersion]: CodeTable } = {
  "2024-11-05": { ...jsonRpcCodes, ResourceNotFound: Code.ResourceNotFound },
  "2025-03-26": { ...jsonRpcCodes, ResourceNotFound: Code.ResourceNotFound },
  "2025-06-18": { ...jsonRpcCodes, ResourceNotFound: Code.ResourceNotFound },
  "2025-11-25": {
    ...jsonRpcCodes,
    ResourceNotFound: Code.ResourceNotFound,
    UrlElicitationRequired: Code.UrlElicitationRequired
  },
  "2026-07-28": {
    ...jsonRpcCodes,
    ResourceNotFound: Code.InvalidParams,
    HeaderMismatch: Code.HeaderMismatch,
    MissingRequiredClientCapability: Code.MissingRequiredClientCapability,
    UnsupportedProtocolVersion: Code.UnsupportedProtocolVersion
  }
}

/** The code `reason` has on `revision` (undefined when the revision does not define it), or its canonical code. */
export const codeOf = (reason: Reason, revision?: ProtocolVersion): number | undefined =>
  revision === undefined ? Code[reason] : codes[revision][reason]

/** Whether `code` names an error on `revision`. */
export const exists = (code: number, revision: ProtocolVersion): boolean => reasonsByCode[revision].has(code)

// A code shared by two reasons (-32602 on 2026-07-28) reads back as the first
// one listed, the JSON-RPC one: an unknown resource then surfaces as InvalidParams.
const reverse = (table: CodeTable): ReadonlyMap<number, Reason> => {
  const map = new Map<number, Reason>()
  for (const [reason, code] of Object.entries(table) as Array<[Reason, number]>) {
    if (!map.has(code)) map.set(code, reason)
  }
  return map
}

const reasonsByCode = {
  "2024-11-05": reverse(codes["2024-11-05"]),
  "2025-03-26": reverse(codes["2025-03-26"]),
  "2025-06-18": reverse(codes["2025-06-18"]),
  "2025-11-25": reverse(codes["2025-11-25"]),
  "2026-07-28": reverse(codes["2026-07-28"])
} satisfies { readonly [V in ProtocolVersion]: ReadonlyMap<number, Reason> }

const canonicalReasons = reverse(Code)

// ---------------------------------------------------------------------------
// Conversion to and from the wire
// ---------------------------------------------------------------------------

/**
 * The JSON-RPC `error` member for `error`. With a `revision`, a reason whose
 * code differs on that revision (resource-not-found on 2026-07-28) takes the
 * revision's code; a reason the revision does not define keeps its canonical code.
 */
export const toErrorObject = (error: McpError, revision?: ProtocolVersion): JsonRpc.ErrorObject => {
  const code =
    revision === undefined || error._tag === "JsonRpcError" ? error.code : (codes[revision][error._tag] ?? error.code)
  return error.data === undefined
    ? { code, message: error.message }
    : { code, message: error.message, data: error.data }
}

// `data` is only present as a key when it has a value: the classes use `optionalKey`.
const fields = (message: string, data: unknown) => (data === undefined ? { message } : { message, data })

type Make = (message: string, data: unknown) => McpError | undefined

// Required `data` is checked before construction, so a malformed one falls
// back to `JsonRpcError` instead of throwing from the class constructor.
const checked =
  <D>(is: (u: unknown) => u is D, make: (message: string, data: D) => McpError): Make =>
  (message, data) =>
    is(data) ? make(message, data) : undefined

const makers: { readonly [R in Reason]: Make } = {
  ParseError: (message, data) => new ParseError(fields(message, data)),
  InvalidRequest: (message, data) => new InvalidRequest(fields(message, data)),
  MethodNotFound: (message, data) => new MethodNotFound(fields(message, data)),
  InvalidParams: (message, data) => new InvalidParams(fields(message, data)),
  InternalError: (message, data) => new InternalError(fields(message, data)),
  ResourceNotFound: (message, data) => new ResourceNotFound(fields(message, data)),
  HeaderMismatch: (message, data) => new HeaderMismatch(fields(message, data)),
  UrlElicitationRequired: checked(
    Schema.is(UrlElicitationRequired.fields.data),
    (message, data) => new UrlElicitationRequired({ message, data })
  ),
  MissingRequiredClientCapability: checked(
    Schema.is(MissingRequiredClientCapability.fields.data),
    (message, data) => new MissingRequiredClientCapability({ message, data })
  ),
  UnsupportedProtocolVersion: checked(
    Schema.is(UnsupportedProtocolVersion.fields.data),
    (message, data) => new UnsupportedProtocolVersion({ message, data })
  )
}

/**
 * The error class for a received `error` member. Codes are looked up on
 * `revision` first, then among the canonical codes, so a legacy -32002 still
 * reads as `ResourceNotFound` on 2026-07-28. Unknown codes, and named codes
 * whose required `data` is malformed, give a `JsonRpcError` carrying the code.
 */
export const fromErrorObject = (object: JsonRpc.ErrorObject, revision?: ProtocolVersion): McpError => {
  const reason =
    (revision === undefined ? undefined : reasonsByCode[revision].get(object.code)) ?? canonicalReasons.get(object.code)
  const named = reason === undefined ? undefined : makers[reason](object.message, object.data)
  if (named !== undefined) return named
  return new JsonRpcError(
    object.data === undefined
      ? { code: object.code, message: object.message }
      : { code: object.code, message: object.message, data: object.data }
  )
}

/** A JSON-RPC error response for `error` answering `id`. */
export const toResponse = (
  id: JsonRpc.RequestId | null,
  error: McpError,
  revision?: ProtocolVersion
): JsonRpc.ErrorResponse => ({ jsonrpc: "2.0", id, error: toErrorObject(error, revision) })
