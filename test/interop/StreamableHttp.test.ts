/**
 * The official SDK client drives the everything server over HTTP: a real
 * server process on 127.0.0.1 (port 0) per test, Streamable HTTP in each
 * session and response mode, and the legacy HTTP+SSE transport.
 */
import { describe, it } from "@effect/vitest"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import * as ServerProcess from "../support/ServerProcess.ts"
import * as Everything from "./everything.ts"
import * as SdkClient from "./sdkClient.ts"

interface Setup {
  readonly name: string
  readonly flags: ReadonlyArray<string>
  readonly mode: Everything.Mode
}

const setups: ReadonlyArray<Setup> = [
  {
    name: "stateful, SSE responses",
    flags: [],
    mode: { asks: true, streams: true, cancelBy: "notification" }
  },
  {
    name: "stateful, JSON responses",
    flags: ["--json"],
    mode: { asks: true, streams: false, cancelBy: "notification" }
  },
  {
    name: "stateless, SSE responses",
    flags: ["--stateless"],
    mode: { asks: false, streams: true, cancelBy: "disconnect" }
  },
  {
    name: "stateless, JSON responses",
    flags: ["--stateless", "--json"],
    mode: { asks: false, streams: false, cancelBy: "disconnect" }
  }
]

const streamable = (flags: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const server = yield* ServerProcess.spawnHttp(flags)
    const sdk = yield* SdkClient.connect(new StreamableHTTPClientTransport(new URL(server.url)))
    return { server, sdk }
  })

describe("interop: SDK client -> everything server over Streamable HTTP", () => {
  for (const setup of setups) {
    describe(setup.name, () => {
      it.live(
        "lists and calls every tool, reads every resource, gets every prompt",
        () =>
          Effect.gen(function* () {
            const { sdk } = yield* streamable(setup.flags)
            yield* Everything.tools(sdk, setup.mode)
            yield* Everything.listChanges(sdk)
            yield* Everything.resources(sdk, setup.mode)
            yield* Everything.prompts(sdk, setup.mode)
          }),
        60_000
      )

      it.live(
        "cancelling test_long_running interrupts it on the server",
        () =>
          Effect.gen(function* () {
            const { server, sdk } = yield* streamable(setup.flags)
            yield* Everything.cancelLongRunning(sdk, setup.mode, (pattern) => server.waitForStderr(pattern))
          }),
        60_000
      )
    })
  }
})

describe("interop: SDK client -> everything server over legacy HTTP+SSE", () => {
  const mode: Everything.Mode = { asks: true, streams: true, cancelBy: "notification" }
  const legacy = Effect.gen(function* () {
    const server = yield* ServerProcess.spawnHttp()
    const sdk = yield* SdkClient.connect(new SSEClientTransport(new URL(`${server.base}/sse`)))
    return { server, sdk }
  })

  it.live(
    "lists and calls every tool, reads every resource, gets every prompt",
    () =>
      Effect.gen(function* () {
        const { sdk } = yield* legacy
        yield* Everything.everything(sdk, mode)
      }),
    60_000
  )

  it.live(
    "cancelling test_long_running interrupts it on the server",
    () =>
      Effect.gen(function* () {
        const { server, sdk } = yield* legacy
        yield* Everything.cancelLongRunning(sdk, mode, (pattern) => server.waitForStderr(pattern))
      }),
    60_000
  )
})
