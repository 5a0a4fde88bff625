/**
 * Runs one shell command on the local machine and collects its output.
 *
 * The command runs under `bash -c` (no login shell, no rc files) in a process
 * group of its own, supervised by `spawnGroup`: stdin closed, stderr merged
 * into stdout, output capped, the whole group killed on timeout or abort.
 * Background jobs (`sleep 100 &`) are not killed when the command itself
 * finishes; the result only stops waiting for their output after a short drain.
 *
 * This is the stateless runner: every call is a fresh shell in `options.cwd`.
 * The `terminal` tool runs commands through per-task environments instead
 * (src/environments/: `LocalEnvironment` and the other backends behind the
 * `Environment` interface), which keep the working directory and exported
 * variables between calls. `runLocal` stays for callers that want one
 * isolated command, and as the `runner` option of `createTerminalHandler`.
 */

import { spawnGroup } from "./process-group.js";
import { ABORT_EXIT_CODE, type ProcessGroupOptions, type ProcessGroupResult } from "./process-group-types.js";

export { ABORT_EXIT_CODE, DEFAULT_KILL_GRACE_MS, DEFAULT_PIPE_DRAIN_MS, TIMEOUT_EXIT_CODE } from "./process-group-types.js";

export type RunLocalOptions = ProcessGroupOptions;
export type RunResult = ProcessGroupResult;

/** A stateless command runner (`runLocal`'s signature); backends implement `Environment` instead. */
export type CommandRunner = (command: string, options: RunLocalOptions) => Promise<RunResult>;

export async function runLocal(command: string, options: RunLocalOptions): Promise<RunResult> {
  if (options.signal?.aborted) {
    return { output: "", exitCode: ABORT_EXIT_CODE, timedOut: false, aborted: true, truncated: false, totalChars: 0, durationMs: 0 };
  }
  // Passing the script as an argument of `bash -c` rather than splicing it into the
  // launcher keeps it byte-for-byte unchanged (line numbers in error messages stay
  // right), and `sh` does not source `$BASH_ENV` a second time as an outer bash would.
  const group = spawnGroup(["bash", "-c", command, "bash"], options);
  try {
    return await group.result;
  } catch (err) {
    const where = options.cwd !== undefined ? ` (cwd: ${options.cwd})` : "";
    throw new Error(`Failed to start command${where}: ${(err as Error).message}`, { cause: err });
  }
}
