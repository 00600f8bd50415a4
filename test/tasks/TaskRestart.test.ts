/**
 * Tasks on the durable store across a process restart (issue 16, acceptance
 * 2): an everything-server process on a SQLite task store runs a task to
 * completion and starts another; it is killed (SIGKILL) and a new process
 * starts on the same file. The finished task's result is still served
 * (`tasks/result` on 2025-11-25, `tasks/get` inlining it on the 2026-07-28
 * extension), and the task whose worker died reads `failed`, not `working`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as ServerProcess from "../support/ServerProcess.ts"
import { session, stateless } from "./rpc.ts"

describe("tasks survive a restart on the SQLite task store", () => {
  it.live(
    "the finished task's result is served by the next process; the task whose worker died reads failed",
    () =>
      Effect.gen(function* () {
        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "effect-mcp-task-restart-"))),
          (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
        )
        const flags = ["--json", "--task-store", `sqlite:${path.join(dir, "tasks.db")}`, "--task-heartbeat", "200"]
        const first = yield* ServerProcess.spawnHttp(flags)
        const before = yield* session(first.url)
        const call = (seconds: number) =>
          before.request("tools/call", {
            name: "slow_compute",
            arguments: { seconds, label: "restart" },
            task: { ttl: 600_000 }
          })
        const done: string = (yield* call(0.1)).result.task.taskId
        const running: string = (yield* call(3600)).result.task.taskId
        // `tasks/result` (2025-11-25) answers once the task is terminal: no polling of `tasks/get`.
        const finished = (yield* before.request("tasks/result", { taskId: done })).result
        assert.deepStrictEqual(finished.content, [{ type: "text", text: "computed restart after 0.1 s" }])
        assert.strictEqual((yield* before.request("tasks/get", { taskId: done })).result.status, "completed")
        assert.strictEqual((yield* before.request("tasks/get", { taskId: running })).result.status, "working")

        first.process.kill("SIGKILL")
        yield* Effect.callback<void>((resume) => {
          if (first.process.exitCode !== null || first.process.signalCode !== null) return resume(Effect.void)
          first.process.once("exit", () => resume(Effect.void))
        })

        const second = yield* ServerProcess.spawnHttp(flags)
        const after = yield* session(second.url)
        const result = (yield* after.request("tasks/result", { taskId: done })).result
        assert.deepStrictEqual(result.content, [{ type: "text", text: "computed restart after 0.1 s" }])
        assert.deepStrictEqual(result._meta["io.modelcontextprotocol/related-task"], { taskId: done })
        const inlined = (yield* stateless(second.url, "tasks/get", { taskId: done })).result
        assert.strictEqual(inlined.status, "completed")
        assert.deepStrictEqual(inlined.result.content, result.content)

        // Its worker stopped heartbeating with the killed process: failed, never working forever.
        // `tasks/result` answers once the task is terminal (its lapsed heartbeat found): then it reads failed.
        const lost = yield* after.request("tasks/result", { taskId: running })
        assert.strictEqual(lost.error.code, -32603)
        assert.match(lost.error.message, /lost/)
        const orphan = (yield* after.request("tasks/get", { taskId: running })).result
        assert.strictEqual(orphan.status, "failed")
        const extension = (yield* stateless(second.url, "tasks/get", { taskId: running })).result
        assert.strictEqual(extension.status, "failed")
        assert.strictEqual(extension.error.code, -32603)
      }),
    60_000
  )
})
