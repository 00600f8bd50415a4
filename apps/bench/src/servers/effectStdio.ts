/**
 * The effect-mcp echo server over this process's stdin/stdout (W2, W5).
 *
 * A stdio server is a fresh process for every session, so its start is
 * mostly module loading (effect alone is some 200 modules). Node's on-disk
 * compile cache keeps the compiled code (and the stripped TypeScript) between
 * starts; it has to be on before the modules load, so the server itself is
 * imported dynamically, after the call. The first start fills the cache.
 */
import * as Module from "node:module"

Module.enableCompileCache()
await import("./effectStdioServer.ts")
