/**
 * Why `old_string` was not found, told so the model can fix it in one go.
 *
 * First the usual mistakes that can be checked exactly: the line-number
 * prefixes read_file adds were copied along, typographic quotes or dashes
 * stand for ASCII ones, `\n` was written as the two characters backslash and
 * n. Then the closest regions of the file (where indentation and other
 * whitespace differences show up):
 *
 * 1. Candidate regions (as many lines as `old_string` has) come from anchors:
 *    every line of `old_string` that occurs in the file (whitespace-normalised)
 *    votes for the region it would start.
 *    The regions around the file lines most like the first substantial line
 *    of `old_string` (edit distance) are added, so a region whose lines all
 *    changed a little is still found. This stays linear in the file size.
 * 2. The candidates are ranked by edit distance over their whole
 *    whitespace-normalised text; the best three above 50 % are reported with
 *    their line numbers and their similarity as written, and the best one line
 *    by line: which lines differ and how (indentation, trailing or inner
 *    whitespace, quotes, case, or the text itself).
 */

import { distance } from "fastest-levenshtein";

/** Lines of `text` without their `\r`; a final line break does not start another line. */
function splitLines(text: string): string[] {
  const lines = text.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

const normalize = (line: string): string => line.trim().replace(/\s+/g, " ");

const LOOKALIKES: ReadonlyArray<readonly [RegExp, string]> = [
  [/[\u2018\u2019\u201a\u201b\u2032]/g, "'"],
  [/[\u201c\u201d\u201e\u201f\u2033]/g, '"'],
  [/[\u2010\u2011\u2012\u2013\u2014\u2212]/g, "-"],
  [/\u2026/g, "..."],
  [/[\u00a0\u2007\u202f\u2009\u200a\u2002\u2003]/g, " "],
  [/[\u200b\u200c\u200d\ufeff]/g, ""],
];

function asciiLookalikes(text: string): string {
  let out = text;
  for (const [pattern, replacement] of LOOKALIKES) out = out.replace(pattern, replacement);
  return out;
}

/** `cat -n`-style prefixes read_file puts before each line ("    12\t"), or "12|" / "12:" / "L12:" variants. */
const NUMBER_PREFIX = /^\s*L?\d+(?:\t|[|:→] ?)/;

function indentDescription(line: string): string {
  const indent = /^[ \t]*/.exec(line)![0];
  if (indent === "") return "no indentation";
  const tabs = (indent.match(/\t/g) ?? []).length;
  const spaces = indent.length - tabs;
  const parts: string[] = [];
  if (tabs > 0) parts.push(`${tabs} tab${tabs === 1 ? "" : "s"}`);
  if (spaces > 0) parts.push(`${spaces} space${spaces === 1 ? "" : "s"}`);
  return parts.join(" + ");
}

const quoteLine = (line: string): string => JSON.stringify(line.length > 160 ? `${line.slice(0, 160)}…` : line);

/** How one line of the file differs from the corresponding line of old_string; `shown` is the file line as it may be quoted. */
function lineDifference(fileLine: string, oldLine: string, shown: string): string {
  if (fileLine.trim() === oldLine.trim()) {
    const sameIndent = /^\s*/.exec(fileLine)![0] === /^\s*/.exec(oldLine)![0];
    const sameTrailing = /\s*$/.exec(fileLine)![0] === /\s*$/.exec(oldLine)![0];
    if (!sameIndent && sameTrailing) {
      return `indentation differs: the file has ${indentDescription(fileLine)}, old_string has ${indentDescription(oldLine)}`;
    }
    if (sameIndent) return "trailing whitespace differs";
    return `indentation and trailing whitespace differ: file ${quoteLine(shown)}, old_string ${quoteLine(oldLine)}`;
  }
  if (normalize(fileLine) === normalize(oldLine)) return `whitespace inside the line differs: file ${quoteLine(shown)}, old_string ${quoteLine(oldLine)}`;
  if (asciiLookalikes(fileLine) === asciiLookalikes(oldLine)) {
    return `typographic characters differ (quotes, dashes or special spaces): file ${quoteLine(shown)}, old_string ${quoteLine(oldLine)}`;
  }
  if (fileLine.toLowerCase() === oldLine.toLowerCase()) return `letter case differs: file ${quoteLine(shown)}, old_string ${quoteLine(oldLine)}`;
  return `file ${quoteLine(shown)}, old_string ${quoteLine(oldLine)}`;
}

interface Region {
  /** 0-based first line. */
  start: number;
  /** Similarity of the whitespace-normalised text (what ranks the regions). */
  rank: number;
  /** Similarity of the text as it is (what the model is told). */
  similarity: number;
}

const ANCHOR_MIN_CHARS = 3;
const CANDIDATES = 10;
/** Characters compared by edit distance per region (longer regions are compared line by line). */
const MAX_DISTANCE_CHARS = 6000;

function similarity(a: string, b: string): number {
  if (a === b) return 1;
  const longest = Math.max(a.length, b.length);
  if (longest === 0) return 1;
  return 1 - distance(a, b) / longest;
}

function regionSimilarity(file: readonly string[], old: readonly string[], start: number): number {
  const window = file.slice(start, start + old.length);
  const a = window.join("\n");
  const b = old.join("\n");
  if (a.length + b.length <= 2 * MAX_DISTANCE_CHARS) return similarity(a, b);
  // Large regions: the average similarity of the lines, each cut to a bounded length.
  let sum = 0;
  for (let j = 0; j < old.length; j++) sum += similarity((window[j] ?? "").slice(0, 400), old[j]!.slice(0, 400));
  return sum / old.length;
}

/** Starts of the regions most worth scoring: the best anchored ones, and those around the lines most like old_string's first real line. */
function candidateStarts(fileNorm: readonly string[], oldNorm: readonly string[]): number[] {
  const maxStart = Math.max(0, fileNorm.length - oldNorm.length);
  const clamp = (i: number) => Math.min(Math.max(i, 0), maxStart);
  const positions = new Map<string, number[]>();
  fileNorm.forEach((line, i) => {
    if (line.length < ANCHOR_MIN_CHARS) return;
    const list = positions.get(line);
    if (list) {
      if (list.length < 1000) list.push(i);
    } else positions.set(line, [i]);
  });
  const votes = new Map<number, number>();
  oldNorm.forEach((line, j) => {
    for (const p of positions.get(line) ?? []) {
      const start = clamp(p - j);
      votes.set(start, (votes.get(start) ?? 0) + 1);
    }
  });
  const anchored = [...votes.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, CANDIDATES).map(([start]) => start);

  let j0 = oldNorm.findIndex((l) => l.length >= ANCHOR_MIN_CHARS);
  if (j0 < 0) j0 = 0;
  const probe = (oldNorm[j0] ?? "").slice(0, 300);
  const scored: Array<{ start: number; score: number }> = [];
  // Very long files are sampled, so this stays cheap.
  const step = Math.max(1, Math.floor(fileNorm.length / 50_000));
  for (let i = 0; i < fileNorm.length; i += step) {
    const line = fileNorm[i]!;
    if (line.length === 0 && probe.length > 0) continue;
    scored.push({ start: clamp(i - j0), score: similarity(line.slice(0, 300), probe) });
  }
  scored.sort((a, b) => b.score - a.score || a.start - b.start);
  return [...new Set([...anchored, ...scored.slice(0, CANDIDATES).map((s) => s.start)])];
}

function closestRegions(fileLines: readonly string[], oldLines: readonly string[]): Region[] {
  const fileNorm = fileLines.map(normalize);
  const oldNorm = oldLines.map(normalize);
  const regions = candidateStarts(fileNorm, oldNorm)
    .map((start) => ({ start, rank: regionSimilarity(fileNorm, oldNorm, start), similarity: regionSimilarity(fileLines, oldLines, start) }))
    .sort((a, b) => b.rank - a.rank || b.similarity - a.similarity || a.start - b.start);
  const chosen: Region[] = [];
  for (const region of regions) {
    if (region.rank < 0.5) break;
    // Regions overlapping a better one add nothing.
    if (chosen.some((c) => Math.abs(c.start - region.start) < Math.max(1, oldLines.length))) continue;
    chosen.push(region);
    if (chosen.length === 3) break;
  }
  return chosen;
}

const lineRange = (start: number, count: number): string => (count <= 1 ? `line ${start + 1}` : `lines ${start + 1}-${start + count}`);

/**
 * Hints that explain the miss exactly, if one does. `occurs(s)` tells whether a
 * candidate string occurs in the file.
 */
function exactHints(oldString: string, occurs: (candidate: string) => boolean): string[] {
  const hints: string[] = [];
  const oldLines = oldString.split("\n");
  const prefixed = oldLines.filter((l) => NUMBER_PREFIX.test(l)).length;
  if (prefixed > 0 && prefixed >= Math.ceil(oldLines.filter((l) => l.trim() !== "").length / 2)) {
    const stripped = oldLines.map((l) => l.replace(NUMBER_PREFIX, "")).join("\n");
    hints.push(
      occurs(stripped)
        ? "old_string starts its lines with the line numbers read_file shows (\"    12\\t\"); they are not part of the file. Without them the text is found: send old_string without the prefixes."
        : "old_string seems to start its lines with the line numbers read_file shows (\"    12\\t\"); they are not part of the file, remove them.",
    );
  }
  if (!oldString.includes("\n") && /\\n/.test(oldString)) {
    const unescaped = oldString.replace(/\\n/g, "\n").replace(/\\t/g, "\t");
    if (occurs(unescaped)) hints.push("old_string contains the two characters \\n where the file has a line break: use real line breaks in old_string.");
  }
  if (oldString.includes("[REDACTED]")) {
    hints.push(
      "old_string contains [REDACTED], which read_file and search_files show in place of secrets: the file has the real value there. Make old_string a part of the text without the secret, or use the terminal tool for that line.",
    );
  }
  const ascii = asciiLookalikes(oldString);
  if (ascii !== oldString && occurs(ascii)) {
    hints.push("old_string uses typographic quotes, dashes or special spaces where the file has plain ASCII ones; with ASCII characters it is found.");
  }
  return hints;
}

export interface NearMissOptions {
  /** A file line (0-based index) as it may be quoted, e.g. with secrets redacted. Default: as it is. */
  quoteLine?: (index: number, line: string) => string;
}

/** The message for an `old_string` that occurs nowhere in `text` (a file's content). */
export function nearMissMessage(text: string, oldString: string, path: string, options: NearMissOptions = {}): string {
  const fileLines = splitLines(text);
  const oldLines = splitLines(oldString);
  const parts = [`old_string was not found in ${path}.`];

  parts.push(...exactHints(oldString, (candidate) => text.includes(candidate) || text.includes(candidate.replace(/\r?\n/g, "\r\n"))));

  const regions = oldLines.every((l) => l.trim() === "") ? [] : closestRegions(fileLines, oldLines);
  if (regions.length === 0) {
    parts.push("Nothing in the file is similar to it. Check the path, and read the file to copy the exact text you want to replace.");
    return parts.join("\n");
  }
  const best = regions[0]!;
  const count = Math.min(oldLines.length, fileLines.length - best.start);
  const percent = (r: Region) => `${Math.floor(r.similarity * 100)}% similar`;
  parts.push(`Closest match: ${lineRange(best.start, count)} (${percent(best)}). Differences, by line of the file:`);
  const differences: string[] = [];
  for (let j = 0; j < oldLines.length; j++) {
    const fileLine = fileLines[best.start + j];
    if (fileLine === undefined) {
      differences.push(`  after the end of the file: old_string has ${quoteLine(oldLines[j]!)} more`);
      continue;
    }
    if (fileLine === oldLines[j]) continue;
    const shown = options.quoteLine ? options.quoteLine(best.start + j, fileLine) : fileLine;
    differences.push(`  line ${best.start + j + 1}: ${lineDifference(fileLine, oldLines[j]!, shown)}`);
  }
  if (differences.length === 0) differences.push("  (the lines are equal; old_string differs in its line breaks or at its start or end)");
  const shown = differences.slice(0, 8);
  if (differences.length > shown.length) shown.push(`  … and ${differences.length - shown.length} more differing lines`);
  parts.push(...shown);
  if (regions.length > 1) parts.push(`Other similar places: ${regions.slice(1).map((r) => `${lineRange(r.start, count)} (${percent(r)})`).join(", ")}.`);
  parts.push(`Read ${lineRange(best.start, count)} with read_file (offset=${best.start + 1}, limit=${Math.max(count, 1)}) and copy the text exactly, without the line-number prefixes.`);
  return parts.join("\n");
}
