/**
 * The exact replacement patch makes: `old_string` must occur exactly once
 * (or at least once with `replace_all`), compared character for character.
 *
 * One allowance, for line endings only: in a file whose line breaks are all
 * CRLF, an `old_string`/`new_string` written with plain `\n` is matched and
 * written with CRLF (models rarely send `\r`); in a file with mixed endings
 * the text is first looked for as given, then with CRLF. Nothing else is
 * loosened — whitespace, quotes and case must match — but a miss is explained
 * (near-miss.ts) and several matches are listed by line.
 */

import { lineEndings } from "./content.js";
import type { Edit } from "./diff.js";
import { FileToolError } from "./errors.js";
import { nearMissMessage, type NearMissOptions } from "./near-miss.js";

export interface ReplacementPlan {
  /** The new content. */
  text: string;
  /** The replacements, in the old content's offsets. */
  edits: Edit[];
  /** 1-based line of each replacement's start. */
  lines: number[];
}

/** Offsets of the non-overlapping occurrences of `needle`. */
function occurrences(haystack: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = haystack.indexOf(needle); i >= 0; i = haystack.indexOf(needle, i + needle.length)) found.push(i);
  return found;
}

function lineNumbers(text: string, offsets: readonly number[]): number[] {
  const lines: number[] = [];
  let line = 1;
  let at = 0;
  for (const offset of offsets) {
    let i = text.indexOf("\n", at);
    while (i >= 0 && i < offset) {
      line++;
      at = i + 1;
      i = text.indexOf("\n", at);
    }
    lines.push(line);
  }
  return lines;
}

const toCrlf = (s: string) => s.replace(/\r?\n/g, "\r\n");

/** Plans replacing `oldString` with `newString` in `text` (the content of `path`). Throws `FileToolError` for the model. */
export function planReplacement(text: string, oldString: string, newString: string, replaceAll: boolean, path: string, options: NearMissOptions = {}): ReplacementPlan {
  if (oldString === "") {
    throw new FileToolError("invalid_args", "old_string must not be empty. To create a file or replace all of its content, use write_file.");
  }
  if (oldString === newString) throw new FileToolError("invalid_args", "old_string and new_string are the same; there is nothing to change.");

  const endings = lineEndings(text);
  const variants: Array<readonly [string, string]> = [];
  if (endings === "crlf" && !oldString.includes("\r")) variants.push([toCrlf(oldString), toCrlf(newString)]);
  else {
    variants.push([oldString, newString]);
    if (endings === "mixed" && oldString.includes("\n") && !oldString.includes("\r")) variants.push([toCrlf(oldString), toCrlf(newString)]);
  }

  for (const [needle, replacement] of variants) {
    const found = occurrences(text, needle);
    if (found.length === 0) continue;
    const lines = lineNumbers(text, found);
    if (found.length > 1 && !replaceAll) {
      const shown = lines.slice(0, 20).join(", ") + (lines.length > 20 ? `, … (${lines.length} in all)` : "");
      throw new FileToolError(
        "ambiguous_match",
        `old_string occurs ${found.length} times in ${path} (starting at lines ${shown}). Include more surrounding lines in old_string so it matches exactly one place, or set replace_all to true to change every occurrence.`,
      );
    }
    const edits = found.map((start) => ({ start, end: start + needle.length, replacement }));
    return { text: text.split(needle).join(replacement), edits, lines };
  }
  throw new FileToolError("no_match", nearMissMessage(text, oldString, path, options));
}
