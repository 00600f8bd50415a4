/**
 * The everything server as a Cloudflare Worker on workerd (the `workerd` devDependency's binary):
 * `export default { fetch }` over `WebHandler.make`, stateless, bundled into one ESM file and served on
 * 127.0.0.1 (Workerd.ts). The official SDK clients run the sessions a stateless server supports: 1.x on
 * stateless 2025-11-25 (every tool, resource and prompt; asks answered by a tool error, as a stateless server
 * must), 2.x on 2026-07-28 (progress, an elicitation round by `input_required`), both on one isolate reused
 * for every request, and 2.x again with every request in an isolate made for it (the elicitation round's retry
 * opens a `requestState` another isolate sealed). Then 100 `tools/list` and `tools/call` requests, four in
 * flight, each answered by a fresh isolate. A stateless call whose client left is interrupted: workerd learns
 * that a client is gone only when it writes to it, which the reply's keepalive comments do. workerd missing, or
 * not starting, fails every test with its stderr: never a skip.
 */
import { assert, describe, layer } from "@effect/vitest"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Everything from "../interop/everything.ts"
import * as SdkClient from "../interop/sdkClient.ts"
import * as Sdk2 from "./sdk2.ts"
import * as Workerd from "./Workerd.ts"

class Server extends Context.Service<Server, Workerd.Workerd>()("test/runtimes/Workerd/Server") {}

// One workerd for the file: the everything Worker on one isolate, and both fixtures on a fresh isolate per request.
const ServerLive = Layer.effect(
  Server,
  Workerd.start([
    { name: "everything", entry: "test/runtimes/fixtures/worker.ts", isolates: "reused" },
    { name: "freshEverything", entry: "test/runtimes/fixtures/worker.ts", isolates: "fresh" },
    { name: "freshEcho", entry: "test/runtimes/fixtures/echo-worker.ts", isolates: "fresh" },
    { name: "wait", entry: "test/runtimes/fixtures/wait-worker.ts", isolates: "reused" }
  ])
)

/** The isolate that answered each HTTP exchange, from the fixtures' headers (fixtures/isolateTag.ts). */
interface Answer {
  readonly method: string
  readonly isolate: string
  /** How many requests that isolate had served, this one included. */
  readonly served: number
}

/** A `fetch` for the SDK transports that records which isolate answered each exchange. */
const watched = () => {
  const answers: Array<Answer> = []
  const fetch: Sdk2.Fetch = async (url, init) => {
    const response = await globalThis.fetch(url, init)
    answers.push({
      method: init?.method ?? "GET",
      isolate: response.headers.get("x-isolate") ?? "none",
      served: Number(response.headers.get("x-isolate-requests"))
    })
    return response
  }
  return { answers, fetch }
}

/** Every exchange answered by an isolate of its own, at its first request. */
const allFresh = (answers: ReadonlyArray<Answer>) => {
  assert.deepStrictEqual(
    answers.filter((a) => a.served !== 1),
    [],
    "an isolate served a second request"
  )
  assert.strictEqual(new Set(answers.map((a) => a.isolate)).size, answers.length, "an isolate was reused")
}

/** POSTs a stateless 2025-11-25 `tools/call` of `name` (no arguments) with the Fetch API. */
const postCall = (url: string, name: string, signal?: AbortSignal) =>
  fetch(url, {
    method: "POST",
    headers: {
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      "mcp-protocol-version": "2025-11-25"
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: {} } }),
    ...(signal === undefined ? {} : { signal })
  })

const textOf = (result: CallToolResult) => result.content.map((c) => (c.type === "text" ? c.text : "")).join("")

// Stateless: asks cannot reach the client, and a call is cancelled by dropping its HTTP exchange.
const mode: Everything.Mode = { asks: false, streams: true, cancelBy: "disconnect" }

describe("the everything server on workerd, a Worker of WebHandler", () => {
  layer(ServerLive, { excludeTestServices: true, timeout: 120_000 })((it) => {
    it.effect(
      "the 1.x SDK client on stateless 2025-11-25, one isolate for every request: every tool, resource and prompt",
      () =>
        Effect.gen(function* () {
          const server = yield* Server
          const { answers, fetch } = watched()
          const sdk = yield* SdkClient.connect(
            new StreamableHTTPClientTransport(new URL(server.urls.everything!), { fetch })
          )
          yield* Everything.everything(sdk, mode)
          // One isolate answered them all, one request after another: the handler made at the module's top
          // serves every later request's context.
          assert.strictEqual(new Set(answers.map((a) => a.isolate)).size, 1)
          assert.isAbove(answers.length, 50)
        }),
      60_000
    )

    it.effect(
      "the 2.x SDK client on 2026-07-28, one isolate: progress, an elicitation round, a resource, a prompt",
      () =>
        Effect.gen(function* () {
          const server = yield* Server
          yield* Sdk2.session(server.urls.everything!)
        }),
      60_000
    )

    it.effect(
      "the 2.x SDK client on 2026-07-28, a fresh isolate per request: the retry opens another isolate's requestState",
      () =>
        Effect.gen(function* () {
          const server = yield* Server
          const { answers, fetch } = watched()
          yield* Sdk2.session(server.urls.freshEverything!, fetch)
          allFresh(answers)
        }),
      60_000
    )

    it.effect(
      "a stateless call whose client left is interrupted at the reply's next keepalive comment",
      () =>
        Effect.gen(function* () {
          const server = yield* Server
          const url = server.urls.wait!
          // The reply opens with a comment once the handler has the call; then the client leaves.
          const opening = yield* Effect.promise(async () => {
            const abort = new AbortController()
            const response = await postCall(url, "wait", abort.signal)
            const first = await response.body!.getReader().read()
            abort.abort()
            return new TextDecoder().decode(first.value)
          })
          assert.match(opening, /^:/)
          // Said by the handler once interrupted: within a keepalive interval (100 ms) of the client leaving.
          yield* server.waitForStderr(/^wait interrupted$/m, 20_000)
        }),
      60_000
    )

    it.effect(
      "100 of 100 tools/list and tools/call requests answered, each by a fresh isolate (2025-11-25 and 2026-07-28)",
      () =>
        Effect.gen(function* () {
          const server = yield* Server
          const url = server.urls.freshEcho!
          const { answers, fetch } = watched()
          const sdk1 = yield* SdkClient.connect(new StreamableHTTPClientTransport(new URL(url), { fetch }))
          const { client: sdk2 } = yield* Sdk2.connect(url, fetch)
          assert.strictEqual(sdk2.getNegotiatedProtocolVersion?.(), "2026-07-28")
          // POSTs only: the 1.x client opens its GET stream after the handshake without waiting, so it may be
          // answered at any point of the run.
          const posts = () => answers.filter((answer) => answer.method === "POST").length
          const handshakes = posts()
          const requests = Array.from({ length: 100 }, (_, i) => i)
          const answered = yield* Effect.forEach(
            requests,
            (i) =>
              Effect.promise(async () => {
                // Alternately on each client: a list, then a call.
                const client = i % 2 === 0 ? sdk1.client : sdk2
                if (i % 4 < 2) return (await client.listTools()).tools.map((t) => t.name).join(",")
                return textOf((await client.callTool({ name: "echo", arguments: { text: `n${i}` } })) as CallToolResult)
              }),
            { concurrency: 4 }
          )
          assert.deepStrictEqual(
            answered,
            requests.map((i) => (i % 4 < 2 ? "echo" : `n${i}`))
          )
          assert.strictEqual(posts() - handshakes, 100)
          allFresh(answers)
        }),
      120_000
    )
  })
})
