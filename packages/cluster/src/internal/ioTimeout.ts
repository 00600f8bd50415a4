/**
 * A timeout on a connection's handshake that a busy process does not mistake
 * for a silent peer. Node runs a turn's timers before it reads that turn's
 * I/O: a process kept busy past the timeout (a loaded machine, a long
 * collection) would run the timeout first and drop the connect or the
 * greeting that came meanwhile. The check runs after the I/O is read
 * (`setImmediate`), and acts only if what was awaited is still missing.
 */

/** Calls `expired` once `ms` passed and this turn's I/O was read, unless `cleared` by then. */
export const ioTimeout = (ms: number, expired: () => void): { readonly clear: () => void } => {
  let immediate: ReturnType<typeof setImmediate> | undefined
  const timer = setTimeout(() => {
    immediate = setImmediate(expired)
  }, ms)
  return {
    clear: () => {
      clearTimeout(timer)
      if (immediate !== undefined) clearImmediate(immediate)
    }
  }
}
