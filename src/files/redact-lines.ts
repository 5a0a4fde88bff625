/**
 * Redacting the lines read_file and search_files show, with the one policy
 * of src/redaction/tool-output.ts, kept line for line (numbers and offsets
 * stay those of the file).
 *
 * The tools show parts of files: a window, the hits of a search. Each run of
 * consecutive lines is redacted as one text, so a private key block inside it
 * is seen whole. A window can also start inside a key block, or a search hit
 * be a line of one, with its `-----BEGIN ... PRIVATE KEY-----` line out of
 * view: the body alone is only base64. So when a shown line looks like such a
 * body (base64 and nothing else), the file's BEGIN/END lines up to there are
 * looked up in the environment (one `head | grep` per file, in one command)
 * and every shown line inside a block becomes `[REDACTED]`. If that lookup
 * fails, the lines that look like a key body are redacted anyway.
 */

import type { Environment } from "../environments/types.js";
import { inKeyBlock, keyBlockRanges, looksLikeKeyBody, REDACTED, redactLines, type KeyBlockRange } from "../redaction/tool-output.js";
import { DEFAULT_COMMAND_TIMEOUT_MS } from "./limits.js";
import { runFileScript } from "./scripts.js";

/**
 * `$2 $3`, `$4 $5`, ...: a file and the last line to look at. Payload: per
 * readable file, `\x1e` path, then `N:-----BEGIN|END ...` lines (a file not
 * reported is treated as unknown: its key-like lines are hidden).
 */
export const KEY_MARKERS_SCRIPT = String.raw`__need head grep
shift
printf '::data\n'
while [ $# -ge 2 ]; do
  if [ -r "$1" ]; then
    printf '\036%s\n' "$1"
    head -n "$2" < "$1" 2>/dev/null | grep -n -o -E -e '-----(BEGIN|END) [A-Z0-9 ]*PRIVATE KEY-----' 2>/dev/null
  fi
  shift 2
done
`;

/** Consecutive lines of one file as shown: `first` is the 1-based number of `lines[0]`. */
export interface ShownRun {
  /** The file's path in the environment (absolute). */
  path: string;
  first: number;
  lines: string[];
}

export interface RedactRunsOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * The runs with secrets replaced, line for line, and how many lines changed.
 * Runs of the same file may be given separately (search hits).
 */
export async function redactShownRuns(env: Environment, runs: readonly ShownRun[], options: RedactRunsOptions = {}): Promise<{ runs: ShownRun[]; redacted: number }> {
  const out = runs.map((run) => ({ ...run, lines: redactLines(run.lines) }));
  // Files with a line that may be the body of a key whose BEGIN line is out of view, and up to
  // which line to look (the last one shown: an END line below a suspect ends its block).
  const suspects = new Map<string, number>();
  for (const run of out) {
    if (run.lines.some(looksLikeKeyBody)) suspects.set(run.path, 0);
  }
  for (const run of out) {
    if (suspects.has(run.path)) suspects.set(run.path, Math.max(suspects.get(run.path)!, run.first + run.lines.length - 1));
  }
  if (suspects.size > 0) {
    const ranges = await keyBlocks(env, suspects, options);
    for (const run of out) {
      const blocks = ranges?.get(run.path);
      run.lines = run.lines.map((line, i) => {
        if (line === REDACTED) return line;
        // Without the lookup (it failed, or the file vanished meanwhile), fail closed: a line that looks like a key body is hidden.
        if (blocks === undefined) return looksLikeKeyBody(line) ? REDACTED : line;
        return inKeyBlock(blocks, run.first + i) ? REDACTED : line;
      });
    }
  }
  let redacted = 0;
  out.forEach((run, r) => run.lines.forEach((line, i) => (redacted += line === runs[r]!.lines[i] ? 0 : 1)));
  return { runs: out, redacted };
}

/** The key block ranges of each file, up to its line; undefined when the lookup failed. */
async function keyBlocks(env: Environment, files: ReadonlyMap<string, number>, options: RedactRunsOptions): Promise<Map<string, KeyBlockRange[]> | undefined> {
  const args = [...files].flatMap(([path, last]) => [path, String(last)]);
  let data: string;
  try {
    const output = await runFileScript(env, KEY_MARKERS_SCRIPT, args, {
      timeoutMs: options.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      maxOutputChars: 4 * 1024 * 1024,
      signal: options.signal,
      what: "looking for private key blocks to redact",
    });
    if (output.fields.has("error") || output.data === undefined) return undefined;
    data = output.data;
  } catch {
    return undefined;
  }
  const result = new Map<string, KeyBlockRange[]>();
  for (const section of data.split("\x1e").slice(1)) {
    const [path = "", ...lines] = section.split("\n");
    const markers = lines.flatMap((line) => {
      const m = /^(\d+):-----(BEGIN|END) /.exec(line);
      return m ? [{ line: Number(m[1]), begin: m[2] === "BEGIN" }] : [];
    });
    result.set(path, keyBlockRanges(markers));
  }
  return result;
}
