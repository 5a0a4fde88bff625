/**
 * `mibyan plugins enable|disable <key>`: moves a plugin key between `plugins.enabled` and
 * `plugins.disabled` in config.yaml, through the locked, comment-keeping editor
 * (edit-config-file.ts). Enabling also removes the key from `disabled`, since `disabled` wins
 * and an enable that changes nothing would be a silent no-op.
 */

import type { Document, YAMLSeq } from "yaml";

import { ConfigError } from "./config-error.js";
import { editConfigFile, type YamlModule } from "./edit-config-file.js";

export interface PluginSwitchResult {
  /** Whether config.yaml was written. */
  changed: boolean;
  /** The plugin's lists after the edit. */
  enabled: string[];
  disabled: string[];
}

/** A key as `mibyan plugins list` shows it: `name`, `category/name` or `@scope/name`; nothing that could walk out of the plugin folders. */
export function isPluginKey(key: string): boolean {
  // `name`, `category/name` (plugin folders) or `@scope/name` (an npm package's folder).
  return /^@?[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)?$/.test(key) && (!key.startsWith("@") || key.includes("/"));
}

/** Puts `key` in `plugins.enabled` (and takes it out of `plugins.disabled`), or the reverse. */
export async function setPluginEnabled(file: string, key: string, enabled: boolean): Promise<PluginSwitchResult> {
  if (!isPluginKey(key)) throw new TypeError(`not a plugin key: ${JSON.stringify(key)} (expected name, category/name or @scope/name, as \`mibyan plugins list\` shows)`);
  return editConfigFile(file, (doc, Y) => {
    const add = enabled ? "enabled" : "disabled";
    const drop = enabled ? "disabled" : "enabled";
    const added = addToList(doc, Y, file, add, key);
    const dropped = removeFromList(doc, Y, file, drop, key);
    return { changed: added || dropped, value: { changed: added || dropped, enabled: names(doc, "enabled"), disabled: names(doc, "disabled") } };
  });
}

function listAt(doc: Document, Y: YamlModule, file: string, list: string): YAMLSeq | undefined {
  const plugins = doc.get("plugins", true) as unknown;
  if (isUnset(Y, plugins)) return undefined;
  if (!Y.isMap(plugins)) throw new ConfigError("plugins must be a mapping", { kind: "type", file, key: "plugins" });
  const node = plugins.get(list, true) as unknown;
  if (isUnset(Y, node)) return undefined;
  if (!Y.isSeq(node)) throw new ConfigError(`plugins.${list} must be a list of strings`, { kind: "type", file, key: `plugins.${list}` });
  return node;
}

function addToList(doc: Document, Y: YamlModule, file: string, list: string, key: string): boolean {
  const seq = listAt(doc, Y, file, list);
  if (seq === undefined) {
    const plugins = doc.get("plugins", true) as unknown;
    if (Y.isMap(plugins)) plugins.set(list, doc.createNode([key]));
    else doc.set("plugins", doc.createNode({ [list]: [key] }));
    return true;
  }
  if (seq.items.some((item) => Y.isScalar(item) && item.value === key)) return false;
  seq.add(doc.createNode(key));
  return true;
}

function removeFromList(doc: Document, Y: YamlModule, file: string, list: string, key: string): boolean {
  const seq = listAt(doc, Y, file, list);
  if (seq === undefined) return false;
  const before = seq.items.length;
  seq.items = seq.items.filter((item) => !(Y.isScalar(item) && item.value === key));
  return seq.items.length !== before;
}

function names(doc: Document, list: string): string[] {
  const plugins = doc.toJS() as { plugins?: Record<string, unknown> } | null;
  const value = plugins?.plugins?.[list];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

function isUnset(Y: YamlModule, node: unknown): boolean {
  return node === undefined || node === null || (Y.isScalar(node) && node.value === null);
}
