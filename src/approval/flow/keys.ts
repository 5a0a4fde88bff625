/**
 * Approval keys: (rule id, normalised prefix, backend). Approving one key never
 * approves another rule, another prefix or another backend, and never a category.
 */

import { createHash } from "node:crypto";

import type { RuleMatch } from "../types.js";
import type { ApprovalKey } from "./types.js";

/** The key a match needs on `backend`. */
export function keyOf(match: RuleMatch, backend: string): ApprovalKey {
  return { rule: match.rule, prefix: match.prefix, backend };
}

/** A stable short id of a key (12 hex digits of SHA-256 over the three parts). */
export function approvalId(key: ApprovalKey): string {
  return createHash("sha256").update(JSON.stringify([key.rule, key.prefix, key.backend])).digest("hex").slice(0, 12);
}

/** SHA-256 (hex) of a command's exact text, for one-time grants and pending approvals. */
export function commandHash(command: string): string {
  return createHash("sha256").update(command).digest("hex");
}

/** The distinct keys of `matches` on `backend`, in order. */
export function keysOf(matches: readonly RuleMatch[], backend: string): ApprovalKey[] {
  const seen = new Set<string>();
  const keys: ApprovalKey[] = [];
  for (const match of matches) {
    const key = keyOf(match, backend);
    const id = approvalId(key);
    if (seen.has(id)) continue;
    seen.add(id);
    keys.push(key);
  }
  return keys;
}
