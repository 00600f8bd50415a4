/**
 * Revision shaping: handlers and registrations produce revision-neutral
 * domain values; before a value is sent, the fields the negotiated revision
 * does not define are dropped and content blocks it cannot carry are turned
 * into text. Every decision reads `Features` (data), never a revision string.
 */
import type * as CacheHints from "@effect-mcp/protocol/CacheHints"
import type * as Content from "@effect-mcp/protocol/Content"
import * as Features from "@effect-mcp/protocol/Features"
import type * as Prompts from "@effect-mcp/protocol/Prompts"
import type { ProtocolVersion } from "@effect-mcp/protocol/ProtocolVersion"
import type * as Resources from "@effect-mcp/protocol/Resources"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Predicate from "effect/Predicate"

type Obj = { readonly [key: string]: unknown }

/**
 * Keys of an `A` and the feature each needs. Made once per shape, at load: the shapes run on every result,
 * and a literal there was an allocation and an `Object.keys` per call.
 */
type Gate<A> = ReadonlyArray<readonly [keyof A & string, Features.FeatureName]>

const gate = <A>(gated: { readonly [K in keyof A]?: Features.FeatureName }): Gate<A> =>
  Object.entries(gated) as unknown as Gate<A>

/** The keys of `value` whose feature is absent from `version`, removed. */
const without = <A extends object>(version: ProtocolVersion, value: A, gated: Gate<A>): A => {
  let out: A | undefined
  for (let i = 0; i < gated.length; i++) {
    const [key, feature] = gated[i]!
    if (value[key] !== undefined && !Features.has(version, feature)) {
      out ??= { ...value }
      delete out[key]
    }
  }
  return out ?? value
}

const annotationsGate = gate<Content.Annotations>({ lastModified: "annotationsLastModified" })
const metaGate = gate<{ readonly _meta?: unknown }>({ _meta: "contentMeta" })
const linkGate = gate<Content.ResourceLink>({ icons: "icons", title: "title" })
const toolGate = gate<Tools.Tool>({
  title: "title",
  annotations: "toolAnnotations",
  icons: "icons",
  _meta: "contentMeta",
  execution: "toolExecution"
})
const listedGate = gate<{ readonly title?: unknown; readonly icons?: unknown; readonly _meta?: unknown }>({
  title: "title",
  icons: "icons",
  _meta: "contentMeta"
})
const titleGate = gate<{ readonly title?: unknown }>({ title: "title" })
const implementationGate = gate<{
  readonly title?: unknown
  readonly description?: unknown
  readonly icons?: unknown
  readonly websiteUrl?: unknown
}>({
  title: "title",
  description: "implementationDetails",
  icons: "implementationDetails",
  websiteUrl: "implementationDetails"
})
const capabilitiesGate = gate<Obj>({ completions: "completionsCapability" })

const annotations = (version: ProtocolVersion, a: Content.Annotations | undefined) =>
  a === undefined ? undefined : without(version, a, annotationsGate)

const withAnnotations = <A extends { readonly annotations?: Content.Annotations }>(
  version: ProtocolVersion,
  value: A
): A => {
  if (value.annotations === undefined || Features.has(version, "annotationsLastModified")) return value
  return { ...value, annotations: annotations(version, value.annotations)! }
}

export const resourceContents = (
  version: ProtocolVersion,
  contents: Content.ResourceContents
): Content.ResourceContents => without(version, contents, metaGate)

/** One content block as `version` can carry it: unknown kinds become a text block describing them. */
export const contentBlock = (version: ProtocolVersion, block: Content.ContentBlock): Content.ContentBlock => {
  let out: Content.ContentBlock = without(version, block, metaGate)
  switch (out.type) {
    case "audio":
      if (!Features.has(version, "audioContent")) {
        return { type: "text", text: `[audio content (${out.mimeType}) not supported by protocol ${version}]` }
      }
      break
    case "resource_link":
      if (!Features.has(version, "resourceLinks")) {
        const label = out.title ?? out.name
        return {
          type: "text",
          text: `Resource: ${label} <${out.uri}>${out.description === undefined ? "" : ` - ${out.description}`}`
        }
      }
      out = without(version, out, linkGate)
      break
    case "resource":
      out = { ...out, resource: resourceContents(version, out.resource) }
      break
  }
  return withAnnotations(version, out)
}

export const content = (version: ProtocolVersion, blocks: ReadonlyArray<Content.ContentBlock>) =>
  blocks.map((block) => contentBlock(version, block))

const stripDialect = (version: ProtocolVersion, schema: Obj): Obj => {
  if (schema.$schema === undefined || Features.has(version, "jsonSchemaDialect")) return schema
  const { $schema: _, ...rest } = schema
  return rest
}

/**
 * Whether `outputSchema` / `structuredContent` may be any JSON (2026-07-28) rather
 * than an object. Features.ts has no entry for this widening yet; it arrived with
 * `resultType`, so that entry stands in for it.
 */
const anyJsonOutput = (version: ProtocolVersion) => Features.has(version, "resultType")

/** Whether `version` can carry this output schema (any JSON Schema from 2026-07-28, objects before). */
export const carriesOutput = (version: ProtocolVersion, outputSchema: Obj | undefined): boolean =>
  outputSchema !== undefined &&
  Features.has(version, "outputSchema") &&
  (anyJsonOutput(version) || outputSchema.type === "object")

export const tool = (version: ProtocolVersion, t: Tools.Tool): Tools.Tool => {
  const out = without(version, t, toolGate)
  const inputSchema = stripDialect(version, out.inputSchema) as Tools.ToolInputSchema
  const { outputSchema, ...rest } = out
  return outputSchema !== undefined && carriesOutput(version, outputSchema)
    ? { ...rest, inputSchema, outputSchema: stripDialect(version, outputSchema) as Tools.ToolOutputSchema }
    : { ...rest, inputSchema }
}

export const callToolResult = (
  version: ProtocolVersion,
  result: Tools.CallToolResult,
  outputSchema: Obj | undefined
): Tools.CallToolResult => {
  const shaped = { ...result, content: content(version, result.content) }
  if (shaped.structuredContent === undefined) return shaped
  const structuredOk =
    Features.has(version, "structuredContent") &&
    (anyJsonOutput(version) ||
      (Predicate.isObject(shaped.structuredContent) && !Array.isArray(shaped.structuredContent))) &&
    (outputSchema === undefined || carriesOutput(version, outputSchema))
  if (structuredOk) return shaped
  const { structuredContent: _, ...rest } = shaped
  return rest
}

export const resource = (version: ProtocolVersion, r: Resources.Resource): Resources.Resource =>
  withAnnotations(version, without(version, r, listedGate))

export const resourceTemplate = (version: ProtocolVersion, r: Resources.ResourceTemplate): Resources.ResourceTemplate =>
  withAnnotations(version, without(version, r, listedGate))

export const prompt = (version: ProtocolVersion, p: Prompts.Prompt): Prompts.Prompt => {
  const out = without(version, p, listedGate)
  if (out.arguments === undefined || Features.has(version, "title")) return out
  return { ...out, arguments: out.arguments.map((a) => without(version, a, titleGate)) }
}

export const promptMessage = (version: ProtocolVersion, m: Prompts.PromptMessage): Prompts.PromptMessage => ({
  role: m.role,
  content: contentBlock(version, m.content)
})

/** Implementation info (`serverInfo`) as `version` defines it. */
export const implementation = <
  A extends {
    readonly title?: string
    readonly description?: string
    readonly icons?: unknown
    readonly websiteUrl?: string
  }
>(
  version: ProtocolVersion,
  info: A
): A => without(version, info, implementationGate as Gate<A>)

/** Server capabilities as `version` defines them (`completions` arrived in 2025-03-26). */
export const capabilities = (version: ProtocolVersion | undefined, caps: Obj): Obj =>
  version === undefined ? caps : without(version, caps, capabilitiesGate)

/** Adds the cache hints `version` requires on cacheable results. */
export const withCacheHints = <A extends object>(
  version: ProtocolVersion,
  result: A,
  hints: { readonly ttlMs: number; readonly cacheScope: CacheHints.CacheScope }
): A => (Features.has(version, "cacheHints") ? { ...result, ttlMs: hints.ttlMs, cacheScope: hints.cacheScope } : result)
