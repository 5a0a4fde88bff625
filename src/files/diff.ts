/**
 * A unified diff of a patch, built from the replacements themselves rather
 * than by diffing two files: each replacement is widened to whole lines, the
 * lines it leaves equal at either end are dropped, and changes whose three
 * lines of context touch are merged into one hunk. The result reads like
 * `diff -u` (a `\ No newline at end of file` marker included), with the
 * `\r` of CRLF lines left out, and is cut at `maxChars`.
 */

export interface Edit {
  /** Offset of the replaced text in the old content. */
  start: number;
  /** Offset just past it. */
  end: number;
  replacement: string;
}

interface Change {
  /** 0-based first old line replaced, and how many. */
  oldStart: number;
  oldLines: string[];
  newLines: string[];
}

/** Lines with their terminators (a last line without `\n` has none). */
function linesOf(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** Offsets where each line starts. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf("\n"); i >= 0 && i + 1 < text.length; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}

/** Index of the line containing `offset` (binary search over `starts`). */
function lineAt(starts: readonly number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function changesOf(oldText: string, edits: readonly Edit[]): Change[] {
  const starts = lineStarts(oldText);
  const lineEnd = (line: number) => (line + 1 < starts.length ? starts[line + 1]! : oldText.length);
  // Widen each edit to whole lines and merge edits that share a line.
  const clusters: Array<{ first: number; last: number; edits: Edit[] }> = [];
  for (const edit of [...edits].sort((a, b) => a.start - b.start)) {
    const first = lineAt(starts, edit.start);
    const last = lineAt(starts, edit.end);
    const previous = clusters[clusters.length - 1];
    if (previous && first <= previous.last) {
      previous.last = Math.max(previous.last, last);
      previous.edits.push(edit);
    } else clusters.push({ first, last, edits: [edit] });
  }
  return clusters.map((cluster) => {
    const blockStart = starts[cluster.first]!;
    const blockEnd = lineEnd(cluster.last);
    let newBlock = "";
    let at = blockStart;
    for (const edit of cluster.edits) {
      newBlock += oldText.slice(at, edit.start) + edit.replacement;
      at = edit.end;
    }
    newBlock += oldText.slice(at, blockEnd);
    let oldLines = linesOf(oldText.slice(blockStart, blockEnd));
    let newLines = linesOf(newBlock);
    // Lines equal at both ends are context, not change.
    let head = 0;
    while (head < oldLines.length && head < newLines.length && oldLines[head] === newLines[head]) head++;
    let tail = 0;
    while (tail < oldLines.length - head && tail < newLines.length - head && oldLines[oldLines.length - 1 - tail] === newLines[newLines.length - 1 - tail]) tail++;
    oldLines = oldLines.slice(head, oldLines.length - tail);
    newLines = newLines.slice(head, newLines.length - tail);
    return { oldStart: cluster.first + head, oldLines, newLines };
  }).filter((c) => c.oldLines.length > 0 || c.newLines.length > 0);
}

/** A line without its terminator and `\r`. */
function bare(line: string): string {
  const text = line.endsWith("\n") ? line.slice(0, -1) : line;
  return text.endsWith("\r") ? text.slice(0, -1) : text;
}

/**
 * What a hunk shows of one side of the change: `lines` are consecutive lines
 * of the old or the new file starting at 0-based line `first`; return them as
 * they may be shown (one for one), e.g. with secrets redacted.
 */
export type ShowLines = (side: "old" | "new", first: number, lines: string[]) => string[];

export interface DiffOptions {
  context?: number;
  maxChars?: number;
  show?: ShowLines;
}

/** The unified diff between `oldText` and the result of applying `edits` to it (non-overlapping edits). */
export function unifiedDiff(oldText: string, edits: readonly Edit[], path: string, options: DiffOptions = {}): string {
  const context = options.context ?? 3;
  const maxChars = options.maxChars ?? 8000;
  const oldAll = linesOf(oldText);
  const changes = changesOf(oldText, edits);
  if (changes.length === 0) return "";

  // Group changes whose context overlaps into hunks.
  const hunks: Change[][] = [];
  for (const change of changes) {
    const current = hunks[hunks.length - 1];
    const previous = current?.[current.length - 1];
    if (current && previous && change.oldStart - (previous.oldStart + previous.oldLines.length) <= 2 * context) current.push(change);
    else hunks.push([change]);
  }

  const out = [`--- ${path}`, `+++ ${path}`];
  let delta = 0;
  for (const hunk of hunks) {
    const first = hunk[0]!;
    const last = hunk[hunk.length - 1]!;
    const from = Math.max(0, first.oldStart - context);
    const to = Math.min(oldAll.length, last.oldStart + last.oldLines.length + context);
    // The hunk's lines in order; context and removed lines belong to the old side, context and added lines to the new.
    const rows: Array<{ prefix: " " | "-" | "+"; line: string; side: "old" | "new"; at: number }> = [];
    const oldSide: string[] = [];
    const newSide: string[] = [];
    const push = (prefix: " " | "-" | "+", line: string) => {
      const side = prefix === "+" ? "new" : "old";
      rows.push({ prefix, line, side, at: side === "new" ? newSide.length : oldSide.length });
      if (prefix !== "+") oldSide.push(bare(line));
      if (prefix !== "-") newSide.push(bare(line));
    };
    let line = from;
    const newFrom = from + delta;
    for (const change of hunk) {
      for (; line < change.oldStart; line++) push(" ", oldAll[line]!);
      for (const l of change.oldLines) push("-", l);
      for (const l of change.newLines) push("+", l);
      line += change.oldLines.length;
      delta += change.newLines.length - change.oldLines.length;
    }
    for (; line < to; line++) push(" ", oldAll[line]!);
    const shownOld = options.show ? options.show("old", from, oldSide) : oldSide;
    const shownNew = options.show ? options.show("new", newFrom, newSide) : newSide;
    const body: string[] = [];
    for (const row of rows) {
      body.push(row.prefix + (row.side === "new" ? shownNew[row.at] : shownOld[row.at]));
      if (!row.line.endsWith("\n")) body.push("\\ No newline at end of file");
    }
    const range = (start: number, count: number) => `${count === 0 ? start : start + 1}${count === 1 ? "" : `,${count}`}`;
    out.push(`@@ -${range(from, oldSide.length)} +${range(newFrom, newSide.length)} @@`, ...body);
  }
  const text = out.join("\n");
  if (text.length <= maxChars) return text;
  const cut = text.slice(0, maxChars);
  const shownLines = cut.split("\n").length;
  return `${cut.slice(0, cut.lastIndexOf("\n"))}\n… (diff cut: ${out.length - shownLines + 1} more lines)`;
}
