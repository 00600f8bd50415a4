/**
 * What lets several everything-server processes serve one client: the SQL
 * event store (`--event-store`, loaded only when given: a server in memory
 * never loads SQL) and the request-state keys (`--request-state-key`, else
 * `MCP_REQUEST_STATE_KEYS`). Keys are secrets: held Redacted, never printed.
 */
import type * as EventStore from "@effect-mcp/http/EventStore"
import * as RequestStateKeys from "@effect-mcp/server/RequestStateKeys"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type * as Cli from "../Cli.ts"

/** A setting that cannot be used; main prints it with the usage. */
export class SettingError extends Error {
  override readonly name = "SettingError"
}

/** The event store on the database `url` names, open for the current scope. */
export const eventStore = (url: string): Effect.Effect<EventStore.EventStoreShape, SettingError, Scope.Scope> =>
  Effect.gen(function* () {
    const { SqlDatabase, SqlEventStore } = yield* Effect.promise(() => import("@effect-mcp/sql"))
    return yield* SqlDatabase.use(url, SqlEventStore.make())
  }).pipe(Effect.mapError((error) => new SettingError(`--event-store: ${error.message}`)))

/** The request-state keys of the command line, else of `MCP_REQUEST_STATE_KEYS`; undefined when neither gives any. */
export const requestStateKeys = (
  cli: Cli.Http | Cli.Stdio
): Effect.Effect<ReadonlyArray<Redacted.Redacted<string>> | undefined, SettingError> =>
  Effect.gen(function* () {
    const variable = RequestStateKeys.defaultVariable
    const keys =
      cli.requestStateKeys !== undefined
        ? cli.requestStateKeys.map((key) => Redacted.make(key))
        : Option.match(
            yield* Effect.mapError(
              Config.option(Config.Redacted(variable)),
              (error) => new SettingError(`${variable}: ${error.message}`)
            ),
            { onNone: () => undefined, onSome: (text) => RequestStateKeys.parse(Redacted.value(text)) }
          )
    if (keys === undefined) return undefined
    const checked = RequestStateKeys.toBytes(keys)
    if (checked instanceof RequestStateKeys.RequestStateKeyError)
      return yield* Effect.fail(new SettingError(checked.message))
    return keys
  })
