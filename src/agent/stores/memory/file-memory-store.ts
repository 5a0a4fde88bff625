/**
 * `MemoryStore` on the two files of `<home>/memories/`. Every write takes the file's lock
 * (proper-lockfile, util/file-lock.ts), re-reads the file under it, so entries another session or
 * process wrote meanwhile are kept, refuses to rewrite a file that would not round-trip (edited by
 * hand: a `.bak.<ms>` copy is kept and the error says what to do), and replaces the file
 * atomically. Snapshots are taken once per session and never change afterwards.
 */

import type { MemoryConfig } from "../../../config/config-types.js";
import { mibyanHome } from "../../../config/home.js";
import { withFileLock } from "../../../util/file-lock.js";
import { MEMORY_TARGETS, parseEntries, roundTripProblem, serializeEntries, type MemoryTarget } from "./entries.js";
import { backupMemoryFile, checkMemoriesDir, MemoryFileError, memoryFilePath, readMemoryFile, writeMemoryFile } from "./memory-files.js";
import { batchContentProblem, contentProblem, failure, planAdd, planBatch, planRemove, planReplace, successBody, type MemoryPlan } from "./memory-operations.js";
import { renderMemoryBlock, renderUnavailableBlock } from "./memory-prompt.js";
import type { MemoryLimits, MemoryResult, MemorySnapshot, MemoryStore } from "./memory-store.js";

export const DEFAULT_MEMORY_CHAR_LIMIT = 2200;
export const DEFAULT_USER_CHAR_LIMIT = 1375;
/** Sessions whose snapshot is kept; past this the oldest is forgotten (and re-read if it asks again). */
const MAX_SNAPSHOT_SESSIONS = 10_000;

export interface FileMemoryStoreOptions {
  /** The profile home (default: `mibyanHome()`). */
  home?: string | undefined;
  memoryCharLimit?: number | undefined;
  userCharLimit?: number | undefined;
  memoryEnabled?: boolean | undefined;
  userProfileEnabled?: boolean | undefined;
  /** Clock for `.bak.<ms>` names (tests). */
  now?: (() => number) | undefined;
}

/** The store options `config.yaml`'s `memory` section gives (`getConfig().config.memory`). */
export function memoryStoreOptionsFromConfig(memory: Partial<MemoryConfig>, home?: string): FileMemoryStoreOptions {
  return {
    home,
    memoryCharLimit: memory.memoryCharLimit,
    userCharLimit: memory.userCharLimit,
    memoryEnabled: memory.memoryEnabled,
    userProfileEnabled: memory.userProfileEnabled,
  };
}

export class FileMemoryStore implements MemoryStore {
  readonly home: string;
  readonly limits: MemoryLimits;
  readonly enabledTargets: readonly MemoryTarget[];
  private readonly now: () => number;
  private readonly snapshots = new Map<string, Promise<MemorySnapshot>>();

  constructor(options: FileMemoryStoreOptions = {}) {
    this.home = options.home ?? mibyanHome();
    this.limits = Object.freeze({
      memory: options.memoryCharLimit ?? DEFAULT_MEMORY_CHAR_LIMIT,
      user: options.userCharLimit ?? DEFAULT_USER_CHAR_LIMIT,
    });
    this.enabledTargets = Object.freeze(
      MEMORY_TARGETS.filter((t) => (t === "memory" ? options.memoryEnabled !== false : options.userProfileEnabled !== false)),
    );
    this.now = options.now ?? Date.now;
  }

  add(target: MemoryTarget, content: string): Promise<MemoryResult> {
    const text = content.trim();
    return this.mutate(
      target,
      () => (text === "" ? failure({ error: "Content cannot be empty." }) : contentProblem(text, this.limits[target])),
      (entries) => planAdd(entries, text, target, this.limits[target]),
    );
  }

  replace(target: MemoryTarget, oldText: string, content: string): Promise<MemoryResult> {
    const old = oldText.trim();
    const text = content.trim();
    return this.mutate(
      target,
      () => {
        if (old === "") return failure({ error: "old_text cannot be empty." });
        if (text === "") return failure({ error: "new_content cannot be empty. Use 'remove' to delete entries." });
        return contentProblem(text, this.limits[target]);
      },
      (entries) => planReplace(entries, old, text, target, this.limits[target]),
    );
  }

  remove(target: MemoryTarget, oldText: string): Promise<MemoryResult> {
    const old = oldText.trim();
    return this.mutate(
      target,
      () => (old === "" ? failure({ error: "old_text cannot be empty." }) : undefined),
      (entries) => planRemove(entries, old, target, this.limits[target]),
    );
  }

  applyBatch(target: MemoryTarget, operations: readonly unknown[]): Promise<MemoryResult> {
    return this.mutate(
      target,
      () => batchContentProblem(operations, this.limits[target]),
      (entries) => planBatch(entries, operations, target, this.limits[target]),
    );
  }

  async entries(target: MemoryTarget): Promise<string[]> {
    if (checkMemoriesDir(this.home, false) === undefined) return [];
    return parseEntries(readMemoryFile(memoryFilePath(this.home, target)) ?? "");
  }

  snapshot(sessionId: string): Promise<MemorySnapshot> {
    let taken = this.snapshots.get(sessionId);
    if (taken === undefined) {
      if (this.snapshots.size >= MAX_SNAPSHOT_SESSIONS) this.snapshots.delete(this.snapshots.keys().next().value!);
      taken = Promise.resolve().then(() => this.takeSnapshot());
      this.snapshots.set(sessionId, taken);
      // A read that failed unexpectedly (not a refused file, which gives a block) is not kept: the next call tries again.
      taken.catch(() => {
        if (this.snapshots.get(sessionId) === taken) this.snapshots.delete(sessionId);
      });
    }
    return taken;
  }

  /**
   * `to` continues `from` (a compacted conversation): it keeps `from`'s frozen snapshot, so the
   * system prompt stays the same bytes across the compaction. Nothing happens when `from` has none.
   */
  continueSession(from: string, to: string): void {
    const taken = this.snapshots.get(from);
    if (taken !== undefined && !this.snapshots.has(to)) this.snapshots.set(to, taken);
  }

  releaseSession(sessionId: string): void {
    this.snapshots.delete(sessionId);
  }

  private takeSnapshot(): MemorySnapshot {
    const blocks: Record<MemoryTarget, string | null> = { memory: null, user: null };
    let dir: string | undefined;
    let dirProblem: string | undefined;
    try {
      dir = checkMemoriesDir(this.home, false);
    } catch (err) {
      if (!(err instanceof MemoryFileError)) throw err;
      dirProblem = err.message;
    }
    for (const target of this.enabledTargets) {
      if (dirProblem !== undefined) {
        blocks[target] = renderUnavailableBlock(target, dirProblem);
        continue;
      }
      if (dir === undefined) continue;
      try {
        blocks[target] = renderMemoryBlock(target, parseEntries(readMemoryFile(memoryFilePath(this.home, target)) ?? ""), this.limits[target]);
      } catch (err) {
        if (!(err instanceof MemoryFileError)) throw err;
        blocks[target] = renderUnavailableBlock(target, err.message);
      }
    }
    const present = [blocks.memory, blocks.user].filter((b): b is string => b !== null);
    return Object.freeze({ memory: blocks.memory, user: blocks.user, text: present.length > 0 ? present.join("\n\n") : null });
  }

  /**
   * One write: checks that need no file (`prepare`), then under the lock the re-read, the
   * round-trip guard, the operation (`plan`) on what is on disk now, and the atomic replace.
   */
  private async mutate(target: MemoryTarget, prepare: () => MemoryResult | undefined, plan: (entries: string[]) => MemoryPlan): Promise<MemoryResult> {
    if (!this.enabledTargets.includes(target)) {
      const key = target === "memory" ? "memory.memory_enabled" : "memory.user_profile_enabled";
      return failure({ error: `The '${target}' memory target is turned off (${key}: false in config.yaml); nothing was written.` });
    }
    const early = prepare();
    if (early !== undefined) return early;
    const limit = this.limits[target];
    const file = memoryFilePath(this.home, target);
    try {
      checkMemoriesDir(this.home, true);
      return await withFileLock(file, async (assertHeld) => {
        const raw = readMemoryFile(file);
        if (raw !== undefined) {
          const problem = roundTripProblem(raw, limit);
          if (problem !== undefined) return this.refuseDrift(file, raw, problem);
        }
        const decided = plan(parseEntries(raw ?? ""));
        if (decided.kind === "fail") return decided.result;
        if (decided.kind === "unchanged") return { body: successBody(parseEntries(raw ?? ""), target, limit, decided.message), consolidationFailure: false };
        // The folder is checked again right before the write: a link planted while we held the lock is refused too.
        checkMemoriesDir(this.home, false);
        assertHeld();
        await writeMemoryFile(file, serializeEntries(decided.entries));
        return { body: successBody(decided.entries, target, limit, decided.message), consolidationFailure: false };
      });
    } catch (err) {
      if (err instanceof MemoryFileError) return failure({ error: `${err.message} Nothing was written.` });
      return failure({ error: `Could not write ${file}: ${(err as Error).message}. Nothing was written.` });
    }
  }

  private async refuseDrift(file: string, raw: string, problem: string): Promise<MemoryResult> {
    const backup = await backupMemoryFile(file, raw, this.now());
    return failure({
      error: `Refusing to write ${file}: ${problem}, so rewriting it would lose text (probably added by hand, by a shell command or by the patch tool). A copy was saved to ${backup}. Rewrite the file as a clean list of entries separated by lines holding only §, or move the extra text out of it, then retry.`,
      drift_backup: backup,
      remediation: "Open the .bak file, add the missing entries with memory(action=add, content=...) one at a time, then rewrite or remove the original file so it is a clean list.",
    });
  }
}
