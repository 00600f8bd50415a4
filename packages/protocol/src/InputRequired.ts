/**
 * Multi-round-trip requests (2026-07-28 only). A stateless server cannot send
 * requests to the client, so instead of calling `sampling/createMessage`,
 * `elicitation/create` or `roots/list` it answers the client's request with an
 * {@link InputRequiredResult} (`resultType: "input_required"`) listing
 * {@link InputRequests} under keys it chooses, plus an opaque `requestState`.
 * The client fulfils them and retries the original request with the same
 * params plus `inputResponses` (same keys) and the echoed `requestState`.
 *
 * Retryable requests carry the retry fields: `tools/call`, `prompts/get`,
 * `resources/read` (their params spread {@link InputResponseParams}'s fields).
 *
 * On 2024-11-05 .. 2025-11-25 the same three interactions are ordinary
 * server-to-client requests; handlers use one API for both (see DESIGN.md).
 * Input requests have no `id`/`jsonrpc`, and their sampling params carry no
 * `_meta` (the spec's 2026-07-28 `CreateMessageRequestParams` has none).
 */
import * as Schema from "effect/Schema"
import { ElicitParams, ElicitResult } from "./Elicitation.ts"
import { resultStruct } from "./internal/result.ts"
import { RequestMeta } from "./Meta.ts"
import { ListRootsParams, ListRootsResult } from "./Roots.ts"
import { CreateMessageParams, CreateMessageResult } from "./Sampling.ts"

/** A sampling request inside an `input_required` result. */
export const CreateMessageInputRequest = Schema.Struct({
  method: Schema.Literal("sampling/createMessage"),
  params: CreateMessageParams
}).annotate({ identifier: "CreateMessageInputRequest" })
/** Decoded `CreateMessageInputRequest`. */
export type CreateMessageInputRequest = typeof CreateMessageInputRequest.Type

/** A roots request inside an `input_required` result. */
export const ListRootsInputRequest = Schema.Struct({
  method: Schema.Literal("roots/list"),
  params: Schema.optionalKey(ListRootsParams)
}).annotate({ identifier: "ListRootsInputRequest" })
/** Decoded `ListRootsInputRequest`. */
export type ListRootsInputRequest = typeof ListRootsInputRequest.Type

/** An elicitation request inside an `input_required` result. */
export const ElicitInputRequest = Schema.Struct({
  method: Schema.Literal("elicitation/create"),
  params: ElicitParams
}).annotate({ identifier: "ElicitInputRequest" })
/** Decoded `ElicitInputRequest`. */
export type ElicitInputRequest = typeof ElicitInputRequest.Type

/** One thing the server needs from the client, tagged by `method`. */
export const InputRequest = Schema.Union([
  CreateMessageInputRequest,
  ListRootsInputRequest,
  ElicitInputRequest
]).annotate({ identifier: "InputRequest" })
export type InputRequest = typeof InputRequest.Type

/** Server-chosen key to input request. */
export const InputRequests = Schema.Record(Schema.String, InputRequest).annotate({ identifier: "InputRequests" })
export type InputRequests = typeof InputRequests.Type

/**
 * The client's answer to one input request. Results carry no tag; the key in
 * {@link InputResponses} tells which request it answers (and so its shape).
 */
export const InputResponse = Schema.Union([CreateMessageResult, ListRootsResult, ElicitResult]).annotate({
  identifier: "InputResponse"
})
export type InputResponse = typeof InputResponse.Type

/** Same keys as the {@link InputRequests} they answer. */
export const InputResponses = Schema.Record(Schema.String, InputResponse).annotate({ identifier: "InputResponses" })
export type InputResponses = typeof InputResponses.Type

/** A 2026-07-28 result asking the client for input before the request can complete. */
export const InputRequiredResult = resultStruct({
  inputRequests: Schema.optionalKey(InputRequests),
  /** Opaque to the client; echoed back verbatim on retry. */
  requestState: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "InputRequiredResult" })
/** Decoded `InputRequiredResult`. */
export type InputRequiredResult = typeof InputRequiredResult.Type

/** The retry fields (the spec's `InputResponseRequestParams`). */
export const InputResponseParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  inputResponses: Schema.optionalKey(InputResponses),
  requestState: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "InputResponseParams" })
export type InputResponseParams = typeof InputResponseParams.Type

/** An {@link InputRequiredResult} (with `resultType` set, as the wire needs it). */
export const make = (
  inputRequests: InputRequests,
  requestState?: string
): InputRequiredResult & { readonly resultType: "input_required" } =>
  requestState === undefined
    ? { resultType: "input_required", inputRequests }
    : { resultType: "input_required", inputRequests, requestState }
