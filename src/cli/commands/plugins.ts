import { configPath, displayPath } from "../../config/home.js";
import { isPluginKey, setPluginEnabled } from "../../config/plugin-switch.js";

/**
 * `mibyan plugins enable|disable KEY`: edits config.yaml (comments kept). Exit 2 for a key that
 * cannot be a plugin key. The key need not be installed yet: enabling before installing is allowed,
 * and `mibyan plugins list` shows what was found.
 */
export async function switchPluginCommand(key: string, enabled: boolean, json: boolean): Promise<number> {
  if (!isPluginKey(key)) {
    process.stderr.write(`mibyan: not a plugin key: ${JSON.stringify(key)} (expected name or category/name, as mibyan plugins list shows)\n`);
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
