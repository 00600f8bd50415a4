/**
 * The command line of `mcp-everything-server`: which transport, and for HTTP
 * the address, session mode and response mode.
 */
export const usage = `usage: mcp-everything-server --stdio
       mcp-everything-server --http [--port <n>] [--host <host>] [--stateless] [--json]`

export interface Stdio {
  readonly mode: "stdio"
}

export interface Http {
  readonly mode: "http"
  readonly port: number
  readonly host: string
  /** Every request served on its own (no `Mcp-Session-Id`). */
  readonly stateless: boolean
  /** Requests answered with one JSON body instead of an SSE stream. */
  readonly json: boolean
}

export type Cli = Stdio | Http

/** Reads the command line; a string is the reason it is wrong. */
export const parse = (argv: ReadonlyArray<string>): Cli | string => {
  let mode: "stdio" | "http" | undefined
  let port = 0
  let host = "127.0.0.1"
  let stateless = false
  let json = false
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    switch (arg) {
      case "--stdio":
      case "--http":
        if (mode !== undefined) return "choose one of --stdio and --http"
        mode = arg === "--stdio" ? "stdio" : "http"
        break
      case "--port": {
        const value = Number(argv[++i])
        if (!Number.isInteger(value) || value < 0 || value > 65535) return "--port needs a number from 0 to 65535"
        port = value
        break
      }
      case "--host": {
        const value = argv[++i]
        if (value === undefined || value === "") return "--host needs a value"
        host = value
        break
      }
      case "--stateless":
        stateless = true
        break
      case "--json":
        json = true
        break
      default:
        return `unknown argument: ${arg}`
    }
  }
  if (mode === undefined) return "choose one of --stdio and --http"
  if (mode === "stdio") {
    return port !== 0 || stateless || json ? "--port, --stateless and --json need --http" : { mode }
  }
  return { mode, port, host, stateless, json }
}
