/**
 * SqlTaskStore on a real PostgreSQL (Debian packages, started on 127.0.0.1
 * by test/support/postgres.ts): the TaskStore contract the in-memory and
 * SQLite stores pass, and two stores on one database reading each other's
 * tasks as two server processes would. Skipped, with the reason in its name,
 * only where PostgreSQL cannot be started.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as SqlDatabase from "@effect-mcp/sql/SqlDatabase"
import * as SqlTaskStore from "@effect-mcp/sql/SqlTaskStore"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as SqlClient from "effect/sql/SqlClient"
import { record, taskStoreContract } from "../../packages/sql/test/taskStoreContract.ts"
import * as Postgres from "../support/postgres.ts"

const title = Postgres.unavailable === undefined ? "PostgreSQL" : `PostgreSQL (skipped: ${Postgres.unavailable})`

describe.skipIf(Postgres.unavailable !== undefined)(title, () => {
  const scope = Effect.runSync(Scope.make())
  let server: Postgres.Postgres | undefined
  beforeAll(async () => {
    server = await Effect.runPromise(Scope.provide(Postgres.start, scope))
  }, 120_000)
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

  const database = () => SqlDatabase.layer(server!.url)
  let tables = 0

  describe("TaskStore contract", () => {
    taskStoreContract(
      Effect.suspend(() => SqlTaskStore.make({ table: `task_contract_${tables++}` })),
      (effect) => Effect.provide(effect, database())
    )
  })

  it.live("two stores on one database (two processes) read each other's tasks and heartbeats", () =>
    Effect.gen(function* () {
      const client = Effect.suspend(() =>
        Effect.map(Layer.build(database()), (context) => Context.get(context, SqlClient.SqlClient))
      )
      const [a, b] = yield* Effect.all(
        [0, 1].map(() =>
          Effect.flatMap(client, (sql) =>
            Effect.provideService(SqlTaskStore.make({ table: "shared_tasks" }), SqlClient.SqlClient, sql)
          )
        ),
        { concurrency: "unbounded" }
      )
      yield* a!.create({ ...record("t", "p:alice", 1), worker: "a" })
      yield* a!.heartbeat("a", 5)
      yield* b!.update("t", { status: "completed", lastUpdatedAt: 2, result: { content: [] } })
      assert.strictEqual((yield* a!.get("t"))?.status, "completed")
      assert.strictEqual(yield* b!.lastHeartbeat("a"), 5)
    }).pipe(Effect.scoped)
  )
})
