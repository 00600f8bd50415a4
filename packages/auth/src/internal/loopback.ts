/** Whether a URL's hostname is this machine's: `localhost`, `127.x.x.x` or `[::1]` (where only a local process listens). */
export const isLoopbackHost = (hostname: string): boolean =>
  hostname === "localhost" || hostname === "[::1]" || /^127(?:\.\d{1,3}){3}$/.test(hostname)
