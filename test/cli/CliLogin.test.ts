/**
 * `effect-mcp` logging in to a protected server (the everything server with
 * `--auth`, its tokens issued by oidc-provider on 127.0.0.1): the first run
 * prints the authorization URL on stderr and waits for the browser's redirect
 * on its loopback port (the browser played by the headless user agent of the
 * auth tests), the tokens land in the token file, and the next run uses them
 * without a login. `--no-login` refuses instead of logging in.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Headless from "../auth/headlessUserAgent.ts"
import * as OidcProvider from "../support/OidcProvider.ts"
import * as ServerProcess from "../support/ServerProcess.ts"

const cliBin = fileURLToPath(new URL("../../apps/cli/bin/effect-mcp.js", import.meta.url))

const spawnCli = (args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child: ChildProcess = spawn(ServerProcess.node, [cliBin, ...args], {
        cwd: ServerProcess.root,
        env: process.env,
        stdio: ["ignore", "pipe", "pipe"]
      })
      const stdout = ServerProcess.record(child.stdout, "the CLI's stdout")
      const stderr = ServerProcess.record(child.stderr, "the CLI's stderr")
      const exited = Effect.callback<number | null>((resume) => {
        if (child.exitCode !== null) return resume(Effect.succeed(child.exitCode))
        child.once("exit", (code) => resume(Effect.succeed(code)))
      }).pipe(Effect.timeout("30 seconds"))
      return { child, stdout, stderr, exited }
    }),
    ({ child }) => ServerProcess.terminate(child)
  )

describe("effect-mcp login", () => {
  it.live(
    "logs in on a 401 through the loopback redirect, keeps the tokens in the file, and reuses them",
    () =>
      Effect.gen(function* () {
        const provider = yield* OidcProvider.startWith({
          registration: true,
          acceptResource: (indicator) => indicator.startsWith("http://127.0.0.1:")
        })
        const server = yield* ServerProcess.spawnHttp([
          "--auth",
          "--auth-issuer",
          provider.issuer,
          "--auth-scopes",
          "notes:read"
        ])
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-mcp-login-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
        const tokenFile = path.join(dir, "tokens.json")

        const refused = yield* spawnCli([
          "call",
          "--no-login",
          "--token-file",
          tokenFile,
          server.url,
          "test_simple_text"
        ])
        assert.strictEqual(yield* refused.exited, 3, refused.stderr())
        assert.match(refused.stderr(), /^effect-mcp: cannot connect: .*\n$/)

        const first = yield* spawnCli(["call", "--token-file", tokenFile, server.url, "test_simple_text"])
        const printed = yield* ServerProcess.waitFor(first.stderr, /^\s+(http:\/\/127\.0\.0\.1:\d+\/\S+)$/m)
        const authorizationUrl = new URL(printed[1]!)
        const redirectUri = authorizationUrl.searchParams.get("redirect_uri")!
        assert.match(redirectUri, /^http:\/\/127\.0\.0\.1:\d+\/callback$/)
        // The browser: the provider's login and consent, then the redirect to the CLI's loopback listener.
        const callback = yield* Headless.make(redirectUri).userAgent.authorize(authorizationUrl)
        yield* Effect.promise(() => fetch(callback).then((response) => response.text()))
        assert.strictEqual(yield* first.exited, 0, first.stderr())
        assert.strictEqual(first.stdout(), "This is a simple text response for testing.\n")
        assert.isTrue(fs.existsSync(tokenFile))
        const stored = JSON.parse(fs.readFileSync(tokenFile, "utf8")) as {
          servers: Record<string, { accessToken: string }>
        }
        const tokens = Object.values(stored.servers)
        assert.strictEqual(tokens.length, 1)
        assert.notInclude(first.stderr() + first.stdout(), tokens[0]!.accessToken) // the token is never printed

        const second = yield* spawnCli(["call", "--token-file", tokenFile, server.url, "test_simple_text"])
        assert.strictEqual(yield* second.exited, 0, second.stderr())
        assert.strictEqual(second.stdout(), "This is a simple text response for testing.\n")
        assert.notInclude(second.stderr(), "Open this URL")
      }).pipe(Effect.scoped),
    120_000
  )
})
