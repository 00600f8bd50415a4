/**
 * Content blocks: what tools return, prompts contain and sampling exchanges.
 *
 * | block / field                      | 2024-11-05 | 2025-03-26 | 2025-06-18 | 2025-11-25 | 2026-07-28 |
 * |------------------------------------|------------|------------|------------|------------|------------|
 * | text, image, resource (embedded)   | yes        | yes        | yes        | yes        | yes        |
 * | audio                              | -          | yes        | yes        | yes        | yes        |
 * | resource_link                      | -          | -          | yes        | yes        | yes        |
 * | tool_use, tool_result (sampling)   | -          | -          | -          | yes        | yes        |
 * | `_meta` on blocks, resource bodies | -          | -          | yes        | yes        | yes        |
 * | `annotations.lastModified`         | -          | -          | yes        | yes        | yes        |
 * | `icons` on resource_link           | -          | -          | -          | yes        | yes        |
 * | tool_result `structuredContent`    | -          | -          | -          | object     | any JSON   |
 *
 * 2024-11-05 spells annotations as an inline `Annotated` mixin; the shape is
 * the same as the later `Annotations` definition minus `lastModified`.
 *
 * Which blocks each place accepts:
 * - tool results and prompt messages: text | image | resource (2024-11-05),
 *   + audio (2025-03-26), + resource_link (2025-06-18 on: `ContentBlock`);
 * - sampling messages: text | image (2024-11-05), + audio (2025-03-26),
 *   + tool_use | tool_result (2025-11-25 on: `SamplingMessageContentBlock`).
 */
import * as Schema from "effect/Schema"
import { Icon, Icons } from "./internal/metaValues.ts"
import { OpenObject } from "./internal/open.ts"
import { Meta } from "./Meta.ts"

export { Icon, Icons }

/** The speaker of a message, and the audience of an annotated object. */
export const Role = Schema.Literals(["user", "assistant"]).annotate({ identifier: "Role" })
export type Role = typeof Role.Type

/** A number in [0, 1] (annotation and model-selection priorities). */
export const UnitInterval = Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 1 })).annotate({
  identifier: "UnitInterval"
})

/** Hints for the client about how to use or display an object. */
export const Annotations = Schema.Struct({
  audience: Schema.optionalKey(Schema.Array(Role)),
  priority: Schema.optionalKey(UnitInterval),
  /** ISO 8601 timestamp (2025-06-18 on). */
  lastModified: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "Annotations" })
export type Annotations = typeof Annotations.Type

const common = {
  annotations: Schema.optionalKey(Annotations),
  _meta: Schema.optionalKey(Meta)
}

/** A text content block. */
export const TextContent = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String,
  ...common
}).annotate({ identifier: "TextContent" })
/** Decoded `TextContent`. */
export type TextContent = typeof TextContent.Type

/** `data` is base64. */
export const ImageContent = Schema.Struct({
  type: Schema.Literal("image"),
  data: Schema.String,
  mimeType: Schema.String,
  ...common
}).annotate({ identifier: "ImageContent" })
export type ImageContent = typeof ImageContent.Type

/** `data` is base64 (2025-03-26 on). */
export const AudioContent = Schema.Struct({
  type: Schema.Literal("audio"),
  data: Schema.String,
  mimeType: Schema.String,
  ...common
}).annotate({ identifier: "AudioContent" })
export type AudioContent = typeof AudioContent.Type

/** The descriptive fields of a resource, shared by `Resources.Resource` and {@link ResourceLink}. */
export const resourceFields = {
  uri: Schema.String,
  name: Schema.String,
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  mimeType: Schema.optionalKey(Schema.String),
  /** Size in bytes of the raw content, if known. */
  size: Schema.optionalKey(Schema.Int),
  icons: Schema.optionalKey(Icons),
  ...common
}

/** A reference to a resource the client may read (2025-06-18 on). */
export const ResourceLink = Schema.Struct({
  type: Schema.Literal("resource_link"),
  ...resourceFields
}).annotate({ identifier: "ResourceLink" })
export type ResourceLink = typeof ResourceLink.Type

/** The contents of a text resource. */
export const TextResourceContents = Schema.Struct({
  uri: Schema.String,
  mimeType: Schema.optionalKey(Schema.String),
  text: Schema.String,
  _meta: Schema.optionalKey(Meta)
}).annotate({ identifier: "TextResourceContents" })
/** Decoded `TextResourceContents`. */
export type TextResourceContents = typeof TextResourceContents.Type

/** `blob` is base64. */
export const BlobResourceContents = Schema.Struct({
  uri: Schema.String,
  mimeType: Schema.optionalKey(Schema.String),
  blob: Schema.String,
  _meta: Schema.optionalKey(Meta)
}).annotate({ identifier: "BlobResourceContents" })
export type BlobResourceContents = typeof BlobResourceContents.Type

/** The body of a resource: text or binary. */
export const ResourceContents = Schema.Union([TextResourceContents, BlobResourceContents]).annotate({
  identifier: "ResourceContents"
})
export type ResourceContents = typeof ResourceContents.Type

/** A resource's contents inlined into a message or tool result. */
export const EmbeddedResource = Schema.Struct({
  type: Schema.Literal("resource"),
  resource: ResourceContents,
  ...common
}).annotate({ identifier: "EmbeddedResource" })
export type EmbeddedResource = typeof EmbeddedResource.Type

/** What tool results and prompt messages contain (the superset of every revision). */
export const ContentBlock = Schema.Union([
  TextContent,
  ImageContent,
  AudioContent,
  ResourceLink,
  EmbeddedResource
]).annotate({ identifier: "ContentBlock" })
export type ContentBlock = typeof ContentBlock.Type

/** The model asks the client to call a tool (sampling, 2025-11-25 on). */
export const ToolUseContent = Schema.Struct({
  type: Schema.Literal("tool_use"),
  /** Correlates this call with its {@link ToolResultContent}. */
  id: Schema.String,
  name: Schema.String,
  input: OpenObject,
  _meta: Schema.optionalKey(Meta)
}).annotate({ identifier: "ToolUseContent" })
export type ToolUseContent = typeof ToolUseContent.Type

/** The outcome of a {@link ToolUseContent} call, fed back to the model (sampling, 2025-11-25 on). */
export const ToolResultContent = Schema.Struct({
  type: Schema.Literal("tool_result"),
  toolUseId: Schema.String,
  content: Schema.Array(ContentBlock),
  /** An object in 2025-11-25, any JSON value in 2026-07-28. */
  structuredContent: Schema.optionalKey(Schema.Unknown),
  isError: Schema.optionalKey(Schema.Boolean),
  _meta: Schema.optionalKey(Meta)
}).annotate({ identifier: "ToolResultContent" })
export type ToolResultContent = typeof ToolResultContent.Type

/** What sampling messages contain (the spec's `SamplingMessageContentBlock`, widened to every revision). */
export const SamplingContent = Schema.Union([
  TextContent,
  ImageContent,
  AudioContent,
  ToolUseContent,
  ToolResultContent
]).annotate({ identifier: "SamplingContent" })
export type SamplingContent = typeof SamplingContent.Type

/** A text block, the most common content. */
export const text = (text: string): TextContent => ({ type: "text", text })
