/**
 * `mibyan check`: what the approval gate's detection sees in a command. The exit
 * status is the verdict, so scripts and hooks can act on it (`mibyan check "$cmd" || …`):
 *
 *   0  safe: runs without approval
 *   1  needs approval (a rule matched, or part of it cannot be analysed)
 *   3  hardline: never allowed, whoever approves
 *   2  usage error (no command, a `--stdin` line that is not a JSON string)
 *
 * `--stdin` exits with the most severe of its lines: 2 if any line is malformed,
 * else 3 if any is hardline, else 1 if any needs approval, else 0.
 */
import { approvalId } from "../../approval/flow/keys.js";
import type { Detection, RuleCategory } from "../../approval/types.js";

export const CHECK_EXIT = { safe: 0, approval: 1, usage: 2, hardline: 3 } as const;

export type CheckVerdict = "safe" | "approval" | "hardline";

/** One match, with the allowlist key that approving it on the local backend adds. */
export interface CheckMatch {
  rule: string;
  description: string;
  category: RuleCategory;
  hardline: boolean;
  /** The normalised command the rule matched: with `rule`, the allowlist key (`approvals.allowlist`). */
  prefix: string;
  /** The id `mibyan approvals revoke` takes for that key on the local backend. */
  id: string;
  detail?: string;
}

/** The documented JSON shape of one checked command. */
export interface CheckReport {
  command: string;
  verdict: CheckVerdict;
  dangerous: boolean;
  hardline: boolean;
  analysable: boolean;
  /** Why parts of the command cannot be analysed (empty when it all can). */
  unanalysable: string[];
  matches: CheckMatch[];
}

export function checkReport(detection: Detection): CheckReport {
  return {
    command: detection.command,
    verdict: detection.hardline ? "hardline" : detection.dangerous ? "approval" : "safe",
    dangerous: detection.dangerous,
    hardline: detection.hardline,
    analysable: detection.analysable,
    unanalysable: [...detection.unanalysable],
    matches: detection.matches.map((match) => {
      const out: CheckMatch = {
        rule: match.rule,
        description: match.description,
        category: match.category,
        hardline: match.hardline,
        prefix: match.prefix,
        id: approvalId({ rule: match.rule, prefix: match.prefix, backend: "local" }),
      };
      if (match.detail) out.detail = match.detail;
      return out;
    }),
  };
}

export function renderCheck(report: CheckReport): string {
  const verdict = report.verdict === "hardline" ? "blocked (hardline: never allowed)" : report.verdict === "approval" ? "needs approval" : "safe";
  const lines = [`${verdict}: ${report.command}`];
  for (const match of report.matches) lines.push(`  - [${match.rule}] ${match.description}${match.prefix ? ` (key: ${match.prefix})` : ""}`);
  return `${lines.join("\n")}\n`;
}

function exitOf(verdict: CheckVerdict): number {
  return CHECK_EXIT[verdict];
}

/** `mibyan check COMMAND`: resolves to the exit status (the verdict). */
export async function checkOne(command: string, json: boolean): Promise<number> {
  const { detectAsync } = await import("../../approval/detection/index.js");
  const report = checkReport(await detectAsync(command));
  process.stdout.write(json ? `${JSON.stringify(report)}\n` : renderCheck(report));
  return exitOf(report.verdict);
}

/**
 * `mibyan check --stdin`: one command per input line, each a JSON string (so
 * multi-line commands fit); one JSON object per output line, in input order.
 * A line that is not a JSON string gets `{"line":N,"error":...}` and makes the
 * exit status 2; the other lines are still checked.
 */
export async function checkStdin(input: NodeJS.ReadableStream = process.stdin): Promise<number> {
  const [{ detectAsync }, { createInterface }] = await Promise.all([import("../../approval/detection/index.js"), import("node:readline")]);
  let status = 0;
  let malformed = false;
  let lineNumber = 0;
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    lineNumber++;
    if (line.trim() === "") continue;
    let command: unknown;
    try {
      command = JSON.parse(line);
    } catch (thrown) {
      command = thrown;
    }
    if (typeof command !== "string") {
      malformed = true;
      const why = command instanceof Error ? command.message : `expected a JSON string, got ${command === null ? "null" : typeof command}`;
      process.stdout.write(`${JSON.stringify({ line: lineNumber, error: `not a JSON string: ${why}` })}\n`);
      continue;
    }
    const report = checkReport(await detectAsync(command));
    process.stdout.write(`${JSON.stringify(report)}\n`);
    // 3 (hardline) outranks 1 (approval), which outranks 0.
    status = Math.max(status, exitOf(report.verdict));
  }
  return malformed ? CHECK_EXIT.usage : status;
}
