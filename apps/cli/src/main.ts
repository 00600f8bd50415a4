/**
 * The `effect-mcp` bin's program: runs the command line and exits with its
 * code (see `ExitCode`). Ctrl-C or SIGTERM interrupts it: a call in flight is
 * cancelled on the server, the connection closed (a stdio server stopped),
 * and the exit code is 130. With an OTLP endpoint in the standard
 * OpenTelemetry variables (`OTEL_EXPORTER_OTLP_ENDPOINT`...) the run's
 * client spans and metrics are exported (`NodeTelemetry`), flushed before exit.
 */
import * as NodeTelemetry from "@effect-mcp/platform-node/NodeTelemetry"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Cli from "./Cli.ts"
import * as ExitCode from "./ExitCode.ts"
import * as Failure from "./internal/failure.ts"
import * as TerminalText from "./internal/terminalText.ts"

const telemetry = NodeTelemetry.layer({ serviceName: "effect-mcp", serviceVersion: Cli.version })

// effect's own report of a failure is a pretty-printed cause with stacks: `Cli.run` says each failure of the
// command in one line instead, and the teardown says what failed around it (its telemetry, say) the same way.
NodeRuntime.runMain(Cli.run(process.argv.slice(2)).pipe(Effect.provide([telemetry, NodeServices.layer])), {
  disableErrorReporting: true,
  teardown: (exit, onExit) => {
    if (Exit.isSuccess(exit)) return onExit(typeof exit.value === "number" ? exit.value : ExitCode.Success)
    if (Exit.hasInterrupts(exit)) return onExit(ExitCode.Interrupted)
    const failure = Failure.unexpected(Cause.squash(exit.cause))
    if (failure.message !== "") process.stderr.write(`effect-mcp: ${TerminalText.line(failure.message)}\n`)
    onExit(failure.code)
  }
})
