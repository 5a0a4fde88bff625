/**
 * The rule set: data only. The detection engine indexes it once by program
 * name, write class and finding, and evaluates it; it holds no rules itself.
 */
import { CODE_EXECUTION_RULES } from "./code-execution.js";
import { EXECUTION_RULES } from "./execution.js";
import { FILESYSTEM_RULES } from "./filesystem.js";
import { SECURITY_RULES } from "./security.js";
import { SQL_RULES } from "./sql.js";
import { SYSTEM_RULES } from "./system.js";
import type { Rule } from "./types.js";
import { VCS_INFRA_RULES } from "./vcs-infra.js";

export type { CommandMatcher, FindingMatcher, Matcher, OperandTest, OptionValueTest, PathClass, Rule, ValueTest, WriteMatcher } from "./types.js";
export { EXECUTION_RULES } from "./execution.js";
export { FILESYSTEM_RULES } from "./filesystem.js";
export { SECURITY_RULES } from "./security.js";
export { SQL_RULES } from "./sql.js";
export { SYSTEM_RULES } from "./system.js";
export { VCS_INFRA_RULES } from "./vcs-infra.js";

/** Every rule, in the order matches are reported. */
export const RULES: readonly Rule[] = [
  ...FILESYSTEM_RULES,
  ...SYSTEM_RULES,
  ...SQL_RULES,
  ...EXECUTION_RULES,
  ...CODE_EXECUTION_RULES,
  ...VCS_INFRA_RULES,
  ...SECURITY_RULES,
];

/**
 * Findings the engine's analysers report (a `finding` matcher names one).
 * Listed so that a rule naming an unknown finding is caught by a test.
 */
export const FINDINGS: Readonly<Record<string, string>> = {
  "network-to-interpreter": "a shell or interpreter runs text that came from the network (pipe, process or command substitution)",
  "decode-to-interpreter": "a shell or interpreter runs text that was decoded or transformed first",
  "payload-network-exec": "an interpreter payload evaluates code fetched from the network",
  "payload-obfuscated-exec": "an interpreter payload evaluates decoded code",
  "fork-bomb": "a function that calls itself in a pipeline or in the background, or a fork loop in a payload",
  "root-shell": "sudo/doas/su/pkexec open an interactive root shell",
  "sed-exec": "a sed script runs a command (the e command or the e flag of s)",
  "awk-exec": "an awk program runs a command (system(), a pipe to or from a command)",
  "sql-drop": "an SQL DROP statement or ALTER TABLE … DROP",
  "sql-truncate": "an SQL TRUNCATE statement",
  "sql-delete-without-where": "an SQL DELETE without a (non-trivial) WHERE clause",
  "sql-update-without-where": "an SQL UPDATE without a (non-trivial) WHERE clause",
  "sql-shell-escape": "a database client meta-command that runs a shell command (\\!, .system, .shell)",
  "nosql-wipe": "a MongoDB dropDatabase()/drop()/deleteMany({})/remove({})",
  "exec-env": "an environment variable that injects code (LD_PRELOAD, BASH_ENV, ...)",
  "secret-to-network": "credentials, keys, a .env file or the environment flow into a program that sends them to another machine",
  "history-disable": "the shell history is switched off (HISTFILE=/dev/null, unset HISTFILE, HISTSIZE=0, set +o history)",
  unanalysable: "part of the command cannot be analysed",
  "code-execution-tool": "a tool runs a program the model wrote (execute_code); the tool reports it through gate.checkAction, shell detection never does",
};
