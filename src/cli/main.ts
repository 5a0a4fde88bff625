import { endMcpServersOnSignals } from "./exit-signals.js";
import { fastPath } from "./fast-path.js";
import { describeThrown } from "../util/text.js";

/**
 * Runs the `mibyan` command line. The most frequent command lines run without commander
 * (fast-path.ts); the rest, help and usage errors go through the commander program (program.ts).
 * Sets `process.exitCode`; never throws.
 */
export async function main(argv: readonly string[] = process.argv): Promise<void> {
  endMcpServersOnSignals();
  const fast = fastPath(argv.slice(2));
  if (fast === null) {
    const { runProgram } = await import("./program.js");
    return runProgram(argv);
  }
  try {
    await fast();
  } catch (thrown) {
    // As program.ts reports an error of an action (the fast path has no usage errors of its own).
    process.stderr.write(`mibyan: ${thrown instanceof Error && thrown.name === "ConfigError" ? thrown.message : describeThrown(thrown)}\n`);
    process.exitCode = 2;
  }
}
