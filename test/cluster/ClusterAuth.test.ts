/**
 * `--cluster` with `--auth` (issue 17: the principal a session is bound to is
 * part of its durable state). Two everything-server runners on one SQLite
 * file, protected by a real OpenID provider (oidc-provider on 127.0.0.1),
 * every runner with the same audience. A session opened by one client is
 * served to that client on either runner; another client naming its id gets
 * 404 on both. Once the owner is killed, the other client still gets 404 (and
 * does not reopen the session), the session's own client reopens it on the
 * surviving runner without `initialize`, and it stays bound to it there.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as OidcProvider from "../support/OidcProvider.ts"
import { answer, open, session } from "./sse.ts"
import { fastFailover, kill, startRunners } from "./support.ts"

const tempDatabase = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "mcp-cluster-auth-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => `sqlite:${join(dir, "cluster.db")}`))

// The URL clients reach the cluster at (a load balancer's): the audience of every runner.
const audience = "http://127.0.0.1:9/mcp"
const other = { id: "other-client", secret: "other-client-secret-0123456789abcdef" }

describe("cluster: --auth", () => {
  it.live(
    "a session stays bound to its principal on every runner, also once reopened elsewhere",
    () =>
      Effect.gen(function* () {
        const provider = yield* OidcProvider.startWith({
          acceptResource: (indicator) => indicator === audience,
          extraClients: [other]
        })
        const runners = yield* startRunners(
          2,
          yield* tempDatabase,
          ["--auth", "--auth-issuer", provider.issuer, "--auth-audience", audience],
          { timings: fastFailover }
        )
        const [r0, r1] = runners.map((runner) => runner.url) as [string, string]
        const mine = `Bearer ${yield* provider.token(audience, "notes:read")}`
        const theirs = `Bearer ${yield* provider.token(audience, "notes:read", other)}`

        const s = yield* session(r0, { authorization: mine })
        let next = 100
        const list = (at: string, authorization: string) =>
          Effect.gen(function* () {
            const id = next++
            const opened = yield* open(at, {
              method: "POST",
              headers: { ...s.headers, authorization },
              body: { jsonrpc: "2.0", id, method: "tools/list", params: {} }
            })
            return opened.status === 200
              ? { status: 200, answer: yield* answer(opened, id) }
              : { status: opened.status }
          })
        const served = (result: { readonly status: number; readonly answer?: { readonly result?: unknown } }) =>
          result.status === 200 && result.answer?.result !== undefined

        // Its principal is served on the owner and through the other runner.
        assert.isTrue(served(yield* list(r0, mine)))
        assert.isTrue(served(yield* list(r1, mine)))
        // Another principal naming the session gets 404 on both, and the session goes on.
        assert.strictEqual((yield* list(r0, theirs)).status, 404)
        assert.strictEqual((yield* list(r1, theirs)).status, 404)
        // Bad credentials are refused before the session is looked up.
        assert.strictEqual((yield* list(r1, "Bearer garbage")).status, 401)
        assert.isTrue(served(yield* list(r1, mine)))

        // The owner is lost: its shards move to runner 1 once their locks expire.
        yield* kill(runners[0]!)
        // The other principal's request waits for the move, then finds no session of its own.
        assert.strictEqual((yield* list(r1, theirs)).status, 404)
        // The session's principal reopens it from its durable state (no initialize).
        assert.isTrue(served(yield* list(r1, mine)))
        assert.strictEqual((yield* list(r1, theirs)).status, 404)
        assert.isTrue(served(yield* list(r1, mine)))
        assert.notInclude(runners[1]!.stderr(), mine.slice(7))
      }).pipe(Effect.scoped),
    120_000
  )
})
