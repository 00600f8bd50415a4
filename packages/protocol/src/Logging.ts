/**
 * Server-to-client log messages (`notifications/message`) and the level that
 * filters them.
 *
 * | aspect                  | 2024-11-05 .. 2025-11-25                 | 2026-07-28                                     |
 * |-------------------------|------------------------------------------|------------------------------------------------|
 * | choosing a level        | `logging/setLevel` request (session-wide) | `_meta["io.modelcontextprotocol/logLevel"]` on |
 * |                         |                                          | each request (no setLevel method)              |
 * | when none was chosen    | the server may log at its discretion     | the server must not log for that request       |
 * | message params `_meta`  | from 2025-11-25                          | NotificationMetaObject                         |
 * | server capability       | `logging: {}`                            | `logging: {}`                                  |
 *
 * Levels follow RFC 5424 (syslog); {@link levels} orders them by severity.
 */
import * as Order from "effect/Order"
import * as Schema from "effect/Schema"
import type * as LogLevel from "effect/LogLevel"
import { LoggingLevel, loggingLevels } from "./internal/metaValues.ts"
import { NotificationMeta, RequestMeta } from "./Meta.ts"

export { LoggingLevel }

/** Every level, least severe first. */
export const levels: ReadonlyArray<LoggingLevel> = loggingLevels

const ranks: Readonly<Record<LoggingLevel, number>> = {
  debug: 0,
  info: 1,
  notice: 2,
  warning: 3,
  error: 4,
  critical: 5,
  alert: 6,
  emergency: 7
}

/** 0 for `debug` up to 7 for `emergency`. */
export const severity = (level: LoggingLevel): number => ranks[level]

/** Orders levels by severity (`debug` < ... < `emergency`). */
export const LoggingLevelOrder: Order.Order<LoggingLevel> = Order.mapInput(Order.Number, severity)

/** Whether a message at `level` passes a client's chosen `threshold` (at least as severe). */
export const isEnabled = (level: LoggingLevel, threshold: LoggingLevel): boolean => ranks[level] >= ranks[threshold]

/** The MCP level for an Effect log level, for servers that forward their Effect logs (`None`/`All` have none). */
export const fromLogLevel = (level: LogLevel.LogLevel): LoggingLevel | undefined => {
  switch (level) {
    case "Fatal":
      return "critical"
    case "Error":
      return "error"
    case "Warn":
      return "warning"
    case "Info":
      return "info"
    case "Debug":
    case "Trace":
      return "debug"
    default:
      return undefined
  }
}

/** Params of `logging/setLevel` (2024-11-05 .. 2025-11-25; result is `Result.EmptyResult`). */
export const SetLevelParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  level: LoggingLevel
}).annotate({ identifier: "SetLevelParams" })
export type SetLevelParams = typeof SetLevelParams.Type

/** Params of `notifications/message`. */
export const LoggingMessageParams = Schema.Struct({
  _meta: Schema.optionalKey(NotificationMeta),
  level: LoggingLevel,
  /** Name of the logger that produced the message. */
  logger: Schema.optionalKey(Schema.String),
  /** Any JSON value: a string, an object of details, ... */
  data: Schema.Unknown
}).annotate({ identifier: "LoggingMessageParams" })
export type LoggingMessageParams = typeof LoggingMessageParams.Type
