#!/usr/bin/env node
// The shipped server's launcher (the package's `bin`): turns on Node's compile cache, then loads the bundle.
// The cache keeps the compiled code on disk, so every start after the first skips compiling it. It must be on
// before the bundle loads, which is why the bundle is imported dynamically here and not by a static import.
// NODE_COMPILE_CACHE picks the cache's directory (default: a folder in the OS temp directory),
// NODE_DISABLE_COMPILE_CACHE=1 turns it off; Node below 22.1 has no compile cache and just starts.
import * as Module from "node:module"

Module.enableCompileCache?.()
await import("../dist/server.mjs")
