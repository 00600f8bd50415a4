import { spawnSync } from "node:child_process"
import { assert, describe, it } from "@effect/vitest"
import * as Cli from "@effect-mcp/everything-server/Cli"
import * as Effect from "effect/Effect"
import * as ServerProcess from "../support/ServerProcess.ts"

describe("mcp-everything-server command line", () => {
  it.effect("reads the transport and the HTTP options", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(Cli.parse(["--stdio"]), { mode: "stdio" })
      assert.deepStrictEqual(Cli.parse(["--http"]), {
        mode: "http",
        port: 0,
        host: "127.0.0.1",
        stateless: false,
        json: false
      })
      assert.deepStrictEqual(Cli.parse(["--http", "--port", "3000", "--stateless", "--json", "--host", "localhost"]), {
        mode: "http",
        port: 3000,
        host: "localhost",
        stateless: true,
        json: true
      })
    })
  )

  it.effect("reads the event store and the request-state keys (repeatable or comma lists), never quoting a key", () =>
    Effect.sync(() => {
      const k1 = "k".repeat(32)
      const k2 = "l".repeat(32)
      const k3 = "m".repeat(32)
      assert.deepStrictEqual(
        Cli.parse([
          "--http",
          "--event-store",
          "sqlite:/tmp/events.db",
          "--request-state-key",
          k1,
          "--request-state-key",
          ` ${k2} ,${k3}`
        ]),
        {
          mode: "http",
          port: 0,
          host: "127.0.0.1",
          stateless: false,
          json: false,
          eventStore: "sqlite:/tmp/events.db",
          requestStateKeys: [k1, k2, k3]
        }
      )
      assert.include(Cli.parse(["--http", "--event-store", "postgres://db/x"]) as object, {
        eventStore: "postgres://db/x"
      })
      assert.include(
        Cli.parse(["--http", "--event-store", "mysql://db"]) as string,
        "--event-store needs a database URL"
      )
      assert.include(Cli.parse(["--http", "--event-store", "sqlite:"]) as string, "--event-store needs")
      const refused = Cli.parse(["--http", "--request-state-key", "secret-value,"]) as string
      assert.include(refused, "--request-state-key needs a key")
      assert.notInclude(refused, "secret-value")
      // Over stdio too: a gateway's replicas each run their own stdio child, which must open the others' rounds.
      assert.deepStrictEqual(Cli.parse(["--stdio", "--request-state-key", `${k1},${k2}`]), {
        mode: "stdio",
        requestStateKeys: [k1, k2]
      })
      assert.deepStrictEqual(Cli.parse(["--stdio"]), { mode: "stdio" })
      assert.include(Cli.parse(["--stdio", "--event-store", "sqlite:/tmp/e.db"]) as string, "need --http")
      assert.include(Cli.usage, "--event-store <sqlite:file|postgres://...>")
      assert.include(Cli.usage, "--request-state-key <key>")
    })
  )

  it.effect("reads the limits, the allowed names and the opt-out", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(
        Cli.parse([
          "--http",
          "--host",
          "0.0.0.0",
          "--allowed-host",
          "mcp.example.com",
          "--allowed-host",
          "mcp.internal",
          "--allowed-origin",
          "https://app.example.com",
          "--max-sessions",
          "500",
          "--max-sessions-per-client",
          "20",
          "--session-idle-timeout",
          "600",
          "--write-timeout",
          "5",
          "--keepalive",
          "2.5"
        ]),
        {
          mode: "http",
          port: 0,
          host: "0.0.0.0",
          stateless: false,
          json: false,
          allowedHosts: ["mcp.example.com", "mcp.internal"],
          allowedOrigins: ["https://app.example.com"],
          maxSessions: 500,
          maxSessionsPerClient: 20,
          sessionIdleTimeoutSeconds: 600,
          writeTimeoutSeconds: 5,
          keepaliveSeconds: 2.5
        }
      )
      assert.deepStrictEqual(Cli.parse(["--http", "--no-dns-rebinding-protection"]), {
        mode: "http",
        port: 0,
        host: "127.0.0.1",
        stateless: false,
        json: false,
        dnsRebindingProtection: false
      })
    })
  )

  it.effect("explains what is wrong", () =>
    Effect.sync(() => {
      assert.strictEqual(Cli.parse([]), "choose one of --stdio and --http")
      assert.strictEqual(Cli.parse(["--stdio", "--http"]), "choose one of --stdio and --http")
      assert.strictEqual(Cli.parse(["--http", "--port", "70000"]), "--port needs a number from 0 to 65535")
      assert.strictEqual(Cli.parse(["--http", "--port"]), "--port needs a number from 0 to 65535")
      assert.strictEqual(
        Cli.parse(["--stdio", "--json"]),
        "HTTP options (--port, --stateless, --json, limits...) need --http"
      )
      assert.strictEqual(
        Cli.parse(["--stdio", "--max-sessions", "5"]),
        "HTTP options (--port, --stateless, --json, limits...) need --http"
      )
      assert.strictEqual(Cli.parse(["--http", "--max-sessions", "0"]), "--max-sessions needs a positive number")
      assert.strictEqual(
        Cli.parse(["--http", "--max-sessions-per-client", "2.5"]),
        "--max-sessions-per-client needs a whole number"
      )
      assert.strictEqual(Cli.parse(["--http", "--write-timeout"]), "--write-timeout needs a positive number")
      assert.strictEqual(Cli.parse(["--http", "--allowed-host"]), "--allowed-host needs a value")
      assert.strictEqual(Cli.parse(["--verbose"]), "unknown argument: --verbose")
    })
  )

  it.effect("reads the OAuth protection (--auth and its flags)", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(
        Cli.parse([
          "--http",
          "--auth",
          "--auth-issuer",
          "https://auth.example.com",
          "--auth-audience",
          "https://mcp.example.com/mcp",
          "--auth-scopes",
          "notes:read,notes:write",
          "--auth-tool-scope",
          "echo=notes:read",
          "--auth-tool-scope",
          "echo=notes:write"
        ]),
        {
          mode: "http",
          port: 0,
          host: "127.0.0.1",
          stateless: false,
          json: false,
          auth: {
            issuer: "https://auth.example.com",
            audience: "https://mcp.example.com/mcp",
            scopes: ["notes:read", "notes:write"],
            toolScopes: { echo: ["notes:read", "notes:write"] }
          }
        }
      )
      assert.deepStrictEqual(Cli.parse(["--help"]), { mode: "help" })
      assert.strictEqual(Cli.parse(["--http", "--auth"]), "--auth needs --auth-issuer <url>")
      assert.strictEqual(Cli.parse(["--http", "--auth", "--auth-issuer", "nope"]), "--auth-issuer needs an http(s) URL")
      assert.strictEqual(
        Cli.parse(["--http", "--auth-issuer", "https://auth.example.com"]),
        "--auth-issuer, --auth-audience, --auth-scopes and --auth-tool-scope need --auth"
      )
      assert.strictEqual(
        Cli.parse(["--http", "--auth", "--auth-issuer", "https://a.example", "--auth-tool-scope", "echo"]),
        "--auth-tool-scope needs <tool>=<scope>"
      )
      assert.strictEqual(
        Cli.parse(["--stdio", "--auth", "--auth-issuer", "https://a.example"]),
        "HTTP options (--port, --stateless, --json, limits...) need --http"
      )
    })
  )

  it.live("--help lists the options, --auth among them", () =>
    Effect.sync(() => {
      const run = spawnSync(ServerProcess.node, [ServerProcess.everythingBin, "--help"], {
        encoding: "utf8",
        timeout: 15_000
      })
      assert.strictEqual(run.status, 0)
      assert.include(run.stdout, "--auth --auth-issuer <url> [--auth-audience <url>] [--auth-scopes <a,b>]")
    })
  )

  it.live("the bin exits with status 2 and the usage on a bad command line", () =>
    Effect.sync(() => {
      const run = spawnSync(ServerProcess.node, [ServerProcess.everythingBin, "--bogus"], {
        encoding: "utf8",
        timeout: 15_000
      })
      assert.strictEqual(run.status, 2)
      assert.strictEqual(run.stdout, "")
      assert.include(run.stderr, "unknown argument: --bogus")
      assert.include(run.stderr, "usage: mcp-everything-server --stdio")
    })
  )
})
