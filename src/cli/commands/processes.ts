import { getProcessRegistry } from "../../process/default-registry.js";
import { ProcessNotFoundError, type ProcessInfo } from "../../process/process-registry.js";
import { PROCESS_ID_PATTERN, type ProcessReceipt } from "../../process/types.js";
import { redactSecrets } from "../../redaction/redact.js";
import { cleanTerminalOutput } from "../../terminal/ansi.js";
import { DEFAULT_SESSION } from "../../tools/call-scope.js";

export interface ProcessesOptions {
  session?: string;
  json?: boolean;
}

/** One row of `mibyan processes --json`, the same shape for running and ended processes. */
export interface ProcessRow {
  process_id: string;
  status: string;
  exit_code: number | null;
  pid: number;
  task_id: string;
  backend: string;
  command: string;
  cwd: string | null;
  /** Null only when the checkpoint holds no valid date. */
  started_at: string | null;
  ended_at: string | null;
  /** For a running process: how long it has run so far. */
  duration_ms: number;
  reason: string | null;
  managed_by: string | null;
}

const COMMAND_WIDTH = 60;

// The registry redacts what it stores; redacting again here keeps a checkpoint
// or receipt written by another (older, hand-edited) writer from leaking through the CLI.
function clean(text: string): string;
function clean(text: string | null): string | null;
function clean(text: string | null): string | null {
  return text === null ? null : redactSecrets(text);
}

/** The checkpoint checks only that `startedAt` is a string: one bad entry must not fail the whole listing. */
function isoOrNull(ms: number | undefined): string | null {
  return ms === undefined || !Number.isFinite(ms) ? null : new Date(ms).toISOString();
}

function runningRow(info: ProcessInfo, now: number): ProcessRow {
  const duration = (info.endedAt ?? now) - info.startedAt;
  return {
    process_id: info.id,
    status: info.status,
    exit_code: info.exitCode ?? null,
    pid: info.pid,
    task_id: info.taskId,
    backend: info.backend,
    command: clean(info.command),
    cwd: clean(info.cwd),
    started_at: isoOrNull(info.startedAt),
    ended_at: isoOrNull(info.endedAt),
    duration_ms: Number.isFinite(duration) ? Math.max(0, duration) : 0,
    reason: clean(info.reason),
    // Absent for an orphan: nobody manages it until a registry adopts it.
    managed_by: info.managedBy ? `mibyan process ${info.managedBy.pid} on ${info.managedBy.host}` : null,
  };
}

function endedRow(receipt: ProcessReceipt): ProcessRow {
  return {
    process_id: receipt.id,
    status: receipt.ended,
    exit_code: receipt.exitCode,
    pid: receipt.pid,
    task_id: receipt.taskId,
    backend: receipt.backend,
    command: clean(receipt.command),
    cwd: clean(receipt.cwd),
    started_at: receipt.startedAt,
    ended_at: receipt.endedAt,
    duration_ms: receipt.durationMs,
    reason: clean(receipt.reason),
    managed_by: null,
  };
}

function receiptJson(receipt: ProcessReceipt): Record<string, unknown> {
  return {
    process_id: receipt.id,
    owner: receipt.owner,
    task_id: receipt.taskId,
    backend: receipt.backend,
    command: clean(receipt.command),
    cwd: clean(receipt.cwd),
    pid: receipt.pid,
    pty: receipt.pty,
    started_at: receipt.startedAt,
    ended_at: receipt.endedAt,
    duration_ms: receipt.durationMs,
    exit_code: receipt.exitCode,
    status: receipt.ended,
    reason: clean(receipt.reason),
    output: clean(receipt.output),
    output_bytes: receipt.outputBytes,
    output_truncated: receipt.outputTruncated,
    log_path: receipt.logPath,
  };
}

/** `5.2s`, `3m 05s`, `2h 03m`, `1d 04h`. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const total = Math.floor(s);
  const pad = (n: number): string => String(n).padStart(2, "0");
  if (total < 3600) return `${Math.floor(total / 60)}m ${pad(total % 60)}s`;
  if (total < 86_400) return `${Math.floor(total / 3600)}h ${pad(Math.floor((total % 3600) / 60))}m`;
  return `${Math.floor(total / 86_400)}d ${pad(Math.floor((total % 86_400) / 3600))}h`;
}

/** One line of at most `width` characters: a multi-line command must not break the table (↵ keeps the line breaks visible). */
function oneLine(text: string, width: number): string {
  const flat = text
    .trim()
    .replace(/\s*\n\s*/g, " ↵ ")
    .replace(/[\s\u0000-\u001f\u007f]+/g, " ");
  // By code point, so a cut never leaves half a surrogate pair.
  const chars = [...flat];
  return chars.length <= width ? flat : `${chars.slice(0, width - 1).join("")}…`;
}

/**
 * What a receipt or checkpoint holds, made safe to print on a terminal: escape
 * sequences, control characters (a lone \r that would overwrite a line, BEL,
 * backspace, C1 controls) and bidirectional overrides are dropped; newlines
 * and tabs stay. A receipt is written by the registry, but its output is
 * whatever the process printed, and the file can be edited by hand.
 */
export function forTerminal(text: string): string {
  // eslint-disable-next-line no-control-regex
  return cleanTerminalOutput(text).replace(/[\r\u0080-\u009f\u202a-\u202e\u2066-\u2069]/g, "");
}

/** Seconds precision: milliseconds only widen the column. */
function shortIso(iso: string): string {
  return iso.replace(/\.\d+Z$/, "Z");
}

/**
 * Caller-supplied text quoted when it is not plain, so an error stays one
 * line and a hostile id cannot write escapes to the terminal.
 */
function shown(value: string): string {
  return /^[\x21-\x7e]{1,80}$/.test(value) ? value : JSON.stringify(value.slice(0, 80));
}

function table(title: string, rows: readonly ProcessRow[], durationHeading: string): string[] {
  const header = ["ID", "STATUS", "EXIT", "STARTED", durationHeading, "COMMAND"];
  const cells = rows.map((row) => [
    oneLine(forTerminal(row.process_id), 40),
    oneLine(forTerminal(row.status), 20),
    row.exit_code === null ? "-" : String(row.exit_code),
    row.started_at === null ? "?" : oneLine(forTerminal(shortIso(row.started_at)), 40),
    row.started_at === null ? "?" : formatDuration(row.duration_ms),
    oneLine(forTerminal(row.command), COMMAND_WIDTH),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: readonly string[]): string => `  ${c.map((cell, i) => (i === c.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ")}`.trimEnd();
  return [`${title} (${rows.length})`, line(header), ...cells.map(line)];
}

/** `mibyan processes [list]`: the session's running processes and retained results, read without adopting or touching any. */
export async function listProcessesCommand(options: ProcessesOptions): Promise<number> {
  const session = options.session ?? DEFAULT_SESSION;
  const snapshot = await getProcessRegistry().snapshot(session);
  const now = Date.now();
  const ended = snapshot.results.map(endedRow);
  // A process that just ended has its receipt written before it leaves the checkpoint; the receipt is the answer then.
  const endedIds = new Set(ended.map((row) => row.process_id));
  const running = snapshot.running.filter((info) => !endedIds.has(info.id)).map((info) => runningRow(info, now));

  if (options.json) {
    process.stdout.write(`${JSON.stringify({ session, running, ended }, null, 2)}\n`);
    return 0;
  }
  if (running.length === 0 && ended.length === 0) {
    process.stdout.write(`No background processes for session ${shown(session)}.\n`);
    return 0;
  }
  const lines: string[] = [];
  if (running.length > 0) lines.push(...table("Running", running, "UPTIME"));
  if (ended.length > 0) {
    if (lines.length > 0) lines.push("");
    lines.push(...table("Ended", ended, "DURATION"));
  }
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

function keyValues(entries: ReadonlyArray<readonly [string, unknown]>): string {
  const width = Math.max(...entries.map(([key]) => key.length)) + 1;
  return entries.map(([key, value]) => `${`${key}:`.padEnd(width)} ${value === null ? "-" : oneLine(forTerminal(String(value)), 500)}`).join("\n");
}

/**
 * `mibyan processes show ID`: the receipt of an ended process, or what the
 * checkpoint says of a running one. Whatever the session may not read is
 * answered exactly like an id that does not exist.
 */
export async function showProcessCommand(id: string, options: ProcessesOptions): Promise<number> {
  const session = options.session ?? DEFAULT_SESSION;
  const notFound = (): number => {
    const hint = PROCESS_ID_PATTERN.test(id) ? "" : " (a process id is proc_ followed by 12 hex digits)";
    process.stderr.write(`mibyan: no background process ${shown(id)} in session ${shown(session)}${hint}\n`);
    return 1;
  };
  if (!PROCESS_ID_PATTERN.test(id)) return notFound();

  const registry = getProcessRegistry();
  const receipt = async (): Promise<ProcessReceipt | undefined> => {
    try {
      return await registry.result(session, id);
    } catch (err) {
      if (err instanceof ProcessNotFoundError) return undefined;
      throw err;
    }
  };
  let found = await receipt();
  let running: ProcessInfo | undefined;
  if (!found) {
    running = (await registry.snapshot(session)).running.find((info) => info.id === id);
    // It may have ended between the two reads: its receipt is written before it leaves the checkpoint.
    if (!running) found = await receipt();
  }

  if (found) {
    const json = receiptJson(found);
    if (options.json) {
      process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
      return 0;
    }
    const output = forTerminal(json.output as string);
    const kept = found.outputTruncated ? `, only the last ${output.length} characters kept` : "";
    const details = keyValues([
      ["process_id", found.id],
      ["status", found.ended],
      ["exit_code", found.exitCode],
      ...(found.reason !== null ? ([["reason", oneLine(json.reason as string, 500)]] as const) : []),
      ["command", oneLine(json.command as string, 200)],
      ["cwd", json.cwd === null ? null : oneLine(json.cwd as string, 500)],
      ["task_id", found.taskId],
      ["backend", found.backend],
      ["pid", found.pid],
      ["pty", found.pty],
      ["started_at", found.startedAt],
      ["ended_at", found.endedAt],
      ["duration", formatDuration(found.durationMs)],
      ["output", `${found.outputBytes} bytes${kept}`],
      ["log_path", oneLine(found.logPath, 500)],
    ]);
    process.stdout.write(`${details}\n${output === "" ? "" : `\n${output.endsWith("\n") ? output : `${output}\n`}`}`);
    return 0;
  }
  if (running) {
    const row = runningRow(running, Date.now());
    if (options.json) {
      process.stdout.write(`${JSON.stringify({ ...row, pty: running.pty }, null, 2)}\n`);
      return 0;
    }
    const details = keyValues([
      ["process_id", row.process_id],
      ["status", row.status],
      ["command", oneLine(row.command, 200)],
      ["cwd", row.cwd === null ? null : oneLine(row.cwd, 500)],
      ["task_id", row.task_id],
      ["backend", row.backend],
      ["pid", row.pid],
      ["pty", running.pty],
      ["started_at", row.started_at],
      ["uptime", row.started_at === null ? null : formatDuration(row.duration_ms)],
      ["managed_by", row.managed_by ?? "nobody: the mibyan process that started it is gone (the next process tool call adopts it)"],
    ]);
    process.stdout.write(`${details}\n`);
    return 0;
  }
  return notFound();
}
