/**
 * The task fixtures of the suite's Tasks scenarios (SEP-2663 on 2026-07-28;
 * the same tools run as 2025-11-25 tasks when a call carries `task`): a
 * sync-only greeting, a task-taking sleep, a tool error and a protocol error
 * inside a task, tasks that wait for one or two elicitations, and a tool that
 * gathers input in rounds before it hands the rest to a task.
 */
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Elicitation from "@effect-mcp/server/Elicitation"
import * as Task from "@effect-mcp/server/Task"
import * as Tool from "@effect-mcp/server/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

const noInput = Schema.Struct({})

/** A form of one required field; what the client accepted (any of its string fields), or the action. */
const ask = (message: string, field: string, type: "string" | "boolean") =>
  Elicitation.request({
    message,
    requestedSchema: {
      type: "object",
      properties: { [field]: type === "string" ? { type: "string" } : { type: "boolean" } },
      required: [field]
    }
  }).pipe(
    Effect.map((result) => {
      if (result.action !== "accept") return `(${result.action})`
      const content = result.content ?? {}
      const value = content[field] ?? Object.values(content).find((v) => typeof v === "string")
      return String(value)
    })
  )

const greet = Tool.make("greet", {
  description: "Greets someone (never a task)",
  input: Schema.Struct({ name: Schema.String }),
  handler: ({ name }) => Effect.succeed(`Hello, ${name}!`)
})

const slowCompute = Tool.make("slow_compute", {
  description: "Sleeps `seconds` seconds, then answers (a task where the client can take one)",
  input: Schema.Struct({ seconds: Schema.Number, label: Schema.optionalKey(Schema.String) }),
  taskSupport: "optional",
  handler: ({ seconds, label }) =>
    Effect.as(Effect.sleep(`${Math.max(0, seconds) * 1000} millis`), `computed ${label ?? "result"} after ${seconds} s`)
})

class JobFailed extends Schema.TaggedError<JobFailed>()("JobFailed", { message: Schema.String }) {}

const failingJob = Tool.make("failing_job", {
  description: "Always a task; reports a tool error after a second",
  input: noInput,
  taskSupport: "required",
  handler: () => Effect.andThen(Effect.sleep("1 second"), Effect.fail(new JobFailed({ message: "the job failed" })))
})

const protocolErrorJob = Tool.make("protocol_error_job", {
  description: "A task that ends in a JSON-RPC error",
  input: noInput,
  taskSupport: "optional",
  handler: () => Effect.fail(new McpError.InternalError({ message: "the job crashed" }))
})

const confirmDelete = Tool.make("confirm_delete", {
  description: "A task that asks the client to confirm a deletion",
  input: Schema.Struct({ filename: Schema.String }),
  taskSupport: "optional",
  handler: ({ filename }) =>
    Effect.map(ask(`Delete ${filename}?`, "confirm", "boolean"), (answer) => `delete ${filename}: ${answer}`)
})

const multiInput = Tool.make("multi_input", {
  description: "A task that asks two questions at once",
  input: noInput,
  taskSupport: "optional",
  handler: () =>
    Effect.all([ask("Your name?", "name", "string"), ask("Confirm?", "confirm", "boolean")], {
      concurrency: 2
    }).pipe(Effect.map(([name, confirm]) => `name=${name}, confirm=${confirm}`))
})

const withTask = Tool.make("test_tool_with_task", {
  description: "Asks for the user's name in the request, then finishes as a task",
  input: noInput,
  taskSupport: "required",
  taskCreation: "handler",
  handler: () =>
    Effect.flatMap(ask("What is your name?", "user_name", "string"), (name) =>
      Task.background(Effect.as(Effect.sleep("100 millis"), `Hello, ${name}!`))
    )
})

/** The task fixtures. */
export const tools = [greet, slowCompute, failingJob, protocolErrorJob, confirmDelete, multiInput, withTask] as const
