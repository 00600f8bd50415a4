/**
 * The stdio floor (W2, W5), started the way every stdio server of the
 * benchmarks is: Node's on-disk compile cache on before any module loads
 * (see `effectStdio.ts`).
 */
import * as Module from "node:module"

Module.enableCompileCache()
await import("./floorStdioServer.ts")
