/**
 * A stdio client transport to a Node script run as a child process (from the
 * repository root), whose stderr is kept for assertions: the interop tests
 * that drive an official SDK server over stdio watch what it prints.
 */
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import * as Effect from "effect/Effect"
import { makeRecorder, node, root, type Watched } from "./ServerProcess.ts"

/**
 * The transport Layer (the process lives as long as the Layer's scope) and the stderr written so far
 * (a {@link Watched}: `ServerProcess.waitFor(stderr, pattern)` wakes on each write).
 */
export const stdioChild = (args: ReadonlyArray<string>) => {
  const stderr = makeRecorder()
  const decoder = new TextDecoder()
  const layer = NodeStdio.layerClient({
    command: node,
    args: [...args],
    cwd: root,
    stderr: (chunk) =>
      Effect.sync(() => {
        stderr.append(decoder.decode(chunk, { stream: true }))
      })
  })
  return { layer, stderr: stderr as Watched }
}
