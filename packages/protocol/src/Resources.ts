/**
 * Resources: data a server exposes by URI (`resources/list`,
 * `resources/templates/list`, `resources/read`), change notifications, and
 * the two ways to follow changes: `resources/subscribe` (stateful revisions)
 * and the 2026-07-28 `subscriptions/listen` stream.
 *
 * | field / method                        | 2024-11-05 | 2025-03-26 | 2025-06-18 | 2025-11-25 | 2026-07-28 |
 * |---------------------------------------|------------|------------|------------|------------|------------|
 * | Resource/Template `annotations`       | inline     | yes        | yes        | yes        | yes        |
 * | Resource/Template `title`, `_meta`    | -          | -          | yes        | yes        | yes        |
 * | Resource/Template `icons`             | -          | -          | -          | yes        | yes        |
 * | resource contents `_meta`             | -          | -          | yes        | yes        | yes        |
 * | read params `inputResponses`,         | -          | -          | -          | -          | yes        |
 * |   `requestState` (retry)              |            |            |            |            |            |
 * | list/read result `ttlMs`, `cacheScope` | -         | -          | -          | -          | required   |
 * | `resources/subscribe`, `unsubscribe`  | yes        | yes        | yes        | yes        | -          |
 * | `notifications/resources/updated`     | yes        | yes        | yes        | yes        | yes (via   |
 * |                                       |            |            |            |            | listen)    |
 * | `subscriptions/listen`,               | -          | -          | -          | -          | yes        |
 * |   `notifications/subscriptions/acknowledged` |     |            |            |            |            |
 *
 * In 2026-07-28 the client opens one `subscriptions/listen` request naming
 * what it wants ({@link SubscriptionFilter}: list changes of tools, prompts,
 * resources, and updates of given resource URIs); the server acknowledges with
 * `notifications/subscriptions/acknowledged`, then streams the notifications,
 * each tagged with `_meta["io.modelcontextprotocol/subscriptionId"]` (the
 * listen request's id). The listen result arrives only when the stream ends.
 */
import * as Schema from "effect/Schema"
import { CacheHints } from "./CacheHints.ts"
import { Annotations, ResourceContents, resourceFields } from "./Content.ts"
import { InputResponseParams } from "./InputRequired.ts"
import { Icons, Implementation } from "./internal/metaValues.ts"
import { RequestId } from "./JsonRpc.ts"
import { openStruct } from "./internal/open.ts"
import { resultStruct } from "./internal/result.ts"
import { Meta, NotificationMeta, NotificationParams, RequestMeta, serverInfoKey, subscriptionIdKey } from "./Meta.ts"
import { PaginatedParams, paginatedResultFields } from "./Pagination.ts"

/** A resource as `resources/list` describes it. */
export const Resource = Schema.Struct(resourceFields).annotate({ identifier: "Resource" })
/** Decoded `Resource`. */
export type Resource = typeof Resource.Type

/** A family of resources addressed by an RFC 6570 URI template. */
export const ResourceTemplate = Schema.Struct({
  uriTemplate: Schema.String,
  name: Schema.String,
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  /** The type of every resource matching the template, if they share one. */
  mimeType: Schema.optionalKey(Schema.String),
  icons: Schema.optionalKey(Icons),
  annotations: Schema.optionalKey(Annotations),
  _meta: Schema.optionalKey(Meta)
}).annotate({ identifier: "ResourceTemplate" })
export type ResourceTemplate = typeof ResourceTemplate.Type

/** Params of `resources/list`. */
export const ListResourcesParams = PaginatedParams
/** Decoded `ListResourcesParams`. */
export type ListResourcesParams = PaginatedParams

/** The result of `resources/list`. */
export const ListResourcesResult = resultStruct({
  resources: Schema.Array(Resource),
  ...paginatedResultFields,
  ...CacheHints.fields
}).annotate({ identifier: "ListResourcesResult" })
/** Decoded `ListResourcesResult`. */
export type ListResourcesResult = typeof ListResourcesResult.Type

/** Params of `resources/templates/list`. */
export const ListResourceTemplatesParams = PaginatedParams
/** Decoded `ListResourceTemplatesParams`. */
export type ListResourceTemplatesParams = PaginatedParams

/** The result of `resources/templates/list`. */
export const ListResourceTemplatesResult = resultStruct({
  resourceTemplates: Schema.Array(ResourceTemplate),
  ...paginatedResultFields,
  ...CacheHints.fields
}).annotate({ identifier: "ListResourceTemplatesResult" })
/** Decoded `ListResourceTemplatesResult`. */
export type ListResourceTemplatesResult = typeof ListResourceTemplatesResult.Type

/** Params of `resources/read`. */
export const ReadResourceParams = Schema.Struct({
  ...InputResponseParams.fields,
  uri: Schema.String
}).annotate({ identifier: "ReadResourceParams" })
/** Decoded `ReadResourceParams`. */
export type ReadResourceParams = typeof ReadResourceParams.Type

/** The result of `resources/read`. */
export const ReadResourceResult = resultStruct({
  contents: Schema.Array(ResourceContents),
  ...CacheHints.fields
}).annotate({ identifier: "ReadResourceResult" })
/** Decoded `ReadResourceResult`. */
export type ReadResourceResult = typeof ReadResourceResult.Type

/** Params naming one resource (the spec's `ResourceRequestParams`). */
export const ResourceParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  uri: Schema.String
}).annotate({ identifier: "ResourceParams" })
export type ResourceParams = typeof ResourceParams.Type

/** Params of `resources/subscribe` (2024-11-05 .. 2025-11-25; result is `Result.EmptyResult`). */
export const SubscribeParams = ResourceParams
export type SubscribeParams = ResourceParams

/** Params of `resources/unsubscribe` (2024-11-05 .. 2025-11-25; result is `Result.EmptyResult`). */
export const UnsubscribeParams = ResourceParams
export type UnsubscribeParams = ResourceParams

/** Params of `notifications/resources/updated`. */
export const ResourceUpdatedParams = Schema.Struct({
  _meta: Schema.optionalKey(NotificationMeta),
  /** May be a sub-resource of the subscribed URI. */
  uri: Schema.String
}).annotate({ identifier: "ResourceUpdatedParams" })
export type ResourceUpdatedParams = typeof ResourceUpdatedParams.Type

/** Params of `notifications/resources/list_changed`. */
export const ResourceListChangedParams = NotificationParams
export type ResourceListChangedParams = NotificationParams

/** What a `subscriptions/listen` stream should carry (2026-07-28). */
export const SubscriptionFilter = Schema.Struct({
  toolsListChanged: Schema.optionalKey(Schema.Boolean),
  promptsListChanged: Schema.optionalKey(Schema.Boolean),
  resourcesListChanged: Schema.optionalKey(Schema.Boolean),
  /** URIs whose `notifications/resources/updated` the client wants. */
  resourceSubscriptions: Schema.optionalKey(Schema.Array(Schema.String))
}).annotate({ identifier: "SubscriptionFilter" })
export type SubscriptionFilter = typeof SubscriptionFilter.Type

/** Params of `subscriptions/listen` (2026-07-28): which notifications to stream. */
export const SubscriptionsListenParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  notifications: SubscriptionFilter
}).annotate({ identifier: "SubscriptionsListenParams" })
/** Decoded `SubscriptionsListenParams`. */
export type SubscriptionsListenParams = typeof SubscriptionsListenParams.Type

/** `_meta` of the listen result: the subscription id is required there. */
export const SubscriptionsListenResultMeta = openStruct({
  [serverInfoKey]: Schema.optionalKey(Implementation),
  [subscriptionIdKey]: RequestId
}).annotate({ identifier: "SubscriptionsListenResultMeta" })
export type SubscriptionsListenResultMeta = typeof SubscriptionsListenResultMeta.Type

/** The result ending a `subscriptions/listen` stream. */
export const SubscriptionsListenResult = resultStruct({ _meta: SubscriptionsListenResultMeta }).annotate({
  identifier: "SubscriptionsListenResult"
})
/** Decoded `SubscriptionsListenResult`. */
export type SubscriptionsListenResult = typeof SubscriptionsListenResult.Type

/** Params of `notifications/subscriptions/acknowledged`: the filter the server will honour. */
export const SubscriptionsAcknowledgedParams = Schema.Struct({
  _meta: Schema.optionalKey(NotificationMeta),
  notifications: SubscriptionFilter
}).annotate({ identifier: "SubscriptionsAcknowledgedParams" })
export type SubscriptionsAcknowledgedParams = typeof SubscriptionsAcknowledgedParams.Type
