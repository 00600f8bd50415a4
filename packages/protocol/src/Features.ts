/**
 * Which feature exists in which revision, as data: the engine and the
 * per-revision projections ask {@link has} instead of comparing revision
 * strings.
 *
 * Each entry names its `evidence`: a path into the revision's normative
 * schema.json (a definition, then property names, following `$ref`s) that
 * exists exactly in the revisions from `since` to `until`. A test checks every
 * entry against all five schemas.
 */
import * as ProtocolVersion from "./ProtocolVersion.ts"

/** A protocol feature: the revisions that have it, and the evidence for it in their schemas. */
export interface Feature {
  /** The first revision with the feature. */
  readonly since: ProtocolVersion.ProtocolVersion
  /** The last revision with the feature, when a later one dropped it. */
  readonly until?: ProtocolVersion.ProtocolVersion
  /** Definition name, then property names, in schema.json. */
  readonly evidence: ReadonlyArray<string>
  readonly description: string
}

/** Every feature effect-mcp tracks, by name. */
export const features = {
  // Transport and lifecycle
  batches: {
    since: "2025-03-26",
    until: "2025-03-26",
    evidence: ["JSONRPCBatchRequest"],
    description: "JSON-RPC batches (arrays of messages)"
  },
  initialize: {
    since: "2024-11-05",
    until: "2025-11-25",
    evidence: ["InitializeRequest"],
    description: "the initialize / notifications/initialized handshake"
  },
  ping: { since: "2024-11-05", until: "2025-11-25", evidence: ["PingRequest"], description: "the ping request" },
  serverRequests: {
    since: "2024-11-05",
    until: "2025-11-25",
    evidence: ["ServerRequest"],
    description: "server-to-client requests (sampling, roots, elicitation as requests)"
  },
  stateless: {
    since: "2026-07-28",
    evidence: ["RequestMetaObject", "io.modelcontextprotocol/protocolVersion"],
    description: "no session: version, client capabilities and info travel in every request's _meta"
  },
  resultServerInfo: {
    since: "2026-07-28",
    evidence: ["ResultMetaObject", "io.modelcontextprotocol/serverInfo"],
    description: "server info in every result's _meta"
  },
  discover: { since: "2026-07-28", evidence: ["DiscoverRequest"], description: "the server/discover request" },
  resultType: {
    since: "2026-07-28",
    evidence: ["Result", "resultType"],
    description: "results say whether they are complete or need input"
  },
  inputRequired: {
    since: "2026-07-28",
    evidence: ["InputRequiredResult"],
    description: "multi-round-trip requests (input_required results, retry with inputResponses)"
  },
  cacheHints: {
    since: "2026-07-28",
    evidence: ["ListToolsResult", "ttlMs"],
    description: "ttlMs / cacheScope on list, read and discover results"
  },
  // The schema names `extensions` from 2026-07-28, but capabilities are open objects in every revision and
  // extensions (SEP-2133, MCP Apps) are declared there whatever the revision: effect-mcp keeps a client's
  // `extensions` on every revision (scripts/wire/deviations.ts), so no code asks `has(v, "extensions")`.
  extensions: {
    since: "2026-07-28",
    evidence: ["ClientCapabilities", "extensions"],
    description:
      "the extensions capability map, named in the schema (declared and kept on earlier revisions too, where capabilities are open)"
  },
  // Tools and content
  audioContent: { since: "2025-03-26", evidence: ["AudioContent"], description: "audio content blocks" },
  toolAnnotations: {
    since: "2025-03-26",
    evidence: ["ToolAnnotations"],
    description: "behaviour hints on tools"
  },
  title: {
    since: "2025-06-18",
    evidence: ["BaseMetadata", "title"],
    description: "human-readable title on tools, prompts, resources, implementations"
  },
  contentMeta: {
    since: "2025-06-18",
    evidence: ["TextContent", "_meta"],
    description: "_meta on content blocks, resources, tools, prompts, roots"
  },
  structuredContent: {
    since: "2025-06-18",
    evidence: ["CallToolResult", "structuredContent"],
    description: "structured tool results"
  },
  outputSchema: { since: "2025-06-18", evidence: ["Tool", "outputSchema"], description: "tool output schemas" },
  resourceLinks: { since: "2025-06-18", evidence: ["ResourceLink"], description: "resource_link content blocks" },
  annotationsLastModified: {
    since: "2025-06-18",
    evidence: ["Annotations", "lastModified"],
    description: "lastModified annotation"
  },
  icons: {
    since: "2025-11-25",
    evidence: ["Icon"],
    description: "icons on tools, prompts, resources, implementations"
  },
  implementationDetails: {
    since: "2025-11-25",
    evidence: ["Implementation", "websiteUrl"],
    description: "description, websiteUrl and icons on implementation info"
  },
  jsonSchemaDialect: {
    since: "2025-11-25",
    evidence: ["Tool", "inputSchema", "$schema"],
    description: "$schema in tool input/output and elicitation schemas"
  },
  toolExecution: {
    since: "2025-11-25",
    until: "2025-11-25",
    evidence: ["Tool", "execution"],
    description: "tool execution settings (task support)"
  },
  tasks: {
    since: "2025-11-25",
    until: "2025-11-25",
    evidence: ["Task"],
    description: "experimental tasks (task-augmented requests, tasks/* methods)"
  },
  // Client features
  elicitation: { since: "2025-06-18", evidence: ["ElicitRequest"], description: "elicitation/create" },
  urlElicitation: {
    since: "2025-11-25",
    evidence: ["ElicitRequestURLParams"],
    description: "URL mode elicitation"
  },
  elicitationEnums: {
    since: "2025-11-25",
    evidence: ["TitledMultiSelectEnumSchema"],
    description: "titled and multi-select enum fields in elicitation forms"
  },
  elicitationDefaults: {
    since: "2025-11-25",
    evidence: ["StringSchema", "default"],
    description: "default values on string, number and enum form fields"
  },
  elicitationComplete: {
    since: "2025-11-25",
    until: "2025-11-25",
    evidence: ["ElicitationCompleteNotification"],
    description: "notifications/elicitation/complete"
  },
  urlElicitationRequiredError: {
    since: "2025-11-25",
    until: "2025-11-25",
    evidence: ["URLElicitationRequiredError"],
    description: "the -32042 error carrying URL elicitations"
  },
  samplingTools: {
    since: "2025-11-25",
    evidence: ["CreateMessageRequest", "params", "tools"],
    description: "tools and toolChoice in sampling, tool_use / tool_result content"
  },
  samplingContentArrays: {
    since: "2025-11-25",
    evidence: ["SamplingMessageContentBlock"],
    description: "sampling message content as a list of blocks"
  },
  rootsListChanged: {
    since: "2024-11-05",
    until: "2025-11-25",
    evidence: ["RootsListChangedNotification"],
    description: "notifications/roots/list_changed"
  },
  // Server features
  completionsCapability: {
    since: "2025-03-26",
    evidence: ["ServerCapabilities", "completions"],
    description: "the completions server capability (the method exists ungated in 2024-11-05)"
  },
  completionContext: {
    since: "2025-06-18",
    evidence: ["CompleteRequest", "params", "context"],
    description: "already-resolved arguments in completion/complete"
  },
  progressMessage: {
    since: "2025-03-26",
    evidence: ["ProgressNotification", "params", "message"],
    description: "message on progress notifications"
  },
  resourceSubscribe: {
    since: "2024-11-05",
    until: "2025-11-25",
    evidence: ["SubscribeRequest"],
    description: "resources/subscribe and resources/unsubscribe"
  },
  subscriptionsListen: {
    since: "2026-07-28",
    evidence: ["SubscriptionsListenRequest"],
    description: "subscriptions/listen notification streams"
  },
  setLevel: {
    since: "2024-11-05",
    until: "2025-11-25",
    evidence: ["SetLevelRequest"],
    description: "logging/setLevel"
  },
  requestLogLevel: {
    since: "2026-07-28",
    evidence: ["RequestMetaObject", "io.modelcontextprotocol/logLevel"],
    description: "log level chosen per request in _meta"
  }
} as const satisfies Record<string, Feature>

/** The name of a tracked feature. */
export type FeatureName = keyof typeof features

/** The names of every tracked feature. */
export const names: ReadonlyArray<FeatureName> = Object.keys(features) as Array<FeatureName>

const rank = (revision: ProtocolVersion.ProtocolVersion): number => ProtocolVersion.all.indexOf(revision)

const within = (feature: Feature, revision: ProtocolVersion.ProtocolVersion): boolean => {
  const r = rank(revision)
  return r >= rank(feature.since) && (feature.until === undefined || r <= rank(feature.until))
}

const table: ReadonlyMap<ProtocolVersion.ProtocolVersion, ReadonlySet<FeatureName>> = new Map(
  ProtocolVersion.all.map((revision) => [revision, new Set(names.filter((name) => within(features[name], revision)))])
)

/** Whether `revision` has `feature`. */
export const has = (revision: ProtocolVersion.ProtocolVersion, feature: FeatureName): boolean =>
  table.get(revision)?.has(feature) ?? false

/** Every feature of `revision`. */
export const of = (revision: ProtocolVersion.ProtocolVersion): ReadonlySet<FeatureName> =>
  table.get(revision) ?? new Set()

/** The revisions that have `feature`, oldest first. */
export const revisionsWith = (feature: FeatureName): ReadonlyArray<ProtocolVersion.ProtocolVersion> =>
  ProtocolVersion.all.filter((revision) => within(features[feature], revision))
