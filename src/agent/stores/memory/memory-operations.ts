/**
 * What each memory operation does to a list of entries, without touching a file: the rules and
 * the texts of the Python original (`tools/memory_tool.py`), so any `MemoryStore` can share them.
 * The caller holds the file's lock and passes the entries it just re-read.
 */

import { containsDelimiter, entriesUsage, MEMORY_FILE_NAMES, type MemoryTarget } from "./entries.js";
import type { MemoryResult, MemoryResultBody } from "./memory-store.js";
import { firstThreatMessage, MAX_SCAN_CHARS, scanForThreats } from "./threat-scan.js";

/** What an operation decided: write these entries, change nothing, or fail. */
export type MemoryPlan =
  | { kind: "write"; entries: string[]; message: string }
  | { kind: "unchanged"; message: string }
  | { kind: "fail"; result: MemoryResult };

/** `1,234` (the original formats counts with thousands separators). */
export const count = (n: number): string => n.toLocaleString("en-US");

export const failure = (body: Omit<MemoryResultBody, "success">, consolidationFailure = false): MemoryResult => ({
  body: { success: false, ...body },
  consolidationFailure,
});

/**
 * Entries as they may be shown to the model: an entry the threat scan flags is replaced by a
 * placeholder (an entry poisoned on disk must not reach the model through an error's
 * `current_entries` either), an entry too long to scan likewise. Every entry is scanned, even one
 * that looks like a placeholder already: placeholders never reach the file, so one there was
 * written by someone else (the original let `[BLOCKED: …] <payload>` through unscanned).
 */
export function displayEntries(entries: readonly string[], target: MemoryTarget): string[] {
  const file = MEMORY_FILE_NAMES[target];
  return entries.map((entry) => {
    if (entry.length > MAX_SCAN_CHARS) {
      return `[BLOCKED: ${file} entry too large to scan (${count(entry.length)} chars). Removed from system prompt; use memory(action=remove) to delete the original.]`;
    }
    const findings = scanForThreats(entry);
    if (findings.length === 0) return entry;
    return `[BLOCKED: ${file} entry contained threat pattern(s): ${findings.map((f) => f.id).join(", ")}. Removed from system prompt; use memory(action=remove) to delete the original.]`;
  });
}

/**
 * Why `content` (already trimmed) may not be stored, or undefined. Checked before the lock: an
 * entry longer than the whole store can never fit (and is not worth scanning), the delimiter
 * would split it when read back, and the threat scan guards the system prompt.
 */
export function contentProblem(content: string, limit: number): MemoryResult | undefined {
  if (content.length > limit) {
    return failure({ error: `The entry is ${count(content.length)} chars, more than this store's whole limit (${count(limit)} chars). Shorten it.` });
  }
  if (containsDelimiter(content)) {
    return failure({ error: "Content cannot contain a line holding only '§' (the entry separator of the memory file)." });
  }
  const threat = firstThreatMessage(content);
  return threat === undefined ? undefined : failure({ error: threat });
}

function usageText(entries: readonly string[], limit: number): string {
  return `${count(entriesUsage(entries))}/${count(limit)}`;
}

function withInventory(body: Omit<MemoryResultBody, "success">, entries: readonly string[], target: MemoryTarget, limit: number, usage = true): Omit<MemoryResultBody, "success"> {
  return { ...body, current_entries: displayEntries(entries, target), ...(usage ? { usage: usageText(entries, limit) } : {}) };
}

/** Indexes of the entries containing `oldText`, or a failure when none or several distinct ones do. */
function findEntry(entries: readonly string[], oldText: string): { index: number } | { none: true } | { several: string[] } {
  const matches = entries.flatMap((entry, i) => (entry.includes(oldText) ? [i] : []));
  if (matches.length === 0) return { none: true };
  const distinct = new Set(matches.map((i) => entries[i]));
  // Identical duplicates are one entry: the first is used.
  if (distinct.size > 1) return { several: matches.map((i) => preview(entries[i]!)) };
  return { index: matches[0]! };
}

function preview(entry: string, width = 80): string {
  return entry.length > width ? `${entry.slice(0, width)}...` : entry;
}

export function planAdd(entries: readonly string[], content: string, target: MemoryTarget, limit: number): MemoryPlan {
  if (entries.includes(content)) return { kind: "unchanged", message: "Entry already exists (no duplicate added)." };
  const next = [...entries, content];
  if (entriesUsage(next) > limit) {
    const current = entriesUsage(entries);
    return {
      kind: "fail",
      result: failure(
        withInventory(
          {
            error: `Memory at ${count(current)}/${count(limit)} chars. Adding this entry (${content.length} chars) would exceed the limit. Consolidate now: use 'replace' to merge overlapping entries into shorter ones or 'remove' stale or less important entries (see current_entries below), then retry this add — all in this turn.`,
          },
          entries,
          target,
          limit,
        ),
        true,
      ),
    };
  }
  return { kind: "write", entries: next, message: "Entry added." };
}

export function planReplace(entries: readonly string[], oldText: string, content: string, target: MemoryTarget, limit: number): MemoryPlan {
  const found = findEntry(entries, oldText);
  if ("none" in found) {
    return {
      kind: "fail",
      result: failure(withInventory({ error: `No entry matched '${oldText}'. Check current_entries below and retry with the exact text of the entry you want to replace.` }, entries, target, limit, false), true),
    };
  }
  if ("several" in found) return { kind: "fail", result: failure({ error: `Multiple entries matched '${oldText}'. Be more specific.`, matches: found.several }) };
  const next = [...entries];
  next[found.index] = content;
  const total = entriesUsage(next);
  if (total > limit) {
    return {
      kind: "fail",
      result: failure(
        withInventory(
          {
            error: `Replacement would put memory at ${count(total)}/${count(limit)} chars. Shorten the new content, or 'remove' other stale or less important entries to make room (see current_entries below), then retry — all in this turn.`,
          },
          entries,
          target,
          limit,
        ),
        true,
      ),
    };
  }
  return { kind: "write", entries: next, message: "Entry replaced." };
}

export function planRemove(entries: readonly string[], oldText: string, target: MemoryTarget, limit: number): MemoryPlan {
  const found = findEntry(entries, oldText);
  if ("none" in found) {
    return {
      kind: "fail",
      result: failure(withInventory({ error: `No entry matched '${oldText}'. Check current_entries below and retry with the exact text of the entry you want to remove.` }, entries, target, limit, false), true),
    };
  }
  if ("several" in found) return { kind: "fail", result: failure({ error: `Multiple entries matched '${oldText}'. Be more specific.`, matches: found.several }) };
  const next = [...entries];
  next.splice(found.index, 1);
  return { kind: "write", entries: next, message: "Entry removed." };
}

const str = (value: unknown): string => (typeof value === "string" ? value.trim() : "");

/**
 * Checks a batch before the lock: every add/replace content passes `contentProblem` (the threat
 * scan first, for every op, as the original does), every op is an object.
 */
export function batchContentProblem(operations: readonly unknown[], limit: number): MemoryResult | undefined {
  if (operations.length === 0) return failure({ error: "operations list is empty." });
  for (const [i, op] of operations.entries()) {
    if (typeof op !== "object" || op === null || Array.isArray(op)) {
      return failure({ error: `Operation ${i + 1}: must be an object {action, content?, old_text?}. No operations were applied (batch is all-or-nothing).` });
    }
    const { action, content } = op as { action?: unknown; content?: unknown };
    const text = str(content);
    if ((action === "add" || action === "replace") && text !== "") {
      const problem = contentProblem(text, limit);
      if (problem) return failure({ error: `Operation ${i + 1}: ${String(problem.body.error)} No operations were applied (batch is all-or-nothing).` });
    }
  }
  return undefined;
}

/** Applies `operations` to a copy of `entries`; the limit is checked on the final state only. */
export function planBatch(entries: readonly string[], operations: readonly unknown[], target: MemoryTarget, limit: number): MemoryPlan {
  const working = [...entries];
  const batchError = (message: string): MemoryPlan => ({
    kind: "fail",
    result: failure(withInventory({ error: `${message} No operations were applied (batch is all-or-nothing).` }, entries, target, limit), true),
  });
  for (const [i, raw] of operations.entries()) {
    const op = raw as { action?: unknown; content?: unknown; old_text?: unknown };
    const act = typeof op.action === "string" && op.action !== "" ? op.action : "unknown";
    const content = str(op.content);
    const oldText = str(op.old_text);
    const pos = `Operation ${i + 1} (${act})`;
    if (op.action === "add") {
      if (!content) return batchError(`${pos}: content is required.`);
      if (!working.includes(content)) working.push(content);
    } else if (op.action === "replace" || op.action === "remove") {
      if (!oldText) return batchError(`${pos}: old_text is required.`);
      if (op.action === "replace" && !content) return batchError(`${pos}: content is required (use action='remove' to delete).`);
      const found = findEntry(working, oldText);
      if ("none" in found) return batchError(`${pos}: no entry matched '${oldText}'.`);
      if ("several" in found) return batchError(`${pos}: '${oldText}' matched multiple distinct entries -- be more specific.`);
      if (op.action === "replace") working[found.index] = content;
      else working.splice(found.index, 1);
    } else {
      return batchError(`${pos}: unknown action. Use add, replace, or remove.`);
    }
  }
  const total = entriesUsage(working);
  if (total > limit) {
    return {
      kind: "fail",
      result: failure(
        withInventory(
          {
            error: `After applying all ${operations.length} operations, memory would be at ${count(total)}/${count(limit)} chars -- over the limit. Remove or shorten more entries in the same batch (see current_entries below), then retry.`,
          },
          entries,
          target,
          limit,
        ),
        true,
      ),
    };
  }
  return { kind: "write", entries: working, message: `Applied ${operations.length} operation(s).` };
}

/** The original's success shape: terminal, without the entries (echoing them invited the model to redo the write). */
export function successBody(entries: readonly string[], target: MemoryTarget, limit: number, message: string): MemoryResultBody {
  const current = entriesUsage(entries);
  const percent = limit > 0 ? Math.min(100, Math.floor((current / limit) * 100)) : 0;
  return {
    success: true,
    done: true,
    target,
    usage: `${percent}% — ${count(current)}/${count(limit)} chars`,
    entry_count: entries.length,
    message,
    note: "Write saved. This update is complete — do not repeat it.",
  };
}
