/**
 * The `effect-mcp` bin's program: runs the command line and exits with its
 * code (see `ExitCode`). Ctrl-C or SIGTERM interrupts it: a call in flight is
 * cancelled on the server, the connection closed (a stdio server stopped),
 * and the exit code is 130.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Cli from "./Cli.ts"
import * as ExitCode from "./ExitCode.ts"

NodeRuntime.runMain(Cli.run(process.argv.slice(2)).pipe(Effect.provide(NodeServices.layer)), {
  disableErrorReporting: true,
  teardown: (exit, onExit) => {
    if (Exit.isSuccess(exit)) return onExit(typeof exit.value === "number" ? exit.value : ExitCode.Success)
    onExit(Exit.hasInterrupts(exit) ? ExitCode.Interrupted : ExitCode.Protocol)
  }
})
