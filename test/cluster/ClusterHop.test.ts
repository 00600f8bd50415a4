/**
 * The direct hop between runners (packages/cluster DirectHop) with two
 * everything-server processes: calls sent to the runner that does not own the
 * session reach the owner over a connection kept open to the owner's hop
 * listener (seen in the kernel's socket table: the receiving process holds a
 * connection to the port the owner listens on besides its endpoint and its
 * runner port, and none to its endpoint), and what only a runner may say is not
 * believed from a client: a forged hop header makes an ordinary request (a
 * non-owner forwards it, where it would refuse a real hop with 421), and a
 * client cannot pick the id of the session it opens.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import { connect } from "node:net"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { answer, open, session } from "./sse.ts"
import { startRunners } from "./support.ts"

const tempDatabase = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "mcp-cluster-hop-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => `sqlite:${join(dir, "cluster.db")}`))

/** The established TCP connections of process `pid` to 127.0.0.1:`port` (iproute2's `ss`). */
const connectionsTo = (pid: number, port: string): number =>
  execFileSync("ss", ["-tnpH", "state", "established", "dst", `127.0.0.1:${port}`], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes(`pid=${pid},`)).length

/** The TCP ports process `pid` listens on (iproute2's `ss`). */
const listeningPorts = (pid: number): Array<string> =>
  execFileSync("ss", ["-tlnpH"], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes(`pid=${pid},`))
    .map((line) => line.trim().split(/\s+/)[3]!.split(":").pop()!)

const HOP = "x-effect-mcp-cluster-hop"
const NEW_SESSION = "x-effect-mcp-cluster-session"

describe("cluster: the direct hop", () => {
  it.live(
    "forwarded calls take a connection kept open to the owner's hop listener; a client's private headers are not believed",
    () =>
      Effect.gen(function* () {
        const runners = yield* startRunners(2, yield* tempDatabase)
        const [r0, r1] = runners.map((runner) => runner.url) as [string, string]
        const ownerPort = new URL(runners[0]!.base).port
        // The owner's third listener, besides its endpoint and its runner port.
        const hopPorts = listeningPorts(runners[0]!.process.pid!).filter(
          (port) => port !== ownerPort && port !== String(runners[0]!.runnerPort)
        )
        assert.strictEqual(
          hopPorts.length,
          1,
          `the owner's listeners besides its endpoint and runner port: ${hopPorts}`
        )
        const hopPort = hopPorts[0]!
        const receiver = runners[1]!.process.pid!
        // Opened on runner 0 under an id whose shard it owns.
        const s = yield* session(r0)
        assert.strictEqual(connectionsTo(receiver, hopPort), 0)
        const call = (at: string, headers: Record<string, string> = {}) =>
          Effect.gen(function* () {
            const id = Math.floor(Math.random() * 1e9)
            const opened = yield* open(at, {
              method: "POST",
              headers: { ...s.headers, ...headers },
              body: { jsonrpc: "2.0", id, method: "tools/call", params: { name: "test_simple_text", arguments: {} } }
            })
            return { status: opened.status, answer: opened.status === 200 ? yield* answer(opened, id) : undefined }
          })
        // Every forwarded call takes the hop: the first finds the owner in the session's row.
        for (let i = 0; i < 3; i++) {
          const result = yield* call(r1)
          assert.strictEqual(result.answer?.result?.content?.[0]?.text, "This is a simple text response for testing.")
        }
        assert.isAtLeast(connectionsTo(receiver, hopPort), 1, "runner 1 holds a connection to runner 0's hop listener")
        assert.strictEqual(connectionsTo(receiver, ownerPort), 0, "and none to its endpoint")

        // A forged hop is an ordinary request: runner 1 forwards it to the owner (a real hop to a
        // runner that does not own the session would be refused with 421), and the owner serves it.
        const forged = yield* call(r1, { [HOP]: "guess" })
        assert.strictEqual(forged.status, 200)
        assert.isDefined(forged.answer?.result)
        assert.isDefined((yield* call(r0, { [HOP]: "guess" })).answer?.result)

        // A client cannot choose the id of the session it opens, with or without a forged hop.
        for (const at of [r0, r1]) {
          const init = yield* open(at, {
            method: "POST",
            headers: { [NEW_SESSION]: "chosen-by-the-client", [HOP]: "guess" },
            body: {
              jsonrpc: "2.0",
              id: 1,
              method: "initialize",
              params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } }
            }
          })
          yield* answer(init, 1)
          const opened = init.headers.get("mcp-session-id")
          assert.isString(opened)
          assert.notStrictEqual(opened, "chosen-by-the-client")
        }
      }).pipe(Effect.scoped),
    90_000
  )

  it.live(
    "a runner that does not own the session takes what clients send on the wire: a Trailer header, a length it never sends",
    () =>
      Effect.gen(function* () {
        const runners = yield* startRunners(2, yield* tempDatabase)
        const s = yield* session(runners[0]!.url)
        const receiver = new URL(runners[1]!.base)
        const body = JSON.stringify({
          jsonrpc: "2.0",
          id: 7,
          method: "tools/call",
          params: { name: "test_simple_text", arguments: {} }
        })
        // Written by hand: Node's client will not send these, a client on the wire may. Answered with the head
        // of the reply, which must come at once.
        const raw = (extra: string, length: number) =>
          Effect.callback<string>((resume) => {
            const socket = connect(Number(receiver.port), "127.0.0.1", () => {
              const head = Object.entries({
                ...s.headers,
                "content-type": "application/json",
                accept: "application/json, text/event-stream"
              })
                .map(([name, value]) => `${name}: ${value}\r\n`)
                .join("")
              socket.write(
                `POST /mcp HTTP/1.1\r\nHost: ${receiver.host}\r\n${head}Content-Length: ${length}\r\n${extra}\r\n${body}`
              )
            })
            let text = ""
            socket.setEncoding("utf8")
            socket.on("data", (chunk: string) => {
              text += chunk
              if (text.includes("\r\n\r\n")) resume(Effect.succeed(text.slice(0, text.indexOf("\r\n"))))
            })
            socket.on("close", () => resume(Effect.succeed(`closed: ${text}`)))
            return Effect.sync(() => socket.destroy())
          }).pipe(Effect.timeout("10 seconds"))
        // One ordinary call first: the receiving runner then knows the owner, and relays in plain Node.
        yield* s.request(runners[1]!.url, "tools/call", { name: "test_simple_text", arguments: {} })
        // A Trailer on a body framed by its length: the hop once copied it onto a Node request, which threw and
        // ended the receiving process.
        assert.strictEqual(yield* raw("Trailer: x-checksum\r\n", Buffer.byteLength(body)), "HTTP/1.1 200 OK")
        // More than the limit declared (4 MiB): refused before reading, as its owner refuses it.
        assert.strictEqual(yield* raw("", 99_999_999_999), "HTTP/1.1 413 Payload Too Large")
        // Both runners still serve.
        for (const runner of runners) assert.strictEqual(runner.process.exitCode, null)
      }).pipe(Effect.scoped),
    90_000
  )
})
