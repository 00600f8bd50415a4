/**
 * Spec shape -> domain schema: every place where a revision's definition (or a
 * property of one, e.g. the inline `params` of a pre-2025-11-25 request) has a
 * domain counterpart. A case is checked on each revision where the path exists.
 */
import * as CacheHints from "@effect-mcp/protocol/CacheHints"
import * as Cancellation from "@effect-mcp/protocol/Cancellation"
import * as Completion from "@effect-mcp/protocol/Completion"
import * as Content from "@effect-mcp/protocol/Content"
import * as Elicitation from "@effect-mcp/protocol/Elicitation"
import * as InputRequired from "@effect-mcp/protocol/InputRequired"
import * as Lifecycle from "@effect-mcp/protocol/Lifecycle"
import * as Logging from "@effect-mcp/protocol/Logging"
import * as Meta from "@effect-mcp/protocol/Meta"
import * as Pagination from "@effect-mcp/protocol/Pagination"
import * as Progress from "@effect-mcp/protocol/Progress"
import * as Prompts from "@effect-mcp/protocol/Prompts"
import * as Resources from "@effect-mcp/protocol/Resources"
import * as McpResult from "@effect-mcp/protocol/McpResult"
import * as Roots from "@effect-mcp/protocol/Roots"
import * as Sampling from "@effect-mcp/protocol/Sampling"
import * as Tasks from "@effect-mcp/protocol/Tasks"
import * as Tools from "@effect-mcp/protocol/Tools"
import type * as Schema from "effect/Schema"

export interface Case {
  /** `[definition, property, ...]` in schema.json. */
  readonly spec: ReadonlyArray<string>
  readonly domain: Schema.Decoder<unknown>
}

const c = (spec: ReadonlyArray<string>, domain: Schema.Decoder<unknown>): Case => ({ spec, domain })

export const cases: ReadonlyArray<Case> = [
  // Meta, results, pagination
  c(["MetaObject"], Meta.Meta),
  c(["RequestMetaObject"], Meta.RequestMeta),
  c(["NotificationMetaObject"], Meta.NotificationMeta),
  c(["ResultMetaObject"], Meta.ResultMeta),
  c(["Request", "params", "_meta"], Meta.RequestMeta),
  c(["Request", "params"], Meta.RequestParams),
  c(["RequestParams"], Meta.RequestParams),
  c(["Notification", "params"], Meta.NotificationParams),
  c(["NotificationParams"], Meta.NotificationParams),
  c(["Result", "_meta"], Meta.ResultMeta),
  c(["ProgressToken"], Meta.ProgressToken),
  c(["Result"], McpResult.Result),
  c(["EmptyResult"], McpResult.EmptyResult),
  c(["CacheableResult", "cacheScope"], CacheHints.CacheScope),
  c(["CacheableResult", "ttlMs"], CacheHints.TtlMs),
  c(["Cursor"], Pagination.Cursor),
  c(["PaginatedRequest", "params"], Pagination.PaginatedParams),
  c(["PaginatedRequestParams"], Pagination.PaginatedParams),
  c(["PaginatedResult"], Pagination.PaginatedResult),
  // Content
  c(["Role"], Content.Role),
  c(["Annotated", "annotations"], Content.Annotations),
  c(["Annotations"], Content.Annotations),
  c(["Icon"], Content.Icon),
  c(["Icons", "icons"], Content.Icons),
  c(["TextContent"], Content.TextContent),
  c(["ImageContent"], Content.ImageContent),
  c(["AudioContent"], Content.AudioContent),
  c(["ResourceLink"], Content.ResourceLink),
  c(["TextResourceContents"], Content.TextResourceContents),
  c(["BlobResourceContents"], Content.BlobResourceContents),
  c(["EmbeddedResource"], Content.EmbeddedResource),
  c(["EmbeddedResource", "resource"], Content.ResourceContents),
  c(["ContentBlock"], Content.ContentBlock),
  c(["ToolUseContent"], Content.ToolUseContent),
  c(["ToolResultContent"], Content.ToolResultContent),
  c(["SamplingMessageContentBlock"], Content.SamplingContent),
  // Lifecycle
  c(["Implementation"], Lifecycle.Implementation),
  c(["ClientCapabilities"], Lifecycle.ClientCapabilities),
  c(["ServerCapabilities"], Lifecycle.ServerCapabilities),
  c(["InitializeRequest", "params"], Lifecycle.InitializeParams),
  c(["InitializeResult"], Lifecycle.InitializeResult),
  c(["InitializedNotification", "params"], Lifecycle.InitializedParams),
  c(["PingRequest", "params"], Lifecycle.PingParams),
  c(["DiscoverRequest", "params"], Lifecycle.DiscoverParams),
  c(["DiscoverResult"], Lifecycle.DiscoverResult),
  // Tools
  c(["Tool"], Tools.Tool),
  c(["Tool", "inputSchema"], Tools.ToolInputSchema),
  c(["Tool", "outputSchema"], Tools.ToolOutputSchema),
  c(["ToolAnnotations"], Tools.ToolAnnotations),
  c(["ToolExecution"], Tools.ToolExecution),
  c(["ListToolsRequest", "params"], Tools.ListToolsParams),
  c(["ListToolsResult"], Tools.ListToolsResult),
  c(["CallToolRequest", "params"], Tools.CallToolParams),
  c(["CallToolResult"], Tools.CallToolResult),
  c(["ToolListChangedNotification", "params"], Tools.ToolListChangedParams),
  // Resources
  c(["Resource"], Resources.Resource),
  c(["ResourceTemplate"], Resources.ResourceTemplate),
  c(["ListResourcesRequest", "params"], Resources.ListResourcesParams),
  c(["ListResourcesResult"], Resources.ListResourcesResult),
  c(["ListResourceTemplatesRequest", "params"], Resources.ListResourceTemplatesParams),
  c(["ListResourceTemplatesResult"], Resources.ListResourceTemplatesResult),
  c(["ReadResourceRequest", "params"], Resources.ReadResourceParams),
  c(["ReadResourceResult"], Resources.ReadResourceResult),
  c(["ResourceRequestParams"], Resources.ResourceParams),
  c(["SubscribeRequest", "params"], Resources.SubscribeParams),
  c(["UnsubscribeRequest", "params"], Resources.UnsubscribeParams),
  c(["ResourceUpdatedNotification", "params"], Resources.ResourceUpdatedParams),
  c(["ResourceListChangedNotification", "params"], Resources.ResourceListChangedParams),
  c(["SubscriptionFilter"], Resources.SubscriptionFilter),
  c(["SubscriptionsListenRequest", "params"], Resources.SubscriptionsListenParams),
  c(["SubscriptionsListenResultMetaObject"], Resources.SubscriptionsListenResultMeta),
  c(["SubscriptionsListenResult"], Resources.SubscriptionsListenResult),
  c(["SubscriptionsAcknowledgedNotification", "params"], Resources.SubscriptionsAcknowledgedParams),
  // Prompts
  c(["PromptArgument"], Prompts.PromptArgument),
  c(["Prompt"], Prompts.Prompt),
  c(["PromptMessage"], Prompts.PromptMessage),
  c(["ListPromptsRequest", "params"], Prompts.ListPromptsParams),
  c(["ListPromptsResult"], Prompts.ListPromptsResult),
  c(["GetPromptRequest", "params"], Prompts.GetPromptParams),
  c(["GetPromptResult"], Prompts.GetPromptResult),
  c(["PromptListChangedNotification", "params"], Prompts.PromptListChangedParams),
  // Completion
  c(["PromptReference"], Completion.PromptReference),
  c(["ResourceReference"], Completion.ResourceReference),
  c(["ResourceTemplateReference"], Completion.ResourceTemplateReference),
  c(["CompleteRequest", "params"], Completion.CompleteParams),
  c(["CompleteRequest", "params", "ref"], Completion.CompletionReference),
  c(["CompleteResult"], Completion.CompleteResult),
  c(["CompleteResult", "completion"], Completion.Completion),
  // Logging
  c(["LoggingLevel"], Logging.LoggingLevel),
  c(["SetLevelRequest", "params"], Logging.SetLevelParams),
  c(["LoggingMessageNotification", "params"], Logging.LoggingMessageParams),
  // Roots
  c(["Root"], Roots.Root),
  c(["ListRootsRequest", "params"], Roots.ListRootsParams),
  c(["ListRootsResult"], Roots.ListRootsResult),
  c(["RootsListChangedNotification", "params"], Roots.RootsListChangedParams),
  // Sampling
  c(["ModelHint"], Sampling.ModelHint),
  c(["ModelPreferences"], Sampling.ModelPreferences),
  c(["ToolChoice"], Sampling.ToolChoice),
  c(["SamplingMessage"], Sampling.SamplingMessage),
  c(["SamplingMessage", "content"], Sampling.SamplingMessageContent),
  c(["CreateMessageRequest", "params"], Sampling.CreateMessageParams),
  c(["CreateMessageRequest", "params", "includeContext"], Sampling.IncludeContext),
  c(["CreateMessageResult"], Sampling.CreateMessageResult),
  // Elicitation
  c(["StringSchema"], Elicitation.StringSchema),
  c(["NumberSchema"], Elicitation.NumberSchema),
  c(["BooleanSchema"], Elicitation.BooleanSchema),
  c(["EnumSchema"], Elicitation.EnumSchema),
  c(["UntitledSingleSelectEnumSchema"], Elicitation.UntitledSingleSelectEnumSchema),
  c(["TitledSingleSelectEnumSchema"], Elicitation.TitledSingleSelectEnumSchema),
  c(["UntitledMultiSelectEnumSchema"], Elicitation.UntitledMultiSelectEnumSchema),
  c(["TitledMultiSelectEnumSchema"], Elicitation.TitledMultiSelectEnumSchema),
  c(["LegacyTitledEnumSchema"], Elicitation.LegacyTitledEnumSchema),
  c(["PrimitiveSchemaDefinition"], Elicitation.PrimitiveSchemaDefinition),
  c(["ElicitRequest", "params"], Elicitation.ElicitParams),
  c(["ElicitRequest", "params", "requestedSchema"], Elicitation.RequestedSchema),
  c(["ElicitRequestFormParams"], Elicitation.ElicitFormParams),
  c(["ElicitRequestURLParams"], Elicitation.ElicitUrlParams),
  c(["ElicitResult"], Elicitation.ElicitResult),
  c(["ElicitResult", "action"], Elicitation.ElicitAction),
  c(["ElicitationCompleteNotification", "params"], Elicitation.ElicitationCompleteParams),
  // Progress, cancellation
  c(["ProgressNotification", "params"], Progress.ProgressParams),
  c(["CancelledNotification", "params"], Cancellation.CancelledParams),
  // Multi-round-trip
  c(["InputRequest"], InputRequired.InputRequest),
  c(["InputRequests"], InputRequired.InputRequests),
  c(["InputResponse"], InputRequired.InputResponse),
  c(["InputResponses"], InputRequired.InputResponses),
  c(["InputRequiredResult"], InputRequired.InputRequiredResult),
  c(["InputResponseRequestParams"], InputRequired.InputResponseParams),
  // Tasks
  c(["TaskStatus"], Tasks.TaskStatus),
  c(["TaskMetadata"], Tasks.TaskMetadata),
  c(["RelatedTaskMetadata"], Tasks.RelatedTaskMetadata),
  c(["Task"], Tasks.Task),
  c(["CreateTaskResult"], Tasks.CreateTaskResult),
  c(["GetTaskRequest", "params"], Tasks.GetTaskParams),
  c(["GetTaskResult"], Tasks.GetTaskResult),
  c(["GetTaskPayloadRequest", "params"], Tasks.GetTaskPayloadParams),
  c(["GetTaskPayloadResult"], Tasks.GetTaskPayloadResult),
  c(["ListTasksRequest", "params"], Tasks.ListTasksParams),
  c(["ListTasksResult"], Tasks.ListTasksResult),
  c(["CancelTaskRequest", "params"], Tasks.CancelTaskParams),
  c(["CancelTaskResult"], Tasks.CancelTaskResult),
  c(["TaskStatusNotification", "params"], Tasks.TaskStatusParams)
]

/** Domain schema by spec definition name, for fixtures named after a definition (the examples). */
export const byDefinition: ReadonlyMap<string, Schema.Decoder<unknown>> = new Map(
  cases.filter((x) => x.spec.length === 1).map((x) => [x.spec[0] as string, x.domain])
)
