/**
 * The JSON-RPC 2.0 envelope: requests, notifications, responses and batches.
 *
 * Decoded messages are the plain objects `JSON.parse` produced (see
 * `JsonRpcCodec`), typed by the readonly interfaces below, so nothing is copied
 * per message. The Schemas describe the same shapes for places that want a
 * schema (JSON Schema generation, tests, RPC); the codec does not run them on
 * the hot path, and a test keeps the two in agreement.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** The only `jsonrpc` member value JSON-RPC 2.0 allows. */
export const version = "2.0"

/**
 * A request id. Integers must be safe integers: a larger one would not survive
 * a round trip through `JSON.parse`, so the answer could not be matched.
 */
export type RequestId = string | number

/** A request id: a string or an integer. */
export const RequestId: Schema.Codec<RequestId> = Schema.Union([Schema.String, Schema.Int])

/**
 * Whether a raw value (a member of a parsed frame, not yet decoded) is a
 * request id: a string or a safe integer, as `RequestId` describes. The codec,
 * the Peer and the transports all test ids with this one guard, so an id one
 * of them accepts is never refused by another.
 */
// Number.isSafeInteger is false for non-numbers, so it doubles as the type test.
export const isRequestId = (u: unknown): u is RequestId => typeof u === "string" || Number.isSafeInteger(u)

/** `params`: by-name (object) or by-position (array). MCP only uses objects; `IncomingValidator` enforces that. */
export type Params = { readonly [key: string]: unknown } | ReadonlyArray<unknown>

/** Params: by-name (object) or by-position (array). */
export const Params: Schema.Codec<Params> = Schema.Union([
  Schema.Record(Schema.String, Schema.Unknown),
  Schema.Array(Schema.Unknown)
])

/** A JSON-RPC request. */
export interface Request {
  readonly jsonrpc: "2.0"
  readonly id: RequestId
  readonly method: string
  readonly params?: Params
}

/** A JSON-RPC notification (a request without an id). */
export interface Notification {
  readonly jsonrpc: "2.0"
  readonly method: string
  readonly params?: Params
}

/** A JSON-RPC response carrying a result. */
export interface SuccessResponse {
  readonly jsonrpc: "2.0"
  readonly id: RequestId
  readonly result: unknown
}

/** The `error` member of an error response. */
export interface ErrorObject {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

/** `id` is `null` when the request's id could not be determined (parse errors, invalid requests). */
export interface ErrorResponse {
  readonly jsonrpc: "2.0"
  readonly id: RequestId | null
  readonly error: ErrorObject
}

/** A JSON-RPC response. */
export type Response = SuccessResponse | ErrorResponse

/** Any JSON-RPC message. */
export type Message = Request | Notification | Response

/** A batch as sent; the receiving side decodes batches to `JsonRpcCodec.DecodedBatch`. */
export type Batch = ReadonlyArray<Message>

// ---------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------

const Version = Schema.Literal(version)

// `optionalKey(Never)` forbids a key: without it a request would also match
// the notification schema, and a response carrying both members would match both.
const Absent = Schema.optionalKey(Schema.Never)

/** The Schema of a JSON-RPC error object. */
export const ErrorObject: Schema.Codec<ErrorObject> = Schema.Struct({
  code: Schema.Int,
  message: Schema.String,
  data: Schema.optionalKey(Schema.Unknown)
})

/** The Schema of a JSON-RPC request. */
export const Request: Schema.Codec<Request> = Schema.Struct({
  jsonrpc: Version,
  id: RequestId,
  method: Schema.String,
  params: Schema.optionalKey(Params)
})

/** The Schema of a JSON-RPC notification. */
export const Notification: Schema.Codec<Notification> = Schema.Struct({
  jsonrpc: Version,
  id: Absent,
  method: Schema.String,
  params: Schema.optionalKey(Params)
})

/** The Schema of a successful response. */
export const SuccessResponse: Schema.Codec<SuccessResponse> = Schema.Struct({
  jsonrpc: Version,
  id: RequestId,
  method: Absent,
  result: Schema.Unknown,
  error: Absent
})

/** The wire form of an error response: MCP (2025-11-25 on) lets `id` be absent; it decodes to `null`. */
export interface ErrorResponseEncoded {
  readonly jsonrpc: "2.0"
  readonly id?: RequestId | null
  readonly error: ErrorObject
}

/** The Schema of an error response (a missing id decodes to null). */
export const ErrorResponse: Schema.Codec<ErrorResponse, ErrorResponseEncoded> = Schema.Struct({
  jsonrpc: Version,
  id: Schema.NullOr(RequestId).pipe(Schema.withDecodingDefaultKey(Effect.succeed(null))),
  method: Absent,
  result: Absent,
  error: ErrorObject
})

/** A message as it is on the wire. */
export type MessageEncoded = Request | Notification | SuccessResponse | ErrorResponseEncoded

/** The Schema of a response. */
export const Response: Schema.Codec<Response, SuccessResponse | ErrorResponseEncoded> = Schema.Union([
  SuccessResponse,
  ErrorResponse
])

/** The Schema of any JSON-RPC message. */
export const Message: Schema.Codec<Message, MessageEncoded> = Schema.Union([
  Request,
  Notification,
  SuccessResponse,
  ErrorResponse
])

/** The Schema of a non-empty batch of messages. */
export const Batch: Schema.Codec<Batch, ReadonlyArray<MessageEncoded>> = Schema.NonEmptyArray(Message)

// ---------------------------------------------------------------------------
// Guards (over decoded messages: they look at one or two members, nothing more)
// ---------------------------------------------------------------------------

/** Whether the message is a request. */
export const isRequest = (message: Message): message is Request =>
  (message as Request).method !== undefined && (message as Request).id !== undefined

/** Whether the message is a notification. */
export const isNotification = (message: Message): message is Notification =>
  (message as Request).method !== undefined && (message as Request).id === undefined

/** Whether the message is a response. */
export const isResponse = (message: Message): message is Response => (message as Request).method === undefined

/** Whether the message is a successful response. */
export const isSuccess = (message: Message): message is SuccessResponse =>
  (message as Request).method === undefined && (message as SuccessResponse).result !== undefined

/** Whether the message is an error response. */
export const isFailure = (message: Message): message is ErrorResponse =>
  (message as Request).method === undefined && (message as ErrorResponse).error !== undefined

// ---------------------------------------------------------------------------
// Constructors (an absent `params` is left out rather than set to undefined,
// so a message compares equal to its own decoded encoding)
// ---------------------------------------------------------------------------

/** Makes a request. */
export const request = (id: RequestId, method: string, params?: Params): Request =>
  params === undefined ? { jsonrpc: version, id, method } : { jsonrpc: version, id, method, params }

/** Makes a notification. */
export const notification = (method: string, params?: Params): Notification =>
  params === undefined ? { jsonrpc: version, method } : { jsonrpc: version, method, params }

/** Makes a successful response. */
export const success = (id: RequestId, result: unknown): SuccessResponse => ({ jsonrpc: version, id, result })

/** Makes an error response. */
export const failure = (id: RequestId | null, error: ErrorObject): ErrorResponse => ({ jsonrpc: version, id, error })
