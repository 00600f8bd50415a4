/**
 * `--task-store`: the server's tasks kept in a database (SQLite file, or
 * PostgreSQL) instead of memory, so a task's record and result survive a
 * restart and a task whose process died reads `failed`. Loaded only when
 * given: a server keeping tasks in memory never loads SQL.
 */
import type * as TaskStore from "@effect-mcp/server/TaskStore"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"

/** The task store on the database `url` names, open for the current scope. */
export const open = (url: string): Effect.Effect<TaskStore.TaskStoreShape, Error, Scope.Scope> =>
  Effect.gen(function* () {
    const { SqlDatabase, SqlTaskStore } = yield* Effect.promise(() => import("@effect-mcp/sql"))
    const SqlClient = yield* Effect.promise(() => import("effect/sql/SqlClient"))
    const database = yield* Layer.build(SqlDatabase.layer(url))
    return yield* SqlTaskStore.make().pipe(
      Effect.provideService(SqlClient.SqlClient, Context.get(database, SqlClient.SqlClient))
    )
  }).pipe(Effect.mapError((error) => new Error(`--task-store: ${error.message}`)))
