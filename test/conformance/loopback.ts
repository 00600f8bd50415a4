/**
 * Preloaded into the conformance suite's process (`node --import`): a server
 * that listens without naming a host (the suite's mock servers do) binds
 * 127.0.0.1 instead of every interface, so test runs stay on loopback.
 */
import * as net from "node:net"

const loopback = "127.0.0.1"

const isPort = (value: unknown) =>
  typeof value === "number" || (typeof value === "string" && value !== "" && /^\d+$/.test(value))

/** `listen`'s arguments with a loopback host wherever none was given. */
export const withLoopback = (args: ReadonlyArray<unknown>): Array<unknown> => {
  const [first, ...rest] = args
  if (first === undefined || typeof first === "function") return [0, loopback, ...(first === undefined ? rest : args)]
  if (isPort(first)) return typeof rest[0] === "string" ? [...args] : [first, loopback, ...rest]
  if (typeof first === "object" && first !== null) {
    const options = first as { readonly host?: unknown; readonly path?: unknown; readonly fd?: unknown }
    const bound = options.host !== undefined || options.path !== undefined || options.fd !== undefined
    return bound || "_handle" in options ? [...args] : [{ ...options, host: loopback }, ...rest]
  }
  // A string that is not a port is a pipe path.
  return [...args]
}

const listen = net.Server.prototype.listen
net.Server.prototype.listen = function (this: net.Server, ...args: Array<unknown>) {
  return (listen as (...a: Array<unknown>) => net.Server).apply(this, withLoopback(args))
} as typeof listen
