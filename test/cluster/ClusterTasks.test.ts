/**
 * Tasks in a cluster (issue 17, beyond its acceptance): three
 * everything-server runners on one database, their tasks in it.
 *
 * 2025-11-25: a session lives on runner 0 with its GET stream held through
 * runner 2; its task-augmented calls come through runner 1. `tasks/get`,
 * `tasks/result`, `tasks/list` and `tasks/cancel` answer from any runner,
 * `notifications/tasks/status` reaches the GET stream (followed with
 * `Last-Event-ID` when the server ends it, as a client does). Then runner 0 is
 * killed with SIGKILL while a task runs there: once the session has moved,
 * its new owner reads that task `failed` (its worker stopped heartbeating),
 * still serves the finished ones, and `tasks/list` shows the session every
 * task it made.
 *
 * 2026-07-28 (three runners in this process, ./inProcess.ts: none is lost,
 * so none needs a process of its own): a task made on runner 0 is read on runner 1, and the
 * `subscriptions/listen` stream served by runner 2 hears its
 * `notifications/tasks`; a task cancelled through runner 1 reads
 * `cancelled` everywhere, heard there too (its work on runner 0 interrupted:
 * packages/cluster/test/ChangeFeed.test.ts checks that on the TestClock).
 *
 * On SQLite, and on PostgreSQL (test/support/postgres.ts) where it can be started.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Postgres from "../support/postgres.ts"
import { answer, type Json, open, session, until } from "./sse.ts"
import { startInProcess } from "./inProcess.ts"
import { fastFailover, kill, startRunners } from "./support.ts"

const tempDatabase = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "mcp-cluster-tasks-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => `sqlite:${join(dir, "cluster.db")}`))

// A lost worker is noticed after three missed heartbeats: 1.5 s.
const flags = ["--task-heartbeat", "500"]

const STATUS = "notifications/tasks/status"
const PROMPTS = "notifications/prompts/list_changed"

/** The `notifications/tasks/status` of `taskId` seen on `stream`, in order. */
const statuses = (stream: { readonly messages: () => ReadonlyArray<Json> }, taskId: string): Array<string> =>
  stream
    .messages()
    .filter((message) => message.method === STATUS && message.params.taskId === taskId)
    .map((message) => message.params.status as string)

let requestIds = 100

/** The `Mcp-Name` header 2026-07-28 asks of a tool call (its name) and of the Tasks extension's requests (the task id). */
const nameHeader = (method: string, params: Json): Record<string, string> =>
  method === "tools/call"
    ? { "mcp-name": params.name }
    : method.startsWith("tasks/")
      ? { "mcp-name": params.taskId }
      : {}

/** A 2026-07-28 request declaring the Tasks extension (its reply read until the scope closes). */
const extensionRequest = (url: string, method: string, params: object) => {
  const id = requestIds++
  return Effect.map(
    open(url, {
      method: "POST",
      headers: {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        ...nameHeader(method, params as Json)
      },
      body: {
        jsonrpc: "2.0",
        id,
        method,
        params: {
          ...params,
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
            "io.modelcontextprotocol/clientInfo": { name: "cluster-tasks", version: "1" }
          }
        }
      }
    }),
    (opened) => ({ opened, id })
  )
}

/** The answer of a 2026-07-28 request. */
const call = (url: string, method: string, params: object) =>
  Effect.flatMap(extensionRequest(url, method, params), ({ opened, id }) => answer(opened, id))

const scenarios = (storage: () => Effect.Effect<string, unknown, Scope.Scope>) => {
  it.live(
    "2025-11-25: a session's tasks answer from every runner, and outlive the runner that ran them",
    () =>
      Effect.gen(function* () {
        const database = yield* storage()
        const runners = yield* startRunners(3, database, flags, { timings: fastFailover })
        const [r0, r1, r2] = runners.map((runner) => runner.url) as [string, string, string]
        // On a timeout: what the stream got, and the end of each runner's stderr and logs (stdout).
        const lastWords = () => ({
          stream: stream.messages().map((message) => message.method ?? message.id),
          stderr: runners.map((runner) => runner.stderr().slice(-1500)),
          logs: runners.map((runner) => runner.stdoutTail().slice(-1500))
        })
        const s = yield* session(r0)
        // Followed as a client follows it: under load a runner's lock storage can stop answering for seconds,
        // its sessions are let go and their GET streams end; the client opens it again with Last-Event-ID.
        const stream = yield* s.follow(r2)
        assert.strictEqual(stream.status, 200)

        const made = yield* s.request(r1, "tools/call", {
          name: "slow_compute",
          arguments: { seconds: 1, label: "first" },
          task: { ttl: 600_000 }
        })
        const first = made.result.task.taskId as string
        assert.strictEqual(made.result.task.status, "working")
        const got = yield* s.request(r2, "tasks/get", { taskId: first })
        assert.strictEqual(got.result.taskId, first)
        const result = yield* s.request(r1, "tasks/result", { taskId: first })
        // An error answer fails here with what it said and the end of each runner's stderr.
        assert.isDefined(
          result.result,
          `tasks/result answered ${JSON.stringify(result)}; ${JSON.stringify(lastWords())}`
        )
        assert.strictEqual(result.result.content[0].text, "computed first after 1 s")
        // The owner (runner 0) tells the session, on the stream runner 2 relays.
        yield* until(
          () => statuses(stream, first).includes("completed"),
          "the completed status on the GET stream",
          20_000,
          lastWords
        )

        const long = yield* s.request(r1, "tools/call", {
          name: "slow_compute",
          arguments: { seconds: 600 },
          task: { ttl: 600_000 }
        })
        assert.isDefined(long.result, `tools/call answered ${JSON.stringify(long)}; ${JSON.stringify(lastWords())}`)
        const cancelled = long.result.task.taskId as string
        const cancel = yield* s.request(r2, "tasks/cancel", { taskId: cancelled })
        assert.strictEqual(cancel.result.status, "cancelled")
        yield* until(
          () => statuses(stream, cancelled).includes("cancelled"),
          "the cancelled status on the GET stream",
          20_000,
          lastWords
        )

        const running = (yield* s.request(r1, "tools/call", {
          name: "slow_compute",
          arguments: { seconds: 600 },
          task: { ttl: 600_000 }
        })).result.task.taskId as string
        assert.strictEqual((yield* s.request(r2, "tasks/get", { taskId: running })).result.status, "working")

        yield* kill(runners[0]!)
        // Once runner 0's shards have moved, its session (and its tasks) are served elsewhere, and the task
        // reads `failed` once its heartbeats are missed. Nothing outside tells when that happened, so the
        // request is asked again until it does; the 60 s bound only fires on breakage.
        const lost = yield* s.request(r1, "tasks/get", { taskId: running }).pipe(
          Effect.repeat({
            until: (reply) => reply.result?.status === "failed",
            schedule: Schedule.spaced("100 millis")
          }),
          Effect.timeout("60 seconds")
        )
        assert.match(lost.result.statusMessage, /stopped|lost|died/)
        const gone = yield* s.request(r2, "tasks/result", { taskId: running })
        assert.isDefined(gone.error, "the lost task's result is its error")
        assert.strictEqual((yield* s.request(r2, "tasks/get", { taskId: first })).result.status, "completed")
        const again = yield* s.request(r2, "tasks/result", { taskId: first })
        assert.strictEqual(again.result.content[0].text, "computed first after 1 s")
        const late = yield* s.request(r1, "tasks/cancel", { taskId: running })
        assert.strictEqual(late.error.code, -32602, "a terminal task cannot be cancelled")

        const listed = yield* s.request(r2, "tasks/list", {})
        const byId = new Map<string, string>(
          (listed.result.tasks as Array<Json>).map((task) => [task.taskId as string, task.status as string])
        )
        assert.deepStrictEqual(Object.fromEntries(byId), {
          [first]: "completed",
          [cancelled]: "cancelled",
          [running]: "failed"
        })
        // Another session sees none of them.
        const other = yield* session(r1)
        assert.deepStrictEqual((yield* other.request(r2, "tasks/list", {})).result.tasks, [])
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "2026-07-28: a task made on one runner is read, heard and cancelled on the others",
    () =>
      Effect.gen(function* () {
        const database = yield* storage()
        // No runner is lost here: the runners run in this process (./inProcess.ts).
        const runners = yield* startInProcess(3, database, { taskHeartbeatMs: 500 })
        const [r0, r1, r2] = runners.map((runner) => runner.url) as [string, string, string]

        const made = yield* call(r0, "tools/call", { name: "slow_compute", arguments: { seconds: 5, label: "x" } })
        assert.strictEqual(made.result.resultType, "task")
        const taskId = made.result.taskId as string
        // Prompt list changes too: the barrier of the end.
        const { opened: listen } = yield* extensionRequest(r2, "subscriptions/listen", {
          notifications: { taskIds: [taskId], promptsListChanged: true }
        })
        yield* until(() => listen.count("notifications/subscriptions/acknowledged") === 1, "the listen acknowledged")
        const working = yield* call(r1, "tasks/get", { taskId })
        assert.strictEqual(working.result.status, "working", "read on runner 1 before it ends (and after the listen)")
        // Made terminal on runner 0; heard on runner 2's listen stream.
        yield* until(
          () =>
            listen
              .messages()
              .some((message) => message.method === "notifications/tasks" && message.params.status === "completed"),
          "notifications/tasks on runner 2"
        )
        const heard = listen.messages().find((message) => message.method === "notifications/tasks")
        assert.strictEqual(heard.params.taskId, taskId)
        const done = yield* call(r1, "tasks/get", { taskId })
        assert.strictEqual(done.result.status, "completed")
        assert.strictEqual(done.result.result.content[0].text, "computed x after 5 s")

        const long = yield* call(r0, "tools/call", { name: "slow_compute", arguments: { seconds: 600 } })
        const stopped = long.result.taskId as string
        const { opened: watch } = yield* extensionRequest(r2, "subscriptions/listen", {
          notifications: { taskIds: [stopped], promptsListChanged: true }
        })
        yield* until(() => watch.count("notifications/subscriptions/acknowledged") === 1, "the second listen")
        // The acknowledgement: empty but for its resultType and the server info every 2026-07-28 result carries.
        const { _meta, ...acknowledged } = (yield* call(r1, "tasks/cancel", { taskId: stopped })).result
        assert.deepStrictEqual(acknowledged, { resultType: "complete" })
        assert.isDefined(_meta["io.modelcontextprotocol/serverInfo"])
        assert.strictEqual((yield* call(r2, "tasks/get", { taskId: stopped })).result.status, "cancelled")
        yield* until(
          () =>
            watch
              .messages()
              .some((message) => message.method === "notifications/tasks" && message.params.status === "cancelled"),
          "the cancel heard on runner 2"
        )
        assert.strictEqual((yield* call(r0, "tasks/get", { taskId: stopped })).result.status, "cancelled")
        // Nothing arrives twice. The barrier: a prompt list change made on runner 0 after the tasks ended
        // reaches both streams; runner 2 reads the changes again for seconds (ChangeFeed), each read in
        // order, so a task's status delivered twice would be on its stream before it.
        yield* call(r0, "tools/call", { name: "test_trigger_prompt_change", arguments: {} })
        yield* until(
          () => listen.count(PROMPTS) === 1 && watch.count(PROMPTS) === 1,
          "the prompt list change on both listen streams"
        )
        assert.strictEqual(listen.count("notifications/tasks"), 1)
        assert.strictEqual(watch.count("notifications/tasks"), 1)
      }).pipe(Effect.scoped),
    120_000
  )
}

describe("cluster: tasks (SQLite)", () => {
  scenarios(() => tempDatabase)
})

let databases = 0
Postgres.describePostgres("cluster: tasks (PostgreSQL)", (server) => {
  scenarios(() => Effect.suspend(() => server().createDatabase(`tasks_${databases++}`)))
})
