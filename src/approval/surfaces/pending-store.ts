/**
 * Pending gateway approvals as plain data, and where they are kept.
 *
 * A `PendingApproval` is JSON all the way down (send it to a chat platform or a web page,
 * store it, parse it back with `parsePendingApproval`). Its command and match prefixes
 * are redacted for display; the exact command is kept only as a SHA-256 hash.
 *
 * A store records three facts per id, each written once: the pending approval, its
 * resolution (the first resolver wins) and its consumption (the first waiter wins).
 * `MemoryPendingStore` lives in one process; `FilePendingStore` keeps one directory
 * (by default `<profile home>/approvals/pending/`) that several processes can share.
 */

import { link, mkdir, readdir, readFile, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { randomBytes } from "node:crypto";

import { mibyanHome } from "../../config/home.js";
import type { RuleCategory } from "../types.js";
import { writeFileAtomic } from "../../util/atomic-file.js";
import type { ApprovalScope } from "../flow/types.js";

export interface PendingMatch {
  rule: string;
  description: string;
  category: RuleCategory;
  /** The normalised prefix, redacted. */
  prefix: string;
  detail?: string;
}

export interface PendingApproval {
  /** Random, unguessable; `resolvePending(id, answer)` takes it. */
  id: string;
  /** The command, redacted for display. */
  command: string;
  /** SHA-256 (hex) of the exact command. */
  commandSha256: string;
  matches: PendingMatch[];
  sessionId: string;
  backend: string;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601; after it the approval can no longer be resolved and the command is denied. */
  expiresAt: string;
  /** What the smart reviewer said when it escalated. */
  smartReason?: string;
}

export interface PendingResolution {
  scope: ApprovalScope;
  reason?: string;
  /** Who answered (a chat user id, ...), for the record. */
  approver?: string;
  /** ISO 8601. */
  resolvedAt: string;
}

export interface PendingRecord {
  pending: PendingApproval;
  resolution?: PendingResolution;
  consumed: boolean;
}

export interface PendingApprovalStore {
  /** True when other processes may resolve records (the gateway then polls). */
  readonly shared: boolean;
  put(pending: PendingApproval): Promise<void>;
  get(id: string): Promise<PendingRecord | undefined>;
  /** Records the resolution unless one exists; true when this call's resolution won. */
  resolve(id: string, resolution: PendingResolution): Promise<boolean>;
  /** Marks a resolved record consumed; true for the first caller only. */
  consume(id: string): Promise<boolean>;
  list(): Promise<PendingRecord[]>;
  remove(id: string): Promise<void>;
}

/** Ids are used as file names: only this shape is accepted anywhere. */
export const PENDING_ID = /^[A-Za-z0-9_-]{8,100}$/;

const SCOPES: readonly string[] = ["once", "session", "always", "deny"];

function fail(message: string): never {
  throw new TypeError(`not a pending approval: ${message}`);
}

const isIsoDate = (v: unknown): v is string => typeof v === "string" && !Number.isNaN(Date.parse(v));

/** Checks plain data (for example `JSON.parse` of a stored or transmitted approval) and returns it typed. */
export function parsePendingApproval(value: unknown): PendingApproval {
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail("not an object");
  const v = value as Record<string, unknown>;
  if (typeof v.id !== "string" || !PENDING_ID.test(v.id)) fail("bad id");
  for (const key of ["command", "commandSha256", "sessionId", "backend"] as const) {
    if (typeof v[key] !== "string") fail(`${key} must be a string`);
  }
  if (!isIsoDate(v.createdAt) || !isIsoDate(v.expiresAt)) fail("createdAt and expiresAt must be ISO dates");
  if (!Array.isArray(v.matches)) fail("matches must be a list");
  const matches = v.matches.map((m: unknown): PendingMatch => {
    if (typeof m !== "object" || m === null) fail("bad match");
    const r = m as Record<string, unknown>;
    if (typeof r.rule !== "string" || typeof r.description !== "string" || typeof r.category !== "string" || typeof r.prefix !== "string") {
      fail("bad match");
    }
    const match: PendingMatch = { rule: r.rule, description: r.description, category: r.category as RuleCategory, prefix: r.prefix };
    if (typeof r.detail === "string") match.detail = r.detail;
    return match;
  });
  const pending: PendingApproval = {
    id: v.id,
    command: v.command as string,
    commandSha256: v.commandSha256 as string,
    matches,
    sessionId: v.sessionId as string,
    backend: v.backend as string,
    createdAt: v.createdAt,
    expiresAt: v.expiresAt,
  };
  if (typeof v.smartReason === "string") pending.smartReason = v.smartReason;
  return pending;
}

function parseResolution(value: unknown): PendingResolution | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.scope !== "string" || !SCOPES.includes(v.scope) || !isIsoDate(v.resolvedAt)) return undefined;
  const resolution: PendingResolution = { scope: v.scope as ApprovalScope, resolvedAt: v.resolvedAt };
  if (typeof v.reason === "string") resolution.reason = v.reason;
  if (typeof v.approver === "string") resolution.approver = v.approver;
  return resolution;
}

// ---------------------------------------------------------------------------
// In memory
// ---------------------------------------------------------------------------

export class MemoryPendingStore implements PendingApprovalStore {
  readonly shared = false;
  private readonly records = new Map<string, PendingRecord>();

  async put(pending: PendingApproval): Promise<void> {
    this.records.set(pending.id, { pending: structuredClone(pending), consumed: false });
  }

  async get(id: string): Promise<PendingRecord | undefined> {
    const record = this.records.get(id);
    return record ? structuredClone(record) : undefined;
  }

  async resolve(id: string, resolution: PendingResolution): Promise<boolean> {
    const record = this.records.get(id);
    if (!record || record.resolution) return false;
    record.resolution = structuredClone(resolution);
    return true;
  }

  async consume(id: string): Promise<boolean> {
    const record = this.records.get(id);
    if (!record || !record.resolution || record.consumed) return false;
    record.consumed = true;
    return true;
  }

  async list(): Promise<PendingRecord[]> {
    return [...this.records.values()].map((r) => structuredClone(r));
  }

  async remove(id: string): Promise<void> {
    this.records.delete(id);
  }
}

// ---------------------------------------------------------------------------
// On disk
// ---------------------------------------------------------------------------

/** How long finished or expired records stay on disk. */
const RETENTION_MS = 24 * 60 * 60 * 1000;

/** The default directory of a `FilePendingStore`: `<profile home>/approvals/pending`. */
export function pendingStoreDir(home: string = mibyanHome()): string {
  return path.join(home, "approvals", "pending");
}

/**
 * One directory, three files per id: `<id>.json` (the approval, written atomically),
 * `<id>.resolution.json` and `<id>.consumed`. The last two are created exclusively
 * (hard link of a complete temporary file; `wx`), so exactly one resolver and one
 * consumer win, across processes, without a lock.
 */
export class FilePendingStore implements PendingApprovalStore {
  readonly shared = true;

  constructor(readonly dir: string) {}

  private file(id: string, suffix: string): string {
    if (!PENDING_ID.test(id)) throw new TypeError(`invalid pending approval id ${JSON.stringify(id)}`);
    return path.join(this.dir, `${id}${suffix}`);
  }

  async put(pending: PendingApproval): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(this.file(pending.id, ".json"), `${JSON.stringify(pending)}\n`);
    await this.prune(Date.now()).catch(() => undefined);
  }

  async get(id: string): Promise<PendingRecord | undefined> {
    if (!PENDING_ID.test(id)) return undefined;
    let pending: PendingApproval;
    try {
      pending = parsePendingApproval(JSON.parse(await readFile(this.file(id, ".json"), "utf8")));
    } catch {
      return undefined;
    }
    const record: PendingRecord = { pending, consumed: false };
    try {
      const resolution = parseResolution(JSON.parse(await readFile(this.file(id, ".resolution.json"), "utf8")));
      if (resolution) record.resolution = resolution;
    } catch {
      // Not resolved.
    }
    try {
      await readFile(this.file(id, ".consumed"));
      record.consumed = true;
    } catch {
      // Not consumed.
    }
    return record;
  }

  async resolve(id: string, resolution: PendingResolution): Promise<boolean> {
    const target = this.file(id, ".resolution.json");
    const tmp = path.join(this.dir, `.${id}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
    await writeFile(tmp, `${JSON.stringify(resolution)}\n`, { mode: 0o600, flag: "wx" });
    try {
      await link(tmp, target);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw err;
    } finally {
      await unlink(tmp).catch(() => undefined);
    }
  }

  async consume(id: string): Promise<boolean> {
    try {
      await writeFile(this.file(id, ".consumed"), "", { flag: "wx", mode: 0o600 });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw err;
    }
  }

  async list(): Promise<PendingRecord[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return [];
    }
    const ids = names.filter((n) => n.endsWith(".json") && !n.endsWith(".resolution.json") && !n.startsWith(".")).map((n) => n.slice(0, -5));
    const records = await Promise.all(ids.map((id) => this.get(id)));
    return records.filter((r): r is PendingRecord => r !== undefined);
  }

  async remove(id: string): Promise<void> {
    await Promise.all([".json", ".resolution.json", ".consumed"].map((s) => unlink(this.file(id, s)).catch(() => undefined)));
  }

  /** Drops records that expired (or were created) more than a day ago. */
  async prune(now: number): Promise<void> {
    for (const record of await this.list()) {
      if (Date.parse(record.pending.expiresAt) + RETENTION_MS < now) await this.remove(record.pending.id);
    }
  }
}
