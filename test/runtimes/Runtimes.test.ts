/**
 * The everything server on Bun and Deno: `WebHandler.make` served by `Bun.serve` / `Deno.serve` on 127.0.0.1
 * (test/runtimes/fixtures/server.ts, started by Runtime.ts), each runtime the binary its npm package (a pinned
 * devDependency) installed. The official SDK clients run sessions against it: 1.x on 2025-11-25 (every tool,
 * progress, elicitation and sampling as server-to-client requests, every resource and prompt, list changes), 2.x
 * in auto negotiation on 2026-07-28 (progress, an elicitation round by `input_required`). A runtime that is
 * missing or does not start fails the test with its stderr: never a skip.
 */
import { describe, it } from "@effect/vitest"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import * as Everything from "../interop/everything.ts"
import * as SdkClient from "../interop/sdkClient.ts"
import * as Runtime from "./Runtime.ts"
import * as Sdk2 from "./sdk2.ts"

const mode: Everything.Mode = { asks: true, streams: true, cancelBy: "notification" }

describe.each(Runtime.runtimes)("the everything server on $name, served by WebHandler", (runtime) => {
  it.live(
    "the 1.x SDK client on 2025-11-25: every tool (progress, elicitation, sampling), resource and prompt",
    () =>
      Effect.gen(function* () {
        const server = yield* Runtime.start(runtime)
        const sdk = yield* SdkClient.connect(new StreamableHTTPClientTransport(new URL(server.url)))
        yield* Everything.everything(sdk, mode)
      }),
    60_000
  )

  it.live(
    "the 2.x SDK client in auto negotiation on 2026-07-28: progress, an elicitation round, a resource, a prompt",
    () =>
      Effect.gen(function* () {
        const server = yield* Runtime.start(runtime)
        yield* Sdk2.session(server.url)
      }),
    60_000
  )
})
