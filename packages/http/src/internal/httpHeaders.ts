/**
 * The Streamable HTTP headers that mirror the body: `MCP-Protocol-Version`
 * (every revision from 2025-06-18), and on the stateless revision
 * (2026-07-28) `Mcp-Method` and `Mcp-Name`, which let intermediaries route
 * without parsing JSON. The server refuses a request whose headers disagree
 * with its body (HeaderMismatch, HTTP 400); the client derives them from the
 * body it sends.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Registry from "@effect-mcp/protocol/Registry"
import * as Base64 from "effect/encoding/Base64"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as ParamHeaders from "../ParamHeaders.ts"
import { HEADER_METHOD, HEADER_NAME, HEADER_PROTOCOL_VERSION } from "./httpWire.ts"

export const META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"

const paramsOf = (message: JsonRpc.Message): { readonly [key: string]: unknown } | undefined => {
  const params = (message as JsonRpc.Request).params
  return Predicate.isObject(params) && !Array.isArray(params)
    ? (params as { readonly [key: string]: unknown })
    : undefined
}

/** The revision a message names in `_meta` (stateless revisions carry it on every request). */
export const metaVersionOf = (message: JsonRpc.Message): string | undefined => {
  const meta = paramsOf(message)?._meta
  if (!Predicate.isObject(meta)) return undefined
  const version = (meta as { readonly [key: string]: unknown })[META_PROTOCOL_VERSION]
  return typeof version === "string" ? version : undefined
}

export const isStatelessVersion = (version: string | undefined): boolean =>
  version !== undefined && ProtocolVersion.isSupported(version) && Registry.get(version).stateless

/** The value `Mcp-Name` mirrors for a method, or undefined when the method has none. */
export const nameOf = (message: JsonRpc.Message): string | undefined => {
  if (!("method" in message)) return undefined
  const params = paramsOf(message)
  switch (message.method) {
    case "tools/call":
    case "prompts/get":
      return typeof params?.name === "string" ? params.name : undefined
    case "resources/read":
      return typeof params?.uri === "string" ? params.uri : undefined
    // The Tasks extension (SEP-2663) routes a task's requests by its id.
    case "tasks/get":
    case "tasks/update":
    case "tasks/cancel":
      return typeof params?.taskId === "string" ? params.taskId : undefined
    default:
      return undefined
  }
}

// Header values are visible ASCII; anything else travels base64-encoded in the
// `=?base64?...?=` form.
const encodedForm = /^=\?base64\?([A-Za-z0-9+/=]*)\?=$/i

export const encodeHeaderValue: (value: string) => string = ParamHeaders.encodeText

const decodeHeaderValue = (value: string): string | undefined => {
  const match = encodedForm.exec(value)
  if (match === null) return value
  const decoded = Base64.decodeString(match[1]!)
  return Result.isSuccess(decoded) ? decoded.success : undefined
}

const mismatch = (message: string, id: JsonRpc.RequestId | null) => ({
  error: new McpError.HeaderMismatch({ message: `Header mismatch: ${message}` }),
  id
})

/** A tool argument mirrored into `Mcp-Param-<header>` (SEP-2243 `x-mcp-header`). */
export interface ParamHeader {
  /** The name after `Mcp-Param-`, as declared (header names ignore case). */
  readonly header: string
  /** The top-level argument it mirrors, or that holds the mirrored property. */
  readonly argument: string
  /** The property names below `argument` when the mirrored property is nested. */
  readonly nested?: ReadonlyArray<string> | undefined
}

export const PARAM_HEADER_PREFIX = ParamHeaders.HEADER_PREFIX

/**
 * The mirrored arguments a tool's `inputSchema` declares with valid
 * `x-mcp-header` annotations (an invalid one is not checked: clients leave
 * such a tool out of their listing).
 */
export const paramHeadersOf = (inputSchema: unknown): ReadonlyArray<ParamHeader> =>
  ParamHeaders.scan(inputSchema).declarations.map(({ name, path }) =>
    path.length === 1
      ? { header: name, argument: path[0]! }
      : { header: name, argument: path[0]!, nested: path.slice(1) }
  )

// Strict base64: whole quads, padding only at the end. A value that only looks
// encoded must not be read leniently, or a mangled header would pass.
const strictBase64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** An `Mcp-Param-*` value as text, or undefined when its base64 form is malformed. */
const decodeParamValue = (value: string): string | undefined => {
  const match = /^=\?base64\?(.*)\?=$/i.exec(value)
  if (match === null) return value
  const encoded = match[1]!
  if (!strictBase64.test(encoded)) return undefined
  const decoded = Base64.decodeString(encoded)
  return Result.isSuccess(decoded) ? decoded.success : undefined
}

/** A decimal number as a header writes it: no hex, no blanks, no `Infinity`. */
const decimal = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/

/**
 * Whether a number argument and its header text are the same number: the
 * spec asks numbers to be compared as numbers (`42.0` and `042` mirror 42), as
 * a client may write them as its language prints them.
 */
const sameNumber = (value: unknown, text: string): boolean =>
  typeof value === "number" && decimal.test(text) && Number(text) === value

const checkParamHeaders = (
  headers: { readonly [key: string]: string | undefined },
  message: JsonRpc.Message,
  declared: ReadonlyArray<ParamHeader>,
  id: JsonRpc.RequestId | null
) => {
  const args = paramsOf(message)?.arguments
  const values = Predicate.isObject(args) ? (args as { readonly [key: string]: unknown }) : {}
  for (const { argument: top, header, nested } of declared) {
    const name = `Mcp-Param-${header}`
    const raw = headers[`${PARAM_HEADER_PREFIX}${header.toLowerCase()}`]
    const argument = nested === undefined ? top : [top, ...nested].join(".")
    const value = nested === undefined ? values[top] : ParamHeaders.valueAt(values[top], nested)
    if (value === undefined || value === null) {
      if (raw !== undefined) return mismatch(`${name} is present but argument '${argument}' is not`, id)
      continue
    }
    const expected = ParamHeaders.textOf(value)
    if (expected === undefined) continue
    if (raw === undefined) return mismatch(`the ${name} header is required (argument '${argument}' is present)`, id)
    const text = decodeParamValue(raw.trim())
    if (text === undefined) return mismatch(`${name} header value '${raw}' is not valid base64`, id)
    if (text !== expected && !sameNumber(value, text)) {
      return mismatch(`${name} header value '${raw}' does not match argument '${argument}'`, id)
    }
  }
  return undefined
}

/**
 * Checks the mirrored headers of one message of a stateless revision.
 * Returns the error to answer with (HTTP 400), or undefined.
 */
export const checkStateless = (
  headers: { readonly [key: string]: string | undefined },
  message: JsonRpc.Message,
  paramHeaders?: (toolName: string) => ReadonlyArray<ParamHeader> | undefined
): { readonly error: McpError.McpError; readonly id: JsonRpc.RequestId | null } | undefined => {
  const id = JsonRpc.isRequest(message) ? message.id : null
  if (!("method" in message)) return undefined
  const headerVersion = headers[HEADER_PROTOCOL_VERSION]
  const bodyVersion = metaVersionOf(message)
  if (JsonRpc.isRequest(message) && bodyVersion === undefined) {
    // A malformed request rather than a disagreement: the revision requires the key in `_meta`.
    return {
      error: new McpError.InvalidParams({
        message: `Invalid params: _meta["${META_PROTOCOL_VERSION}"] is required`
      }),
      id
    }
  }
  if (JsonRpc.isRequest(message) || bodyVersion !== undefined) {
    if (headerVersion === undefined) return mismatch("the MCP-Protocol-Version header is required", id)
    if (bodyVersion !== headerVersion) {
      return mismatch(
        `MCP-Protocol-Version header value '${headerVersion}' does not match body value '${bodyVersion ?? ""}'`,
        id
      )
    }
  }
  const method = headers[HEADER_METHOD]
  if (method === undefined) return mismatch("the Mcp-Method header is required", id)
  if (decodeHeaderValue(method) !== message.method) {
    return mismatch(`Mcp-Method header value '${method}' does not match body value '${message.method}'`, id)
  }
  const name = nameOf(message)
  if (name === undefined) return undefined
  const header = headers[HEADER_NAME]
  if (header === undefined) return mismatch("the Mcp-Name header is required", id)
  if (decodeHeaderValue(header) !== name) {
    return mismatch(`Mcp-Name header value '${header}' does not match body value '${name}'`, id)
  }
  const declared = message.method === "tools/call" ? paramHeaders?.(name) : undefined
  return declared === undefined || declared.length === 0 ? undefined : checkParamHeaders(headers, message, declared, id)
}

/** The headers a client adds for one outgoing message of a stateless revision. */
export const statelessHeaders = (message: JsonRpc.Message): Record<string, string> => {
  if (!("method" in message)) return {}
  const headers: Record<string, string> = { [HEADER_METHOD]: encodeHeaderValue(message.method) }
  const name = nameOf(message)
  if (name !== undefined) headers[HEADER_NAME] = encodeHeaderValue(name)
  return headers
}
