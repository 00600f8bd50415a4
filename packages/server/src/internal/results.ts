/**
 * What a read or a prompt returns, made into the result the protocol carries,
 * a tool's execution error, and the error of a read that finds nothing. The public modules (`Resource`,
 * `Prompt`) describe the values; the handlers that shape results use this
 * module, so serving a request never loads the registration API.
 */
import type * as Content from "@effect-mcp/protocol/Content"
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Prompts from "@effect-mcp/protocol/Prompts"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Base64 from "effect/encoding/Base64"
import * as Predicate from "effect/Predicate"
import type { Messages } from "../Prompt.ts"
import type { Contents } from "../Resource.ts"
import { echo } from "./params.ts"

/**
 * A tool execution error carrying `message` (`isError: true`), as
 * `Tools.errorResult` builds it: written here so that serving a call does not
 * load the protocol's `Tools` module, whose schemas pull in those of
 * sampling, elicitation, roots and tasks (the wire codecs decode the call).
 */
export const toolError = (message: string): Tools.CallToolResult => ({
  content: [{ type: "text", text: message }],
  isError: true
})

/**
 * The error of a read whose URI names nothing: -32002 up to 2025-11-25,
 * -32602 from 2026-07-28 (the revision's encoder picks). The URI is repeated
 * once, in `data`, and cut to a bounded prefix: a client's megabytes must not
 * come back doubled.
 */
export const notFound = (uri: string): McpError.ResourceNotFound =>
  new McpError.ResourceNotFound({ message: "Resource not found", data: { uri: echo(uri) } })

/** The contents of a read as `resources/read` carries them. */
export const toContents = (
  uri: string,
  mimeType: string | undefined,
  contents: Contents
): ReadonlyArray<Content.ResourceContents> => {
  const mime = mimeType === undefined ? {} : { mimeType }
  if (typeof contents === "string") return [{ uri, ...mime, text: contents }]
  if (contents instanceof Uint8Array) return [{ uri, ...mime, blob: Base64.encode(contents) }]
  if (Array.isArray(contents)) return contents as ReadonlyArray<Content.ResourceContents>
  return Predicate.isObject(contents) ? [contents as Content.ResourceContents] : []
}

/** The `prompts/get` result of a prompt handler's value. */
export const promptResult = (messages: Messages, description: string | undefined): Prompts.GetPromptResult => {
  const described = description === undefined ? {} : { description }
  if (typeof messages === "string") {
    return { ...described, messages: [{ role: "user", content: { type: "text", text: messages } }] }
  }
  if (Array.isArray(messages)) return { ...described, messages: messages as ReadonlyArray<Prompts.PromptMessage> }
  return messages as Prompts.GetPromptResult
}
