/**
 * Which sessions may see a process besides the one that started it: its
 * continuations. When an agent compresses a conversation into a new session,
 * or hands it over, the new session continues the old one and inherits its
 * background processes and their results. Nothing else does: knowing a process
 * id never authorises anything.
 *
 * Kept in `<home>/processes/sessions.json` (`{"version": 1, "parents": {child: parent}}`),
 * changed under a file lock and replaced atomically, so a one-shot CLI of the
 * continuing session sees what the agent recorded.
 */

import { mkdir, readFile, stat } from "node:fs/promises";
import path from "node:path";

import { writeFileAtomic } from "../util/atomic-file.js";
import { withFileLock } from "../util/file-lock.js";

/** Longest chain of continuations followed (a guard against cycles in a hand-edited file). */
const MAX_DEPTH = 64;
/** Session ids are free text from callers: bounded, printable, one line. */
const SESSION_ID = /^[^\s\u0000-\u001f\u007f]{1,200}$/;

export class InvalidSessionIdError extends Error {
  readonly code = "invalid_session";
  constructor(value: unknown) {
    super(`Not a valid session id: ${JSON.stringify(String(value)).slice(0, 80)} (1 to 200 printable characters, no spaces).`);
    this.name = "InvalidSessionIdError";
  }
}

export function checkSessionId(value: unknown): string {
  if (typeof value !== "string" || !SESSION_ID.test(value)) throw new InvalidSessionIdError(value);
  return value;
}

export function sessionsPath(home: string): string {
  return path.join(home, "processes", "sessions.json");
}

export class SessionLineage {
  readonly #file: string | undefined;
  /** child → parent; the file's content when persisted, else the only copy. */
  #parents = new Map<string, string>();
  #loadedAt = -1;

  /** `file`: where continuations persist; without it they live in this object only. */
  constructor(file?: string) {
    this.#file = file;
  }

  /** Records that `child` continues `parent` (a compressed or handed-over session). A child has one parent. */
  async recordContinuation(parent: string, child: string): Promise<void> {
    checkSessionId(parent);
    checkSessionId(child);
    if (parent === child) throw new InvalidSessionIdError(child);
    if (this.#file === undefined) {
      this.#parents.set(child, parent);
      return;
    }
    const file = this.#file;
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    await withFileLock(file, async (assertHeld) => {
      const parents = await readParents(file);
      const existing = parents.get(child);
      if (existing !== undefined && existing !== parent) {
        throw new Error(`Session ${child} already continues ${existing}; a session continues one session only.`);
      }
      parents.set(child, parent);
      assertHeld();
      await writeFileAtomic(file, `${JSON.stringify({ version: 1, parents: Object.fromEntries(parents) }, null, 2)}\n`);
      this.#parents = parents;
    });
  }

  /** Whether `reader` is `owner` or one of its continuations (at any depth). */
  async mayRead(owner: string, reader: string): Promise<boolean> {
    if (owner === reader) return true;
    await this.#refresh();
    let current = reader;
    for (let depth = 0; depth < MAX_DEPTH; depth++) {
      const parent = this.#parents.get(current);
      if (parent === undefined) return false;
      if (parent === owner) return true;
      current = parent;
    }
    return false;
  }

  /** Re-reads the file when it changed (continuations recorded by other processes). */
  async #refresh(): Promise<void> {
    if (this.#file === undefined) return;
    const mtime = await stat(this.#file).then(
      (s) => s.mtimeMs,
      () => 0,
    );
    if (mtime === this.#loadedAt) return;
    this.#parents = await readParents(this.#file);
    this.#loadedAt = mtime;
  }
}

async function readParents(file: string): Promise<Map<string, string>> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return new Map();
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${file} is not valid JSON; fix or remove it (it records which sessions continue which).`);
  }
  const parents = (parsed as { parents?: unknown })?.parents;
  const map = new Map<string, string>();
  if (parents === null || typeof parents !== "object" || Array.isArray(parents)) return map;
  for (const [child, parent] of Object.entries(parents as Record<string, unknown>)) {
    // A malformed pair grants nothing.
    if (typeof parent === "string" && SESSION_ID.test(child) && SESSION_ID.test(parent)) map.set(child, parent);
  }
  return map;
}
