/**
 * A defect's text never reaches the wire: the fixture server (a real child
 * process) dies in a tool, a resource, a prompt and a completion with
 * `new Error("db password=hunter2 rejected")`; every byte it writes to the
 * client, on stdio and on Streamable HTTP (read off the socket), is checked
 * for the secret and for its stack, and its log (stderr) for the secret next
 * to each correlation id the client was given.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as http from "node:http"
import { fileURLToPath } from "node:url"
import * as ServerProcess from "../support/ServerProcess.ts"

const fixture = fileURLToPath(new URL("./fixtureServer.ts", import.meta.url))
const secret = "db password=hunter2 rejected"

// biome-ignore lint/suspicious/noExplicitAny: tests read JSON messages by path; the assertions are the type check
type Json = { readonly [key: string]: any }

const requests: ReadonlyArray<readonly [method: string, params: Json]> = [
  ["tools/call", { name: "explodes", arguments: {} }],
  ["resources/read", { uri: "fixture://explodes" }],
  ["resources/read", { uri: "fixture://items/1" }],
  ["prompts/get", { name: "explodes" }],
  [
    "completion/complete",
    { ref: { type: "ref/resource", uri: "fixture://items/{id}" }, argument: { name: "id", value: "x" } }
  ],
  // Not defects: they show the other error paths on the same wire.
  ["tools/call", { name: "fails", arguments: { id: "7" } }],
  ["tools/call", { name: "create", arguments: { title: 42 } }],
  ["resources/read", { uri: "fixture://nothing" }]
]

const initialize = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "wire", version: "1.0.0" } }
}
const initialized = { jsonrpc: "2.0", method: "notifications/initialized" }
const setLevel = { jsonrpc: "2.0", id: 100, method: "logging/setLevel", params: { level: "debug" } }
const numbered = requests.map(([method, params], i) => ({ jsonrpc: "2.0", id: i + 1, method, params }))

const start = (mode: "--stdio" | "--http"): ChildProcess =>
  spawn(ServerProcess.node, [...ServerProcess.sourceConditions, fixture, mode], {
    cwd: ServerProcess.root,
    stdio: ["pipe", "pipe", "pipe"]
  })

/** The bytes `stream` emitted so far; `output` is told of each chunk. */
const collect = (stream: NodeJS.ReadableStream | null, output: ServerProcess.Changes) => {
  const chunks: Array<Buffer> = []
  stream?.on("data", (chunk: Buffer) => {
    chunks.push(chunk)
    output.notify()
  })
  return () => Buffer.concat(chunks)
}

/** The responses (by id) among newline-delimited or SSE-framed JSON-RPC text. */
const responsesIn = (text: string): Map<number, Json> => {
  const found = new Map<number, Json>()
  for (const line of text.split("\n")) {
    const json = line.startsWith("data: ") ? line.slice("data: ".length) : line
    if (!json.startsWith("{")) continue
    const message = JSON.parse(json) as Json
    if (typeof message.id === "number" && ("result" in message || "error" in message)) found.set(message.id, message)
  }
  return found
}

const correlationIds = (responses: Map<number, Json>): ReadonlyArray<string> =>
  [1, 2, 3, 4, 5].map((id) => {
    const response = responses.get(id)!
    const text: string = response.error?.message ?? response.result.content[0].text
    const match = /^Internal error \(correlation id ([0-9a-f-]{36})\)$/.exec(text)
    assert.isNotNull(match, JSON.stringify(response))
    if (response.error !== undefined) {
      assert.strictEqual(response.error.code, -32603)
      assert.deepStrictEqual(response.error.data, { correlationId: match![1] })
    } else assert.isTrue(response.result.isError)
    return match![1]!
  })

/** The other error paths on the same wire: a typed failure's fields, every argument issue, -32002. */
const checkOthers = (responses: Map<number, Json>) => {
  const typed = responses.get(6)!.result
  assert.isTrue(typed.isError)
  assert.deepStrictEqual(typed.structuredContent, { _tag: "NotFound", id: "7" })
  assert.deepStrictEqual(JSON.parse(typed.content[0].text), { _tag: "NotFound", id: "7" })
  assert.deepStrictEqual(responses.get(7)!.error, {
    code: -32602,
    message: "Invalid arguments for tool create: title: Expected string; body: Missing key"
  })
  assert.deepStrictEqual(responses.get(8)!.error, {
    code: -32002,
    message: "Resource not found",
    data: { uri: "fixture://nothing" }
  })
}

/** The secret and the stack are nowhere in `bytes`; the log has the secret with each id. */
const check = (bytes: Buffer, log: string, ids: ReadonlyArray<string>) => {
  assert.strictEqual(bytes.indexOf(Buffer.from("hunter2")), -1)
  assert.strictEqual(bytes.indexOf(Buffer.from("fixtureServer.ts")), -1)
  assert.strictEqual(bytes.indexOf(Buffer.from("    at ")), -1)
  // Each log entry starts with a timestamp; the one naming an id holds the defect's text.
  const entries = log.split(/^(?=\[\d\d:\d\d:\d\d\.\d+\])/m)
  for (const id of ids) {
    const entry = entries.find((e) => e.includes(`correlationId: '${id}'`))
    assert.isDefined(entry, `no log entry with correlationId ${id} in:\n${log}`)
    assert.include(entry!, secret)
    assert.include(entry!, "fixtureServer.ts")
  }
}

/** Waits until `done()`, looking again at each chunk of output; `what` says what was seen when it fails. */
const until = (done: () => boolean, what: () => string, output: ServerProcess.Changes) =>
  ServerProcess.waitFor(() => (done() ? "done" : what()), /^done$/, undefined, output)

describe("a defect's text never reaches the wire", () => {
  it.live(
    "stdio: byte for byte",
    () =>
      Effect.gen(function* () {
        const child = yield* Effect.acquireRelease(
          Effect.sync(() => start("--stdio")),
          (child) => ServerProcess.terminate(child)
        )
        const output = ServerProcess.makeChanges()
        // "close" comes once the server exited and both its streams are read to the end.
        child.on("close", (code, signal) => output.end(`the server exited (code ${code}, signal ${signal})`))
        const stdout = collect(child.stdout, output)
        const stderr = collect(child.stderr, output)
        for (const message of [initialize, initialized, setLevel, ...numbered]) {
          child.stdin!.write(`${JSON.stringify(message)}\n`)
        }
        yield* until(
          () => responsesIn(stdout().toString("utf8")).size === numbered.length + 2,
          () => `${stdout().toString("utf8")}\n${stderr().toString("utf8")}`,
          output
        )
        const ids = correlationIds(responsesIn(stdout().toString("utf8")))
        checkOthers(responsesIn(stdout().toString("utf8")))
        // The log is written as the answer is made; give the pipe a moment.
        yield* until(
          () => ids.every((id) => stderr().toString("utf8").includes(`correlationId: '${id}'`)),
          () => stderr().toString("utf8"),
          output
        )
        check(stdout(), stderr().toString("utf8"), ids)
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "Streamable HTTP: byte for byte, read off the socket",
    () =>
      Effect.gen(function* () {
        const child = yield* Effect.acquireRelease(
          Effect.sync(() => start("--http")),
          (child) => ServerProcess.terminate(child)
        )
        // Off stdio the default logger writes to stdout: the server's log is both streams.
        const output = ServerProcess.makeChanges()
        // "close" comes once the server exited and both its streams are read to the end.
        child.on("close", (code, signal) => output.end(`the server exited (code ${code}, signal ${signal})`))
        const stdout = collect(child.stdout, output)
        const stderr = collect(child.stderr, output)
        const log = () => `${stdout().toString("utf8")}${stderr().toString("utf8")}`
        const url = new URL(
          (yield* ServerProcess.waitFor(
            () => stderr().toString("utf8"),
            /listening on (http:\/\/\S+\/mcp)/,
            undefined,
            output
          ))[1]!
        )
        const wire: Array<Buffer> = []
        let sessionId: string | undefined
        const post = (message: Json) =>
          Effect.promise(
            () =>
              new Promise<string>((resolve, reject) => {
                const request = http.request(url, {
                  method: "POST",
                  agent: false,
                  headers: {
                    "content-type": "application/json",
                    accept: "application/json, text/event-stream",
                    "mcp-protocol-version": "2025-06-18",
                    ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId })
                  }
                })
                request.on("socket", (socket) => socket.on("data", (chunk: Buffer) => wire.push(chunk)))
                request.on("response", (response) => {
                  sessionId ??= response.headers["mcp-session-id"] as string | undefined
                  const body: Array<Buffer> = []
                  response.on("data", (chunk: Buffer) => body.push(chunk))
                  response.on("end", () => resolve(Buffer.concat(body).toString("utf8")))
                })
                request.on("error", reject)
                request.end(JSON.stringify(message))
              })
          )
        let bodies = ""
        for (const message of [initialize, initialized, setLevel, ...numbered]) bodies += `${yield* post(message)}\n`
        const responses = responsesIn(bodies)
        assert.strictEqual(responses.size, numbered.length + 2, bodies)
        const ids = correlationIds(responses)
        checkOthers(responses)
        yield* until(() => ids.every((id) => log().includes(`correlationId: '${id}'`)), log, output)
        const bytes = Buffer.concat(wire)
        assert.isAbove(bytes.length, bodies.length)
        check(bytes, log(), ids)
        assert.notInclude(bodies, "hunter2")
      }).pipe(Effect.scoped),
    60_000
  )
})
