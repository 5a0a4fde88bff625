/**
 * The persisted allowlist (scope `always`): `approvals.allowlist` in `config.yaml`, one
 * entry per approval key:
 *
 *   approvals:
 *     allowlist:
 *       - rule: recursive-delete
 *         prefix: rm -f -r node_modules
 *         backend: local
 *         added: 2025-05-01T12:00:00.000Z
 *
 * `listApprovals` and `revokeApproval` serve `mibyan approvals`.
 */

import path from "node:path";

import type { Document, Node as YamlNode, YAMLMap, YAMLSeq } from "yaml";

import { getConfig, loadConfig } from "../../config/load-config.js";
import type { ApprovalAllowlistEntryConfig } from "../../config/config-types.js";
import { configPath, expandTilde, mibyanHome } from "../../config/home.js";
import { editConfigFile, type SourceStyle, type YamlModule } from "../../config/edit-config-file.js";
import { approvalId } from "./keys.js";
import type { ApprovalEntry, ApprovalKey } from "./types.js";
import type { EnvVars } from "../../util/env-vars.js";

export interface AllowlistFileOptions {
  /** The profile home (default: `MIBYAN_HOME` or `~/.mibyan`). */
  home?: string;
  /** Environment for the default home. */
  env?: EnvVars;
}

/** The backend an entry without one applies to. */
export const DEFAULT_ALLOWLIST_BACKEND = "local";

function resolvedHome(options: AllowlistFileOptions): string {
  const env = options.env ?? process.env;
  return options.home !== undefined ? path.resolve(expandTilde(options.home, env)) : mibyanHome(env);
}

/** The entry (with its id) for one `approvals.allowlist` item. */
export function entryFromConfig(item: ApprovalAllowlistEntryConfig): ApprovalEntry {
  const key = { rule: item.rule, prefix: item.prefix, backend: item.backend ?? DEFAULT_ALLOWLIST_BACKEND };
  const entry: ApprovalEntry = { id: approvalId(key), ...key };
  if (item.added !== undefined) entry.added = item.added;
  return entry;
}

/** The persisted approvals, in file order. Reads `config.yaml` now (throws `ConfigError` when it is unusable). */
export function listApprovals(options: AllowlistFileOptions = {}): ApprovalEntry[] {
  const loaded = loadConfig({ home: resolvedHome(options), env: options.env ?? process.env });
  return (loaded.config.approvals.allowlist ?? []).map(entryFromConfig);
}

function isEmptyNode(Y: YamlModule, node: unknown): boolean {
  return node === undefined || node === null || (Y.isScalar(node) && (node.value === null || node.value === undefined));
}

/** The `approvals.allowlist` sequence of `doc`, created when `create` and missing; undefined when missing. */
function allowlistNode(doc: Document, Y: YamlModule, create: boolean): YAMLSeq | undefined {
  if (doc.contents === null || doc.contents === undefined) {
    if (!create) return undefined;
    doc.contents = doc.createNode({}) as never;
  }
  if (!Y.isMap(doc.contents)) throw new Error("config.yaml: the top level must be a mapping of keys");
  let approvals = doc.get("approvals", true) as unknown;
  if (isEmptyNode(Y, approvals)) {
    if (!create) return undefined;
    doc.set("approvals", doc.createNode({}));
    approvals = doc.get("approvals", true);
  }
  if (!Y.isMap(approvals)) throw new Error("config.yaml: approvals must be a mapping");
  let list = (approvals as YAMLMap).get("allowlist", true) as unknown;
  if (isEmptyNode(Y, list)) {
    if (!create) return undefined;
    (approvals as YAMLMap).set("allowlist", doc.createNode([]));
    list = (approvals as YAMLMap).get("allowlist", true);
  }
  if (!Y.isSeq(list)) throw new Error("config.yaml: approvals.allowlist must be a list");
  return list;
}

/** The entry an item of the sequence stands for, or undefined when the item is not a valid entry. */
function itemEntry(Y: YamlModule, item: unknown): ApprovalEntry | undefined {
  if (!Y.isMap(item)) return undefined;
  const data = item.toJSON() as Record<string, unknown>;
  if (typeof data.rule !== "string" || typeof data.prefix !== "string") return undefined;
  const backend = typeof data.backend === "string" && data.backend !== "" ? data.backend : undefined;
  const added = typeof data.added === "string" ? data.added : undefined;
  return entryFromConfig({ rule: data.rule, prefix: data.prefix, ...(backend ? { backend } : {}), ...(added ? { added } : {}) });
}

// ---------------------------------------------------------------------------
// Splicing: new entries are inserted into (and revoked ones cut out of) the original
// text, so every other byte of the file stays as the user wrote it. `editConfigFile`
// checks the result against the Document API edit and falls back to printing the
// document when a layout is not handled here (flow style, empty sections, ...).
// ---------------------------------------------------------------------------

const lineStartOf = (src: string, offset: number): number => src.lastIndexOf("\n", offset - 1) + 1;

/** `offset` moved to the start of the next line unless it is at one already. */
function nextLineStart(src: string, offset: number): number {
  if (offset === 0 || src[offset - 1] === "\n") return offset;
  const nl = src.indexOf("\n", offset);
  return nl === -1 ? src.length : nl + 1;
}

/** The column of a node that starts its line after nothing but spaces (and, with `dash`, a `- `); undefined otherwise. */
function columnOf(src: string, offset: number, dash: boolean): number | undefined {
  const before = src.slice(lineStartOf(src, offset), offset);
  const m = (dash ? /^( *)- +$/ : /^( *)$/).exec(before);
  return m ? m[1]!.length : undefined;
}

function indentLines(text: string, width: number, newline: string): string {
  const pad = " ".repeat(width);
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => `${pad}${line}${newline}`)
    .join("");
}

function insertAt(src: string, offset: number, text: string, newline: string): string {
  const at = nextLineStart(src, offset);
  const glue = at === src.length && src.length > 0 && !src.endsWith("\n") ? newline : "";
  return src.slice(0, at) + glue + text + src.slice(at);
}

function entryNode(entry: ApprovalEntry): Record<string, string> {
  return { rule: entry.rule, prefix: entry.prefix, backend: entry.backend, ...(entry.added ? { added: entry.added } : {}) };
}

/** The source with `entries` appended to `approvals.allowlist`, or undefined when the layout is not a plain block layout. */
function spliceAdd(doc: Document, Y: YamlModule, style: SourceStyle, entries: readonly ApprovalEntry[]): string | undefined {
  const { source: src, newline: nl, indent, indentSeq } = style;
  const items = new Y.Document(entries.map(entryNode)).toString({ lineWidth: 0 });
  const root = doc.contents as unknown;
  const seqExtra = indentSeq ? indent : 0;
  if (root === null || root === undefined) {
    return insertAt(src, src.length, `approvals:${nl}${" ".repeat(indent)}allowlist:${nl}${indentLines(items, indent + seqExtra, nl)}`, nl);
  }
  if (!Y.isMap(root) || root.flow) return undefined;
  const approvals = root.get("approvals", true) as unknown;
  if (approvals === undefined) {
    const firstKey = root.items[0]?.key as YamlNode | undefined;
    if (!firstKey?.range || columnOf(src, firstKey.range[0], false) !== 0) return undefined;
    return insertAt(src, src.length, `approvals:${nl}${" ".repeat(indent)}allowlist:${nl}${indentLines(items, indent + seqExtra, nl)}`, nl);
  }
  if (!Y.isMap(approvals) || approvals.flow || !approvals.range) return undefined;
  const list = approvals.get("allowlist", true) as unknown;
  if (list === undefined) {
    const firstKey = approvals.items[0]?.key as YamlNode | undefined;
    const column = firstKey?.range ? columnOf(src, firstKey.range[0], false) : undefined;
    if (column === undefined) return undefined;
    return insertAt(src, approvals.range[1], `${" ".repeat(column)}allowlist:${nl}${indentLines(items, column + seqExtra, nl)}`, nl);
  }
  if (!Y.isSeq(list) || list.flow || !list.range || list.items.length === 0) return undefined;
  const first = list.items[0] as YamlNode | undefined;
  const column = first?.range ? columnOf(src, first.range[0], true) : undefined;
  if (column === undefined) return undefined;
  return insertAt(src, list.range[1], indentLines(items, column, nl), nl);
}

/** The source without item `index` of `approvals.allowlist`, or undefined when the layout is not a plain block layout. */
function spliceRemove(list: YAMLSeq, style: SourceStyle, index: number): string | undefined {
  const item = list.items[index] as YamlNode | undefined;
  const src = style.source;
  if (list.flow || !item?.range || columnOf(src, item.range[0], true) === undefined) return undefined;
  return src.slice(0, lineStartOf(src, item.range[0])) + src.slice(nextLineStart(src, item.range[1]));
}

/**
 * Adds keys to `approvals.allowlist` (skipping those already there) under the file lock,
 * keeping the rest of the file as written. Returns the entries actually added.
 */
export async function addApprovals(keys: readonly ApprovalKey[], options: AllowlistFileOptions = {}): Promise<ApprovalEntry[]> {
  const file = configPath(resolvedHome(options));
  const added = new Date().toISOString();
  return editConfigFile(file, (doc, Y, style) => {
    const present = new Set<string>();
    const existing = allowlistNode(doc, Y, false);
    for (const item of existing?.items ?? []) {
      const entry = itemEntry(Y, item);
      if (entry) present.add(entry.id);
    }
    const fresh: ApprovalEntry[] = [];
    for (const key of keys) {
      const id = approvalId(key);
      if (present.has(id)) continue;
      present.add(id);
      fresh.push({ id, rule: key.rule, prefix: key.prefix, backend: key.backend, added });
    }
    if (fresh.length === 0) return { changed: false, value: [] };
    const spliced = spliceAdd(doc, Y, style, fresh);
    const list = allowlistNode(doc, Y, true)!;
    list.flow = false;
    for (const entry of fresh) list.add(doc.createNode(entryNode(entry)));
    return { changed: true, value: fresh, ...(spliced !== undefined ? { spliced } : {}) };
  });
}

/** Removes the persisted approval with this id. Returns it, or undefined when there is none. */
export async function revokeApproval(id: string, options: AllowlistFileOptions = {}): Promise<ApprovalEntry | undefined> {
  const file = configPath(resolvedHome(options));
  return editConfigFile(file, (doc, Y, style) => {
    const list = allowlistNode(doc, Y, false);
    if (!list) return { changed: false, value: undefined };
    const index = list.items.findIndex((item) => itemEntry(Y, item)?.id === id);
    if (index === -1) return { changed: false, value: undefined };
    const entry = itemEntry(Y, list.items[index])!;
    const spliced = spliceRemove(list, style, index);
    list.items.splice(index, 1);
    // An emptied list reads as "not set", the same as the spliced text's bare `allowlist:`.
    if (list.items.length === 0) (doc.get("approvals", true) as YAMLMap).set("allowlist", doc.createNode(null));
    return { changed: true, value: entry, ...(spliced !== undefined ? { spliced } : {}) };
  });
}

// ---------------------------------------------------------------------------
// Stores the gate consults
// ---------------------------------------------------------------------------

/** Where the gate looks up and records `always` approvals. */
export interface AllowlistStore {
  /** Whether the key with this id is approved for good. */
  has(id: string): boolean;
  /** Persists keys; returns the entries added. */
  add(keys: readonly ApprovalKey[]): Promise<ApprovalEntry[]>;
  list(): ApprovalEntry[];
}

/** In memory only (tests, embedders that keep their own storage). */
export class MemoryAllowlist implements AllowlistStore {
  private readonly entries = new Map<string, ApprovalEntry>();

  constructor(initial: readonly ApprovalKey[] = []) {
    for (const key of initial) this.entries.set(approvalId(key), { id: approvalId(key), ...key });
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  async add(keys: readonly ApprovalKey[]): Promise<ApprovalEntry[]> {
    const added: ApprovalEntry[] = [];
    for (const key of keys) {
      const id = approvalId(key);
      if (this.entries.has(id)) continue;
      const entry = { id, ...key, added: new Date().toISOString() };
      this.entries.set(id, entry);
      added.push(entry);
    }
    return added;
  }

  list(): ApprovalEntry[] {
    return [...this.entries.values()];
  }
}

/**
 * `approvals.allowlist` of `config.yaml` in a profile home. Lookups go through the memoised
 * `getConfig` (the file is re-read when it changes, so other processes' additions show up);
 * an unreadable or invalid file counts as an empty allowlist (fail closed).
 */
export class ConfigAllowlist implements AllowlistStore {
  private readonly home: string;
  private cachedFrom: unknown;
  private cachedIds = new Set<string>();

  constructor(
    options: AllowlistFileOptions = {},
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {
    this.home = resolvedHome(options);
  }

  private ids(): Set<string> {
    let allowlist: readonly ApprovalAllowlistEntryConfig[] | undefined;
    try {
      allowlist = getConfig(this.home).config.approvals.allowlist ?? [];
    } catch (err) {
      this.onError(err);
      return new Set();
    }
    if (allowlist !== this.cachedFrom) {
      this.cachedFrom = allowlist;
      this.cachedIds = new Set(allowlist.map((item) => entryFromConfig(item).id));
    }
    return this.cachedIds;
  }

  has(id: string): boolean {
    return this.ids().has(id);
  }

  async add(keys: readonly ApprovalKey[]): Promise<ApprovalEntry[]> {
    return addApprovals(keys, { home: this.home });
  }

  list(): ApprovalEntry[] {
    return listApprovals({ home: this.home });
  }
}
