/**
 * The values carried by the reserved `_meta` keys of 2026-07-28 (client info,
 * client capabilities, log level, server info) and what they are built from.
 *
 * They live here, below `Meta.ts`, because `Meta.ts` needs them while
 * `Lifecycle.ts`, `Content.ts` and `Logging.ts` (their public homes, which
 * re-export them) need `Meta.ts`. Revision tables are in those public modules.
 */
import * as Schema from "effect/Schema"
import { OpenObject, openStruct } from "./open.ts"

/** An icon of a tool, prompt, resource or implementation. */
export const Icon = Schema.Struct({
  src: Schema.String,
  mimeType: Schema.optionalKey(Schema.String),
  sizes: Schema.optionalKey(Schema.Array(Schema.String)),
  theme: Schema.optionalKey(Schema.Literals(["light", "dark"]))
}).annotate({ identifier: "Icon" })
/** Decoded `Icon`. */
export type Icon = typeof Icon.Type

/** A list of icons. */
export const Icons = Schema.Array(Icon).annotate({ identifier: "Icons" })
/** Decoded `Icons`. */
export type Icons = typeof Icons.Type

/** The name, version and optional details of a client or server. */
export const Implementation = Schema.Struct({
  name: Schema.String,
  version: Schema.String,
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  websiteUrl: Schema.optionalKey(Schema.String),
  icons: Schema.optionalKey(Icons)
}).annotate({ identifier: "Implementation" })
/** Decoded `Implementation`. */
export type Implementation = typeof Implementation.Type

/** `experimental` / `extensions`: capability name to its (open) settings object. */
export const CapabilityMap = Schema.Record(Schema.String, OpenObject).annotate({ identifier: "CapabilityMap" })
export type CapabilityMap = typeof CapabilityMap.Type

/** What a client declares it supports. */
export const ClientCapabilities = Schema.Struct({
  experimental: Schema.optionalKey(CapabilityMap),
  extensions: Schema.optionalKey(CapabilityMap),
  // Open: 2026-07-28 declares `roots` as an object without properties, so any key may appear.
  roots: Schema.optionalKey(openStruct({ listChanged: Schema.optionalKey(Schema.Boolean) })),
  sampling: Schema.optionalKey(
    openStruct({ context: Schema.optionalKey(OpenObject), tools: Schema.optionalKey(OpenObject) })
  ),
  elicitation: Schema.optionalKey(
    openStruct({ form: Schema.optionalKey(OpenObject), url: Schema.optionalKey(OpenObject) })
  ),
  tasks: Schema.optionalKey(
    Schema.Struct({
      list: Schema.optionalKey(OpenObject),
      cancel: Schema.optionalKey(OpenObject),
      requests: Schema.optionalKey(
        Schema.Struct({
          sampling: Schema.optionalKey(Schema.Struct({ createMessage: Schema.optionalKey(OpenObject) })),
          elicitation: Schema.optionalKey(Schema.Struct({ create: Schema.optionalKey(OpenObject) }))
        })
      )
    })
  )
}).annotate({ identifier: "ClientCapabilities" })
/** Decoded `ClientCapabilities`. */
export type ClientCapabilities = typeof ClientCapabilities.Type

/** RFC 5424 severities, least severe first. */
export const loggingLevels = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] as const

/** A log level (RFC 5424 severities). */
export const LoggingLevel = Schema.Literals(loggingLevels).annotate({ identifier: "LoggingLevel" })
/** Decoded `LoggingLevel`. */
export type LoggingLevel = typeof LoggingLevel.Type
