/**
 * Actions of tools that run code the model wrote, as a whole, outside any shell command.
 * Shell detection never reports their finding: the tool puts the action to the gate itself
 * (`gate.checkAction`), with this rule and a fixed prefix, so the action gets the gate's
 * every step (deny rules, mode and yolo, allowlist, smart review, surfaces, logging).
 */
import type { Rule } from "./types.js";

/** The finding of these rules; only a tool's own `checkAction` stands for it. */
export const CODE_EXECUTION_FINDING = "code-execution-tool";

/** `execute_code`: a JavaScript program in a `node` process on this machine, whatever the terminal backend. */
export const EXECUTE_CODE_RULE: Rule = {
  id: "execute-code",
  description:
    "Runs a JavaScript program the model wrote (execute_code) in a node process on this machine, as your user: it can read and change your files, start programs and use the network.",
  category: "code_execution",
  hardline: false,
  match: { kind: "finding", finding: CODE_EXECUTION_FINDING },
};

export const CODE_EXECUTION_RULES: readonly Rule[] = [EXECUTE_CODE_RULE];
