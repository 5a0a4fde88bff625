/**
 * Command safety detection: what a shell command would do, judged on the
 * parsed command (src/shell/) against the rule set (src/approval/rules/).
 * See docs/command-safety.md.
 *
 *   await initShellParser();            // once per process
 *   const d = detect("sudo rm -rf /");  // d.hardline === true
 */
import { initShellParser } from "../../shell/index.js";
import type { Detection } from "../types.js";
import { analyse, type DetectOptions } from "./engine.js";

export type { DetectOptions } from "./engine.js";
export type { Arg, ParsedArgs } from "./model.js";
export { PROGRAM_OPTIONS, type OptionSpec, type OptionStyle } from "./options.js";
export { canonicalPrefix, parseArgs } from "./parse-args.js";
export { classifyPath, normalisePath, PATH_BITS } from "./paths.js";
export { RULES_BY_ID } from "./rule-index.js";
export { WRAPPERS, type WrapperSpec } from "./wrappers.js";

/**
 * Analyses a shell command. Synchronous; the bash parser must be initialised
 * (`initShellParser()`), otherwise this throws. Never throws on any command text:
 * what cannot be analysed is reported as an `unanalysable` match.
 */
export function detect(command: string, options?: DetectOptions): Detection {
  return analyse(command, options);
}

/** `initShellParser()`, then `detect()`. */
export async function detectAsync(command: string, options?: DetectOptions): Promise<Detection> {
  await initShellParser();
  return analyse(command, options);
}
