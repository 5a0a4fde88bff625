/**
 * The memory blocks of the system prompt (the original's format): a 46×`═` line, the header with
 * usage, another 46×`═` line, then the entries joined by the delimiter. Entries the threat scan
 * flags are replaced by a placeholder here (the file keeps them, so the user can see and remove
 * them); a store grown past its limit outside the tool is cut head and tail.
 */

import { ENTRY_DELIMITER, MEMORY_FILE_NAMES, type MemoryTarget } from "./entries.js";
import { count, displayEntries } from "./memory-operations.js";

export const MEMORY_BLOCK_RULE = "═".repeat(46);

const TITLES: Readonly<Record<MemoryTarget, string>> = { memory: "MEMORY (your personal notes)", user: "USER PROFILE (who the user is)" };

function header(target: MemoryTarget, current: number, limit: number): string {
  const percent = limit > 0 ? Math.min(100, Math.floor((current / limit) * 100)) : 0;
  const over = current > limit ? " ⚠ OVER BUDGET" : "";
  return `${TITLES[target]} [${percent}% — ${count(current)}/${count(limit)} chars${over}]`;
}

/** The block for `entries` as read at session start, or null when there are none. */
export function renderMemoryBlock(target: MemoryTarget, entries: readonly string[], limit: number): string | null {
  if (entries.length === 0) return null;
  let content = displayEntries(entries, target).join(ENTRY_DELIMITER);
  const current = entries.join(ENTRY_DELIMITER).length;
  // The limit binds the tool only; an editor or a shell append can grow the file without bound.
  const cap = Math.max(limit * 2, 4000);
  if (content.length > cap) {
    const head = Math.floor(cap * 0.7);
    const tail = Math.floor(cap * 0.2);
    const omitted = content.length - head - tail;
    content = `${content.slice(0, head)}\n\n[... ${count(omitted)} chars truncated — memory over budget (${count(current)}/${count(limit)}); consolidate via memory(action=remove/replace) ...]\n\n${content.slice(-tail)}`;
  }
  return `${MEMORY_BLOCK_RULE}\n${header(target, current, limit)}\n${MEMORY_BLOCK_RULE}\n${content}`;
}

/** The block for a file that could not be read: the model learns memory is unavailable, and why, without the file's text. */
export function renderUnavailableBlock(target: MemoryTarget, reason: string): string {
  return `${MEMORY_BLOCK_RULE}\n${TITLES[target]} [unavailable]\n${MEMORY_BLOCK_RULE}\n[${MEMORY_FILE_NAMES[target]} was not loaded: ${reason} The memory tool refuses to change it until the user fixes it.]`;
}
