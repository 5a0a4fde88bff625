/**
 * The memory store as the agent loop sees it: add / replace / remove / batches on the two targets,
 * and the frozen per-session snapshot that prompt assembly puts in the system prompt. The file
 * implementation is file-memory-store.ts; a test or an embedding application may bring another.
 *
 * Results are the Python original's JSON shapes (the tool returns them as they are).
 */

import type { MemoryTarget } from "./entries.js";

export type { MemoryTarget } from "./entries.js";

/** One operation of a batch, as the model sent it (checked by the store). */
export interface MemoryOperation {
  action?: unknown;
  content?: unknown;
  old_text?: unknown;
}

/** The JSON object a memory call answers with: `success` plus the original's fields. */
export interface MemoryResultBody {
  success: boolean;
  [field: string]: unknown;
}

export interface MemoryResult {
  body: MemoryResultBody;
  /**
   * A failure of the kind the model fixes by consolidating (over the limit, no entry matched, a
   * batch op that failed). The tool counts these per turn and stops the model after three.
   */
  consolidationFailure: boolean;
}

/** What prompt assembly puts in the system prompt for one session: each target's block, or null. */
export interface MemorySnapshot {
  readonly memory: string | null;
  readonly user: string | null;
  /** The non-null blocks joined by a blank line, or null when both are null. */
  readonly text: string | null;
}

export interface MemoryLimits {
  readonly memory: number;
  readonly user: number;
}

export interface MemoryStore {
  /** Character limit of each target. */
  readonly limits: MemoryLimits;
  /** The targets the configuration enables (`memory.memory_enabled`, `memory.user_profile_enabled`). */
  readonly enabledTargets: readonly MemoryTarget[];
  add(target: MemoryTarget, content: string): Promise<MemoryResult>;
  replace(target: MemoryTarget, oldText: string, content: string): Promise<MemoryResult>;
  remove(target: MemoryTarget, oldText: string): Promise<MemoryResult>;
  /** All or nothing; the limit is checked on the final state only. */
  applyBatch(target: MemoryTarget, operations: readonly unknown[]): Promise<MemoryResult>;
  /** The live entries (as on disk now), for a user-facing view; never sent to the model as they are. */
  entries(target: MemoryTarget): Promise<string[]>;
  /**
   * The session's snapshot: taken from disk on the session's first call, then returned unchanged
   * for the rest of the session, whatever is written meanwhile (the prompt prefix stays cacheable).
   */
  snapshot(sessionId: string): Promise<MemorySnapshot>;
  /** `to` continues `from` (a compaction's continuation): it gets `from`'s frozen snapshot, when there is one. */
  continueSession(from: string, to: string): void;
  /** Forgets the session's snapshot (the session ended); its next call takes a new one. */
  releaseSession(sessionId: string): void;
}
