/**
 * Paths as the model gives them and as the tools report them.
 *
 * The path itself is resolved inside the environment (`__resolve` in
 * scripts.ts: `~` against its `$HOME`, relative paths against the task's
 * working directory), so it means there exactly what it would mean to a
 * `terminal` command. This module folds `.`/`..` in what the script reported
 * (for messages and the approval gate), shortens paths for display, and finds
 * names close to a missing one.
 */

import { posix } from "node:path";

import { distance } from "fastest-levenshtein";

/**
 * An absolute path with `.`, `..` and doubled slashes folded lexically, as the
 * approval rules fold a command's paths: for messages and the gate. The file
 * operations themselves use the path as the shell resolved it, since where
 * `a` is a symlink the kernel's `a/..` is not `a`'s parent (the gate is told
 * the resolved path as well).
 */
export function normalizeAbsolute(path: string): string {
  return posix.normalize(path).replace(/(.)\/$/, "$1");
}

/** `path` relative to `cwd` when it lies inside it, else absolute. */
export function displayPath(path: string, cwd: string | undefined): string {
  if (!cwd) return path;
  const base = normalizeAbsolute(cwd);
  if (path === base) return ".";
  const prefix = base === "/" ? "/" : `${base}/`;
  return path.startsWith(prefix) ? path.slice(prefix.length) : path;
}

/** Two neighbouring characters swapped ("sbu" for "sub"): one typo, though edit distance counts two. */
function isTransposition(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  const diff: number[] = [];
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) diff.push(i);
  return diff.length === 2 && diff[1] === diff[0]! + 1 && a[diff[0]!] === b[diff[1]!] && a[diff[1]!] === b[diff[0]!];
}

/**
 * Up to `limit` of `names` that look like `wanted`: the same name in another
 * case, the same stem with another extension, two letters swapped, a name
 * within a small edit distance, or one containing it. Best first.
 */
export function similarNames(wanted: string, names: readonly string[], limit = 5): string[] {
  const lower = wanted.toLowerCase();
  const stem = lower.replace(/\.[^.]*$/, "");
  const scored: Array<{ name: string; score: number }> = [];
  for (const name of names) {
    if (name === "" || name === wanted) continue;
    const other = name.toLowerCase();
    const otherStem = other.replace(/\.[^.]*$/, "");
    let score: number;
    if (other === lower) score = 0;
    else if (stem.length > 0 && otherStem === stem) score = 1;
    else if (isTransposition(lower, other)) score = 2;
    else {
      const d = distance(lower, other);
      const relative = d / Math.max(lower.length, other.length);
      if (relative <= 0.4) score = 2 + relative;
      else if (lower.length >= 3 && (other.includes(lower) || (stem.length >= 3 && other.includes(stem)))) score = 3;
      else continue;
    }
    scored.push({ name, score });
  }
  scored.sort((a, b) => a.score - b.score || a.name.localeCompare(b.name));
  return scored.slice(0, limit).map((s) => s.name);
}
