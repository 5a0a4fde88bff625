/**
 * The shapes shared by detection (what a command would do) and the approval
 * flow (who may let it run). Free of behaviour.
 */

export type RuleCategory =
  | "recursive_delete"
  | "filesystem_destruction"
  | "sql_destruction"
  | "system_file_write"
  | "credential_file_write"
  | "shell_rc_write"
  | "service_control"
  | "power_control"
  | "process_kill"
  | "fork_bomb"
  | "remote_code_execution"
  /** A tool runs a program the model wrote on this machine (execute_code); judged by `gate.checkAction`. */
  | "code_execution"
  /** A plugin's pre_tool_call hook asked for the person's approval before a call (docs/plugins.md). */
  | "plugin_request"
  | "permission_change"
  | "privilege_escalation"
  | "git_history_destruction"
  | "infrastructure_teardown"
  /** Data deleted through an API or a framework: HTTP DELETE, database resets of web frameworks. */
  | "data_deletion"
  /** Credentials, keys or the environment sent off the machine. */
  | "secret_exfiltration"
  /** A firewall, SELinux or AppArmor turned off or flushed. */
  | "security_disable"
  /** Shell history wiped or switched off. */
  | "history_tampering"
  | "unanalysable";

/** One rule that a command matched. */
export interface RuleMatch {
  /** Stable rule id, e.g. `recursive-delete`, `hardline-wipe-root`, `unanalysable`. */
  rule: string;
  /** What the rule means, in words a user reads in an approval prompt. */
  description: string;
  category: RuleCategory;
  /** Never approvable: not by allowlist, yolo, `off` mode or LLM. */
  hardline: boolean;
  /**
   * The normalised command the rule matched, after unwrapping (`sudo env X=1 rm -fr ./a` → `rm -f -r ./a`):
   * program basename, then options in a canonical form, then operands. Approval keys use it, so
   * approving `rm -rf node_modules` never approves `rm -rf ~/src`.
   */
  prefix: string;
  /** Extra detail for the user (which wrapper chain, which payload), optional. */
  detail?: string;
}

export interface Detection {
  /** The command as given. */
  command: string;
  /** False when some part could not be analysed (parse error, dynamic command name, budget); `unanalysable` says why. */
  analysable: boolean;
  unanalysable: string[];
  /** Every rule match across every part of the command (a compound is covered only when every match is). Includes one `unanalysable` match per reason. */
  matches: RuleMatch[];
  /** True when any match is hardline. */
  hardline: boolean;
  /** True when the command needs approval (or is blocked) with the default config on the local backend: any match at all. */
  dangerous: boolean;
}
