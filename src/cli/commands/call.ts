import { readFileSync } from "node:fs";
import type { Runtime } from "../boot.js";
import { handleFunctionCallDetailed } from "../../dispatch/handle-function-call.js";
import { startSpinner } from "../spinner.js";

export interface CallCommandOptions {
  session?: string;
  task?: string;
}

/**
 * Runs one call through the full handleFunctionCall path; resolves to the process exit status:
 * 0 success, 1 an error result of the tool, 2 a tool name nothing is registered under (a usage
 * error, like the CLI's others: the model-facing result, with close matches, still goes to stdout,
 * and the same message to stderr).
 */
export async function runCallCommand(runtime: Runtime, tool: string, rawArgs: string | undefined, options: CallCommandOptions): Promise<number> {
  const args = rawArgs === "-" ? readFileSync(0, "utf8") : (rawArgs ?? "{}");
  const controller = new AbortController();
  const onInterrupt = (): void => controller.abort(new Error("interrupted (Ctrl-C)"));
  process.once("SIGINT", onInterrupt);
  const spinner = startSpinner(runtime.registry.get(tool)?.emoji ?? "🔧", tool);
  try {
    const outcome = await handleFunctionCallDetailed(tool, args, {
      registry: runtime.registry,
      sessionId: options.session,
      taskId: options.task,
      signal: controller.signal,
      surface: "cli",
    });
    spinner.stop();
    process.stdout.write(outcome.content.endsWith("\n") ? outcome.content : `${outcome.content}\n`);
    if (outcome.result.error?.kind === "unknown_tool") {
      process.stderr.write(`mibyan: ${outcome.result.error.message}\n`);
      return 2;
    }
    return outcome.isError ? 1 : 0;
  } finally {
    spinner.stop();
    process.removeListener("SIGINT", onInterrupt);
  }
}
