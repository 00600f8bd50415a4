/**
 * The client as a task receiver (2025-11-25): with `McpClient.Options.taskRequests`
 * the client declares `tasks.requests` for the handlers it has, answers a
 * `sampling/createMessage` or `elicitation/create` that carries `task` at once
 * with a task, runs the handler on a fiber of the client's scope, and serves
 * the server's `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel`
 * (cancelling interrupts the handler), and tells the server each new status
 * with `notifications/tasks/status`. See "The client as a task receiver" in
 * docs/tasks.md.
 */

/** How the client runs the requests a server sends it as tasks (`McpClient.Options.taskRequests`). */
export interface Options {
  /** Take `sampling/createMessage` as a task (needs a `SamplingHandler`). */
  readonly sampling?: boolean | undefined
  /** Take `elicitation/create` as a task (needs an `ElicitationHandler`). */
  readonly elicitation?: boolean | undefined
  /** Tasks kept at most (default 10,000): the oldest terminal ones make room; beyond, a new one is refused. */
  readonly maxTasks?: number | undefined
  /** Retention from creation when the server asks for none (ms; null: unlimited). Default 1 hour. */
  readonly defaultTtlMs?: number | null | undefined
  /** The longest retention a server may ask for (ms). Default 24 hours. */
  readonly maxTtlMs?: number | undefined
  /** The polling interval suggested to the server (ms). Default 500. */
  readonly pollIntervalMs?: number | undefined
}
