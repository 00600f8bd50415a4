/**
 * A `--import` preload for the conformance suite's process. Its mock servers
 * call `listen(0)`, which binds every interface; this binds them to 127.0.0.1
 * instead, so the tests open no port to the network.
 *
 * The hook sits where Node resolves a missing host to the wildcard address
 * (`Server#_listen2`), not on `listen` itself: a `listen` given a host binds
 * asynchronously, and some scenarios read `address()` right after `listen(0)`.
 */
import * as Net from "node:net"

type Listen2 = (
  this: Net.Server,
  address: string | null | undefined,
  port: number,
  addressType: number,
  backlog: number,
  fd: number | undefined,
  flags: number
) => unknown

const proto = Net.Server.prototype as unknown as { _listen2: Listen2 }
const listen2 = proto._listen2

proto._listen2 = function (address, port, addressType, backlog, fd, flags) {
  // No host and no inherited handle: Node would bind the wildcard address.
  if (!address && typeof fd !== "number") return listen2.call(this, "127.0.0.1", port, 4, backlog, fd, flags)
  return listen2.call(this, address, port, addressType, backlog, fd, flags)
}
