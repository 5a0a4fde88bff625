// `mibyan plugins enable|disable` edits config.yaml: the lists move, comments and other keys stay,
// a repeat changes nothing, and a file it cannot edit safely is left alone with a clear error.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { afterEach, describe, expect, it } from "vitest";

import { ConfigError, loadConfig } from "../src/config/index.js";
import { BIN, cliEnv, spawnCollect } from "./support/cli-run.js";
import { isPluginKey, setPluginEnabled } from "../src/config/plugin-switch.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function home(text?: string): { dir: string; file: string } {
  const dir = mkdtempSync(path.join(tmpdir(), "mibyan-plugin-switch-"));
  dirs.push(dir);
  const file = path.join(dir, "config.yaml");
  if (text !== undefined) writeFileSync(file, text, { mode: 0o640 });
  return { dir, file };
}

describe("setPluginEnabled", () => {
  it("enables into an existing list, keeping comments, other keys and the file mode", async () => {
    const { dir, file } = home("# my settings\nplugins:\n  enabled:\n    - lint # the linter\n  entries:\n    lint:\n      allow_tool_override: false\nterminal:\n  backend: local # keep local\n");
    const result = await setPluginEnabled(file, "tools/fmt", true);
    expect(result).toEqual({ changed: true, enabled: ["lint", "tools/fmt"], disabled: [] });
    const text = readFileSync(file, "utf8");
    expect(text).toContain("# my settings");
    expect(text).toContain("- lint # the linter");
    expect(text).toContain("backend: local # keep local");
    expect(statSync(file).mode & 0o777).toBe(0o640);
    const loaded = loadConfig({ home: dir });
    expect(loaded.config.plugins.enabled).toEqual(["lint", "tools/fmt"]);
    expect(loaded.config.plugins.entries).toEqual({ lint: { allowToolOverride: false } });
    expect(loaded.config.terminal.backend).toBe("local");
  });

  it("enabling a disabled plugin takes it out of disabled (which would win); disabling moves it back", async () => {
    const { dir, file } = home("plugins:\n  enabled: [a]\n  disabled: [b, c]\n");
    expect(await setPluginEnabled(file, "b", true)).toEqual({ changed: true, enabled: ["a", "b"], disabled: ["c"] });
    expect(await setPluginEnabled(file, "a", false)).toEqual({ changed: true, enabled: ["b"], disabled: ["c", "a"] });
    const loaded = loadConfig({ home: dir });
    expect(loaded.config.plugins.enabled).toEqual(["b"]);
    expect(loaded.config.plugins.disabled).toEqual(["c", "a"]);
  });

  it("a repeat changes nothing and does not rewrite the file", async () => {
    const { file } = home("plugins:\n  enabled: [a]   # odd spacing kept\n");
    const before = statSync(file).mtimeMs;
    const text = readFileSync(file, "utf8");
    expect(await setPluginEnabled(file, "a", true)).toEqual({ changed: false, enabled: ["a"], disabled: [] });
    expect(readFileSync(file, "utf8")).toBe(text);
    expect(statSync(file).mtimeMs).toBe(before);
  });

  it("creates the section, or the file (private), when missing", async () => {
    const { dir, file } = home("terminal:\n  backend: local\n");
    await setPluginEnabled(file, "a", true);
    expect(loadConfig({ home: dir }).config.plugins.enabled).toEqual(["a"]);
    const fresh = home();
    await setPluginEnabled(fresh.file, "x", false);
    expect(loadConfig({ home: fresh.dir }).config.plugins.disabled).toEqual(["x"]);
    expect(statSync(fresh.file).mode & 0o777).toBe(0o600);
  });

  it("refuses a list that is not a list, and leaves the file as it was", async () => {
    const { file } = home("plugins:\n  enabled: lint\n");
    await expect(setPluginEnabled(file, "a", true)).rejects.toBeInstanceOf(ConfigError);
    await expect(setPluginEnabled(file, "a", true)).rejects.toThrow("plugins.enabled must be a list of strings");
    expect(readFileSync(file, "utf8")).toBe("plugins:\n  enabled: lint\n");
  });

  it("refuses keys that are not plugin keys, before touching the file", async () => {
    for (const key of ["", "../x", "a/../../b", "a/b/c", "-rf", "a b", "./a", "@scope", "@/x", "@@a/b", "a/@b"]) expect(isPluginKey(key), key).toBe(false);
    for (const key of ["lint", "image_gen/openai", "disk-cleanup", "a.b", "@acme/mibyan-lint"]) expect(isPluginKey(key), key).toBe(true);
    const { file } = home("plugins:\n  enabled: []\n");
    await expect(setPluginEnabled(file, "../evil", true)).rejects.toThrow(/not a plugin key/);
    expect(readFileSync(file, "utf8")).toBe("plugins:\n  enabled: []\n");
  });
});

describe("mibyan plugins enable|disable", () => {
  it("edits config.yaml from the command line; a bad key is a usage error (exit 2) and writes nothing", async () => {
    const { dir, file } = home("# mine\nplugins:\n  disabled: [lint]\n");
    const run = (args: string[]) => spawnCollect(process.execPath, [BIN, "plugins", ...args], { env: cliEnv(dir, tmpdir()), cwd: dir });
    const enable = await run(["enable", "lint"]);
    expect(enable.status).toBe(0);
    expect(enable.stdout).toMatch(/^Plugin lint enabled in .*config\.yaml; it takes effect the next time mibyan starts\.\n$/);
    expect(loadConfig({ home: dir }).config.plugins).toMatchObject({ enabled: ["lint"], disabled: [] });
    const again = await run(["enable", "lint", "--json"]);
    expect(JSON.parse(again.stdout)).toMatchObject({ key: "lint", enabled: true, changed: false, plugins: { enabled: ["lint"], disabled: [] } });
    const bad = await run(["disable", "../../etc"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('not a plugin key: "../../etc"');
    expect(readFileSync(file, "utf8")).toContain("# mine");
    expect(loadConfig({ home: dir }).config.plugins.disabled).toEqual([]);
  });
});
