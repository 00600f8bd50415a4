import { assert, describe, it } from "@effect/vitest"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as Transport from "@effect-mcp/engine/Transport"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as Stream from "effect/Stream"
import { clientInfo } from "../../engine/test/fixtures.ts"
import { serve, URL_MCP } from "./StreamableHttpFixtures.ts"

const connect = (
  http: HttpClient.HttpClient,
  versions: ReadonlyArray<ProtocolVersion.ProtocolVersion>,
  options: Partial<StreamableHttpClient.Options> = {}
) =>
  Effect.gen(function* () {
    const transport = yield* StreamableHttpClient.make({ url: URL_MCP, ...options }).pipe(
      Effect.provideService(HttpClient.HttpClient, http)
    )
    const session = yield* ClientSession.make({ clientInfo, capabilities: {}, supportedVersions: versions }).pipe(
      Effect.provideService(Transport.Transport, transport)
    )
    return { transport, session }
  })

const callEcho = (session: { request: (m: string, p?: object) => Effect.Effect<unknown, unknown> }) =>
  session.request("tools/call", { name: "echo", arguments: { text: "hi" } })

describe("Streamable HTTP: full sessions", () => {
  for (const responseMode of ["sse", "json"] as const) {
    for (const version of ["2025-03-26", "2025-06-18", "2025-11-25"] as const) {
      it.effect(`stateful ${version}, ${responseMode} replies`, () =>
        Effect.gen(function* () {
          const { server, http } = yield* serve({ responseMode })
          const { transport, session } = yield* connect(http, [version])
          assert.strictEqual(session.state.revision?.version, version)
          assert.isDefined(transport.sessionId())
          assert.strictEqual(transport.protocolVersion(), version)
          assert.strictEqual(server.sessionCount(), 1)
          const result = yield* callEcho(session)
          assert.deepStrictEqual(result, { content: [{ type: "text", text: "echo:hi" }] })
          // Progress for a request travels on that request's stream (or the GET stream for JSON replies).
          const events = yield* session
            .requestWithProgress("tools/call", { name: "progress", arguments: {} })
            .pipe(Stream.runCollect)
          const last = events[events.length - 1]
          assert.strictEqual(last?._tag, "Result")
          if (responseMode === "sse") assert.strictEqual(events.length, 4)
        })
      )
    }

    it.effect(`stateless 2026-07-28, ${responseMode} replies`, () =>
      Effect.gen(function* () {
        const { server, http } = yield* serve({ responseMode })
        const { transport, session } = yield* connect(http, ["2026-07-28"])
        assert.strictEqual(session.state.revision?.version, "2026-07-28")
        assert.isUndefined(transport.sessionId())
        const result = yield* callEcho(session)
        assert.deepStrictEqual(result, { content: [{ type: "text", text: "echo:hi" }], resultType: "complete" })
        assert.strictEqual(server.sessionCount(), 0)
      })
    )

    it.effect(`sessions disabled (stateless mode), 2025-11-25, ${responseMode} replies`, () =>
      Effect.gen(function* () {
        const { server, http } = yield* serve({ responseMode, stateless: true })
        const { transport, session } = yield* connect(http, ["2025-11-25"])
        assert.isUndefined(transport.sessionId())
        assert.deepStrictEqual(yield* callEcho(session), { content: [{ type: "text", text: "echo:hi" }] })
        assert.deepStrictEqual(yield* callEcho(session), { content: [{ type: "text", text: "echo:hi" }] })
        assert.strictEqual(server.sessionCount(), 0)
      })
    )
  }

  it.effect("a client speaking every revision settles on 2026-07-28 against a server that speaks it", () =>
    Effect.gen(function* () {
      const { http } = yield* serve()
      const { session } = yield* connect(http, ["2025-11-25", "2026-07-28"])
      assert.strictEqual(session.state.revision?.version, "2026-07-28")
    })
  )

  it.effect("falls back to initialize when the server does not speak 2026-07-28", () =>
    Effect.gen(function* () {
      const { http, server } = yield* serve({ server: { supportedVersions: ["2025-06-18", "2025-11-25"] } })
      const { session, transport } = yield* connect(http, ["2025-11-25", "2026-07-28"])
      assert.strictEqual(session.state.revision?.version, "2025-11-25")
      assert.isDefined(transport.sessionId())
      assert.strictEqual(server.sessionCount(), 1)
      assert.deepStrictEqual(yield* callEcho(session), { content: [{ type: "text", text: "echo:hi" }] })
    })
  )

  it.effect("closing the client's scope sends DELETE and the server drops the session", () =>
    Effect.gen(function* () {
      const { http, server } = yield* serve()
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* connect(http, ["2025-11-25"])
          assert.strictEqual(server.sessionCount(), 1)
        })
      )
      assert.strictEqual(server.sessionCount(), 0)
    })
  )
})
