import { readFileSync } from "node:fs";
import type { Runtime } from "../boot.js";
import { handleFunctionCallDetailed } from "../../dispatch/handle-function-call.js";
import { startSpinner } from "../spinner.js";

export interface CallCommandOptions {
  session?: string;
  task?: string;
}

/** Runs one call through the full handleFunctionCall path; resolves to the process exit status. */
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
    });
    spinner.stop();
    process.stdout.write(outcome.content.endsWith("\n") ? outcome.content : `${outcome.content}\n`);
    return outcome.isError ? 1 : 0;
  } finally {
    spinner.stop();
    process.removeListener("SIGINT", onInterrupt);
  }
}
