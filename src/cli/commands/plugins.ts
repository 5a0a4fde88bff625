import path from "node:path";
import type { Runtime } from "../boot.js";
import { configPath, displayPath, mibyanHome } from "../../config/home.js";
import { isPluginKey, setPluginEnabled } from "../../config/plugin-switch.js";

/**
 * `mibyan plugins enable|disable KEY`: edits config.yaml (comments kept). Exit 2 for a key that
 * cannot be a plugin key. The key need not be installed yet: enabling before installing is allowed,
 * and `mibyan plugins list` shows what was found.
 */
export async function switchPluginCommand(key: string, enabled: boolean, json: boolean): Promise<number> {
  if (!isPluginKey(key)) {
    process.stderr.write(`mibyan: not a plugin key: ${JSON.stringify(key)} (expected name, category/name or @scope/name, as mibyan plugins list shows)\n`);
    return 2;
  }
  const file = configPath();
  const result = await setPluginEnabled(file, key, enabled);
  if (json) {
    process.stdout.write(`${JSON.stringify({ key, enabled, changed: result.changed, config: file, plugins: { enabled: result.enabled, disabled: result.disabled } })}\n`);
    return 0;
  }
  const state = enabled ? "enabled" : "disabled";
  process.stdout.write(
    result.changed
      ? `Plugin ${key} ${state} in ${displayPath(file)}; it takes effect the next time mibyan starts.\n`
      : `Plugin ${key} was already ${state} in ${displayPath(file)}.\n`,
  );
  return 0;
}

/** `mibyan plugins list [--json]`: every plugin found, enabled or not, with its state, tools and hooks. */
export function listPluginsCommand(runtime: Runtime, json: boolean): number {
  const manager = runtime.plugins;
  const plugins = manager?.plugins ?? [];
  const safeMode = manager?.safeMode === true;
  if (json) {
    const rows = plugins.map((p) => ({ key: p.key, source: p.source, name: p.name, version: p.version, state: p.state, error: p.error ?? null, tools: p.tools, hooks: p.hooks, dir: p.dir }));
    process.stdout.write(`${JSON.stringify({ safeMode, plugins: rows }, null, 2)}\n`);
    return 0;
  }
  if (safeMode) {
    process.stdout.write("MIBYAN_SAFE_MODE is set: no plugin, shell hook or MCP server is loaded.\n");
    return 0;
  }
  if (plugins.length === 0) {
    process.stdout.write(`No plugins found (${displayPath(path.join(mibyanHome(), "plugins"))}, ${displayPath(path.join(mibyanHome(), "node_modules"))}; docs/plugins.md).\n`);
    return 0;
  }
  const lines = ["Plugins (docs/plugins.md):"];
  for (const p of plugins) {
    const mark = p.state === "enabled" ? "✓" : p.state === "failed" ? "✗" : "–";
    const version = p.version !== "" ? ` ${p.version}` : "";
    const registered = [p.tools.length > 0 ? `tools: ${p.tools.join(", ")}` : "", p.hooks.length > 0 ? `hooks: ${p.hooks.join(", ")}` : ""].filter((x) => x !== "");
    const why = p.error !== undefined ? ` — ${p.error}` : "";
    lines.push(`  ${mark} ${p.key}${version} (${p.source}): ${p.state}${why}${registered.length > 0 ? `; ${registered.join("; ")}` : ""}`);
  }
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}
