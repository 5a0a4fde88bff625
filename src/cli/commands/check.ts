import { createInterface } from "node:readline";
import type { Detection } from "../../approval/types.js";

/** The documented JSON shape of one checked command. */
export interface CheckReport {
  command: string;
  dangerous: boolean;
  hardline: boolean;
  analysable: boolean;
  matches: { rule: string; description: string }[];
}

export function checkReport(detection: Detection): CheckReport {
  return {
    command: detection.command,
    dangerous: detection.dangerous,
    hardline: detection.hardline,
    analysable: detection.analysable,
    matches: detection.matches.map((match) => ({ rule: match.rule, description: match.description })),
  };
}

export function renderCheck(report: CheckReport): string {
  const verdict = report.hardline
    ? "blocked (hardline: never allowed)"
    : report.dangerous
      ? "needs approval"
      : "safe";
  const lines = [`${verdict}: ${report.command}`];
  for (const match of report.matches) lines.push(`  - [${match.rule}] ${match.description}`);
  return `${lines.join("\n")}\n`;
}

/** `mibyan check COMMAND`: resolves to the exit status. */
export async function checkOne(command: string, json: boolean): Promise<number> {
  const { detectAsync } = await import("../../approval/detection/index.js");
  const report = checkReport(await detectAsync(command));
  process.stdout.write(json ? `${JSON.stringify(report)}\n` : renderCheck(report));
  return 0;
}

/**
 * `mibyan check --stdin`: one command per input line, each a JSON string (so
 * multi-line commands fit); one JSON object per output line, in input order.
 * A line that is not a JSON string gets `{"line":N,"error":...}` and makes the
 * exit status 1; the other lines are still checked.
 */
export async function checkStdin(input: NodeJS.ReadableStream = process.stdin): Promise<number> {
  const { detectAsync } = await import("../../approval/detection/index.js");
  let status = 0;
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
      status = 1;
      const why = command instanceof Error ? command.message : `expected a JSON string, got ${command === null ? "null" : typeof command}`;
      process.stdout.write(`${JSON.stringify({ line: lineNumber, error: `not a JSON string: ${why}` })}\n`);
      continue;
    }
    process.stdout.write(`${JSON.stringify(checkReport(await detectAsync(command)))}\n`);
  }
  return status;
}
