/**
 * The one redaction policy for tool output that reaches the model.
 *
 * Every built-in tool that hands the model text from the task's environment
 * passes it through here first: terminal's output, the process tool's output
 * (poll, log, wait), execute_code's program output, read_file's lines, search_files' matching lines, patch's
 * diff and the file lines its near-miss message quotes. The rules are
 * `redactSecrets`' (redact.ts): private key blocks, authorization headers,
 * vendor token shapes, passwords in URLs, `NAME=value` / `"name": value` /
 * `--name value` where the name says secret, token, password, key, ...
 *
 * One switch for all of them: config `terminal.redact_output` (default true,
 * read at each call; a config that cannot be read keeps it on), or a handler's
 * `redactOutput` option. Process receipts are redacted whatever it says.
 *
 * Text shown as numbered lines (read_file, search hits, a diff) is redacted
 * with its line count kept: a secret inside a line is replaced in place
 * (`API_KEY=[REDACTED]`), and every line a multi-line secret covered (a
 * private key block) reads `[REDACTED]`, so line numbers and offsets stay
 * those of the file.
 */

import { getConfig } from "../config/load-config.js";
import { REDACTED, mayContainSecret, redactSecrets } from "./redact.js";
import { redactTextOrJson } from "./json.js";

export { REDACTED };

/** A handler's `redactOutput` option: fixed, or asked at each call. */
export type RedactOutputOption = boolean | (() => boolean);

/** Config `terminal.redact_output`; a config that cannot be read keeps the safe default (on). */
export function redactOutputByConfig(): boolean {
  try {
    return getConfig().config.terminal.redactOutput !== false;
  } catch {
    return true;
  }
}

/** Whether to redact, asked at each call: the option when given, else the config. */
export function redactionSwitch(option: RedactOutputOption | undefined): () => boolean {
  if (typeof option === "function") return option;
  if (option !== undefined) return () => option;
  return redactOutputByConfig;
}

/** Free text (command output, a message quoting a file). */
export function redactText(text: string): string {
  return redactSecrets(text);
}

/**
 * Consecutive lines, redacted together (so a block spanning them is seen
 * whole) and given back one for one.
 */
export function redactLines(lines: readonly string[]): string[] {
  if (lines.length === 0) return [];
  const out = redactSecrets(lines.join("\n"), { keepLines: true }).split("\n");
  // keepLines guarantees the count; should a rule ever break it, fall back to line by line.
  return out.length === lines.length ? out : lines.map((line) => redactSecrets(line));
}

/**
 * A line that shows nothing but base64 (16 characters or more): what the
 * body of a private key looks like when its BEGIN line is not in view.
 */
export function looksLikeKeyBody(line: string): boolean {
  return /^[A-Za-z0-9+/]{16,}={0,2}$/.test(line.trim());
}

/** `[begin, end]` line ranges (1-based, inclusive; `end` Infinity when no END line follows) of private key blocks. */
export type KeyBlockRange = readonly [number, number];

/** Ranges from the BEGIN/END marker lines of a file, in line order. */
export function keyBlockRanges(markers: ReadonlyArray<{ line: number; begin: boolean }>): KeyBlockRange[] {
  const ranges: KeyBlockRange[] = [];
  let open: number | undefined;
  for (const m of [...markers].sort((a, b) => a.line - b.line)) {
    if (m.begin) open ??= m.line;
    else if (open !== undefined) {
      ranges.push([open, m.line]);
      open = undefined;
    }
  }
  if (open !== undefined) ranges.push([open, Infinity]);
  return ranges;
}

export const inKeyBlock = (ranges: readonly KeyBlockRange[], line: number): boolean => ranges.some(([a, b]) => line >= a && line <= b);

/** The BEGIN/END line of a private key block (the same shape redact.ts and the environment's grep look for). */
export const KEY_MARKER = /-----(BEGIN|END) [A-Z0-9 ]*PRIVATE KEY-----/;

/** The key block ranges of a whole text (1-based lines). */
export function keyBlockRangesOf(text: string): KeyBlockRange[] {
  if (!text.includes("PRIVATE KEY-----")) return [];
  const markers: Array<{ line: number; begin: boolean }> = [];
  text.split("\n").forEach((line, i) => {
    const m = KEY_MARKER.exec(line);
    if (m) markers.push({ line: i + 1, begin: m[1] === "BEGIN" });
  });
  return keyBlockRanges(markers);
}

/**
 * A shower for lines of a text known whole (patch's old and new file): `lines`
 * are consecutive lines from 0-based line `first`; redacted together, and
 * every line inside a private key block of the whole text hidden.
 */
export function textLineRedactor(text: string): (first: number, lines: string[]) => string[] {
  const ranges = keyBlockRangesOf(text);
  return (first, lines) => redactLines(lines).map((line, i) => (inKeyBlock(ranges, first + i + 1) ? REDACTED : line));
}

/**
 * What dispatch sends the model from a tool it does not trust to redact
 * itself (see docs/trust-model.md#what-is-redacted): error texts of every
 * tool, and the output of tools that are not built in. JSON stays JSON.
 * Under the same switch as every tool's output; the config is only read when
 * the text could hold a secret, so text without one costs a single scan.
 */
export function redactForModel(text: string): string {
  if (!mayContainSecret(text) || !redactOutputByConfig()) return text;
  return redactTextOrJson(text);
}
