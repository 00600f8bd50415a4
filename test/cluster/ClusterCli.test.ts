/**
 * The everything server's `--cluster` flags: the database URL, the runner's
 * port (required: it is the runner's identity) and host (as far as the
 * runner's options), and the combinations refused.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cli from "@effect-mcp/everything-server/Cli"
import * as Cluster from "../../apps/everything-server/src/internal/cluster.ts"

describe("mcp-everything-server --cluster", () => {
  it("reads the database URL and the runner's address", () => {
    const cli = Cli.parse(["--http", "--cluster", "sqlite:/tmp/cluster.db", "--runner-port", "34431"])
    assert.deepInclude(cli, {
      mode: "http",
      cluster: { storage: "sqlite:/tmp/cluster.db", runnerHost: "127.0.0.1", runnerPort: 34431 }
    })
    const pg = Cli.parse([
      "--http",
      "--cluster",
      "postgres://mcp@db/mcp",
      "--runner-port",
      "1",
      "--runner-host",
      "10.0.0.7"
    ])
    assert.deepInclude(pg, { cluster: { storage: "postgres://mcp@db/mcp", runnerHost: "10.0.0.7", runnerPort: 1 } })
    assert.isUndefined((Cli.parse(["--http"]) as Cli.Http).cluster)
    // A clustered server may authenticate (the principal is part of each session's durable state).
    const protectedCluster = Cli.parse([
      "--http",
      "--auth",
      "--auth-issuer",
      "http://127.0.0.1:1",
      "--cluster",
      "sqlite:/tmp/c.db",
      "--runner-port",
      "2"
    ]) as Cli.Http
    assert.strictEqual(protectedCluster.auth?.issuer, "http://127.0.0.1:1")
    assert.strictEqual(protectedCluster.cluster?.runnerPort, 2)
  })

  it("refuses what cannot run", () => {
    assert.match(String(Cli.parse(["--http", "--cluster", "sqlite:/tmp/c.db"])), /--runner-port/)
    assert.match(String(Cli.parse(["--http", "--cluster", "mysql://x", "--runner-port", "1"])), /database URL/)
    assert.match(String(Cli.parse(["--http", "--runner-port", "1"])), /need --cluster/)
    assert.match(String(Cli.parse(["--http", "--runner-host", "10.0.0.5"])), /need --cluster/)
    // The direct hop is the only way between runners: there is no flag to turn it off.
    assert.match(String(Cli.parse(["--http", "--no-direct-hop"])), /unknown/i)
    assert.match(String(Cli.parse(["--http", "--cluster", "sqlite:x", "--runner-port", "0"])), /1 to 65535/)
    assert.match(String(Cli.parse(["--stdio", "--cluster", "sqlite:x", "--runner-port", "1"])), /need --http/)
    assert.match(
      String(Cli.parse(["--http", "--stateless", "--cluster", "sqlite:x", "--runner-port", "1"])),
      /cannot be combined/
    )
    // Tasks live in the cluster's database, where every runner reads them.
    assert.match(
      String(Cli.parse(["--http", "--cluster", "sqlite:x", "--runner-port", "1", "--task-store", "sqlite:t"])),
      /--task-store cannot be combined/
    )
    assert.deepInclude(
      Cli.parse(["--http", "--cluster", "sqlite:x", "--runner-port", "1", "--task-heartbeat", "500"]),
      { taskHeartbeatMs: 500 }
    )
  })

  it("gives NodeClusteredServer the runner's address and the endpoint's", () => {
    const cli = Cli.parse([
      "--http",
      "--host",
      "0.0.0.0",
      "--cluster",
      "sqlite:/tmp/c.db",
      "--runner-host",
      "10.0.0.5",
      "--runner-port",
      "3"
    ]) as Cli.Http
    assert.deepInclude(Cluster.optionsOf(cli), {
      storage: "sqlite:/tmp/c.db",
      host: "0.0.0.0",
      runnerHost: "10.0.0.5",
      runnerPort: 3
    })
    assert.notInclude(Cli.usage, "--no-direct-hop")
  })

  it("says in --help where a request goes between runners: the owner's hop listener, as docs/deployment.md does", () => {
    const text = Cli.usage.replace(/\s+/g, " ")
    assert.include(text, "the owner's hop listener: a TCP port picked at start on the interface of the endpoint")
    assert.include(text, "Runners must reach each other's hop listener and --runner-port")
    assert.notInclude(text, "straight to the owner's HTTP endpoint")
    for (const line of Cli.usage.split("\n")) assert.isAtMost(line.length, 100, line)
  })
})
