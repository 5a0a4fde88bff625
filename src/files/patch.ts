/**
 * patch's whole operation: read the file (whole, exact bytes), plan the
 * replacement (replace.ts), ask for approval, write the new content
 * atomically (write.ts) on the condition that the file still has the MD5 it
 * had when it was read — so an edit computed from a stale copy (another
 * command wrote the file while the approval prompt was open, say) is refused
 * rather than silently overwriting that change — and describe the change as a
 * unified diff.
 */

import type { Environment } from "../environments/types.js";
import type { WriteApproval } from "./approval.js";
import { textLineRedactor } from "../redaction/tool-output.js";
import { unifiedDiff, type ShowLines } from "./diff.js";
import { readWholeText } from "./read.js";
import { planReplacement } from "./replace.js";
import { checkFileName, pathsToApprove, writeLocation } from "./location.js";
import { notWritableError, writeBytes } from "./write.js";

export interface PatchOptions {
  approve: WriteApproval;
  /** Replace secrets in the diff and in quoted file lines with `[REDACTED]` (src/redaction/tool-output.ts). */
  redact?: boolean;
  chunkChars?: number;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface PatchResult {
  path: string;
  replacements: number;
  /** 1-based first line of each replacement, in the old file. */
  lines: number[];
  diff: string;
}

export async function patchFile(
  env: Environment,
  rawPath: string,
  oldString: string,
  newString: string,
  replaceAll: boolean,
  options: PatchOptions,
): Promise<PatchResult> {
  checkFileName(rawPath);
  const file = await readWholeText(env, rawPath, { signal: options.signal, timeoutMs: options.timeoutMs });
  const oldShown = options.redact ? textLineRedactor(file.text) : undefined;
  const plan = planReplacement(file.text, oldString, newString, replaceAll, file.path, {
    quoteLine: oldShown && ((i, line) => oldShown(i, [line])[0]!),
  });
  const problem = notWritableError(file.described);
  if (problem) throw problem;
  // The location the read resolved (and read from) is the one approved and written.
  const location = writeLocation(file.described);
  await options.approve(pathsToApprove(file.described));
  await writeBytes(env, location, Buffer.from(plan.text, "utf8"), {
    expectMd5: file.md5,
    chunkChars: options.chunkChars,
    signal: options.signal,
    timeoutMs: options.timeoutMs,
  });
  return {
    path: file.path,
    replacements: plan.edits.length,
    lines: plan.lines,
    diff: unifiedDiff(file.text, plan.edits, file.path, { show: oldShown && showRedacted(oldShown, textLineRedactor(plan.text)) }),
  };
}

/** The diff's lines as the model may see them: each side redacted against its whole file. */
function showRedacted(oldShown: (first: number, lines: string[]) => string[], newShown: (first: number, lines: string[]) => string[]): ShowLines {
  return (side, first, lines) => (side === "old" ? oldShown : newShown)(first, lines);
}
