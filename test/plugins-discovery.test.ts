// Acceptance 1-4 and 16 (safe mode) of spec 3.3, and the attacks on what is read before a plugin is
// enabled: manifests, package.json, folder names, symlinks, the project folder.
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";

import { describe, expect, it } from "vitest";

import { isTruthyEnv } from "../src/plugins/index.js";
import { config, entrySource, imported, load, plugin, sandbox, warnings, write } from "./fixtures/plugins/plugin-home.js";

const ADD_TOOL = (name: string) => `ctx.registerTool({ name: ${JSON.stringify(name)}, toolset: "demo", schema: { description: "demo" }, handler: () => "hi" });`;

describe("discovery and precedence (1)", () => {
  it("finds <name>/ and <category>/<name>/ (plugin.yaml or plugin.yml) and ignores deeper folders", async () => {
    const box = sandbox();
    const plugins = path.join(box.home, "plugins");
    plugin(plugins, "flat", box.marks);
    plugin(plugins, "image_gen/openai", box.marks);
    const yml = path.join(plugins, "yml-one");
    write(path.join(yml, "plugin.yml"), "name: yml-one\n");
    write(path.join(yml, "index.js"), entrySource(box.marks, "yml-one"));
    plugin(plugins, "a/b/too-deep", box.marks);
    config(box, "plugins:\n  enabled: [flat, image_gen/openai, yml-one, a/b/too-deep, a/b]\n");
    const manager = await load(box);
    expect(manager.plugins.map((p) => [p.key, p.state])).toEqual([
      ["flat", "enabled"],
      ["image_gen/openai", "enabled"],
      ["yml-one", "enabled"],
    ]);
    expect(imported(box, "a/b/too-deep")).toBe(false);
    await manager.close();
  });

  it("scans ./.mibyan/plugins only when MIBYAN_ENABLE_PROJECT_PLUGINS is 1/true/yes/on, in any case", async () => {
    for (const value of ["1", "true", "YES", " On "]) expect(isTruthyEnv(value)).toBe(true);
    for (const value of ["0", "false", "no", "off", "", "2", "enabled", undefined]) expect(isTruthyEnv(value)).toBe(false);
    for (const value of ["0", "false", "no", "off", "FALSE", "anything"]) {
      const box = sandbox();
      plugin(path.join(box.cwd, ".mibyan", "plugins"), "proj", box.marks);
      config(box, "plugins:\n  enabled: [proj]\n");
      const manager = await load(box, { env: { MIBYAN_ENABLE_PROJECT_PLUGINS: value } });
      expect(manager.plugins).toEqual([]);
      expect(imported(box, "proj"), `MIBYAN_ENABLE_PROJECT_PLUGINS=${value}`).toBe(false);
      await manager.close();
    }
    const box = sandbox();
    plugin(path.join(box.cwd, ".mibyan", "plugins"), "proj", box.marks);
    config(box, "plugins:\n  enabled: [proj]\n");
    const manager = await load(box, { env: { MIBYAN_ENABLE_PROJECT_PLUGINS: "yes" } });
    expect(manager.plugins.map((p) => [p.key, p.source, p.state])).toEqual([["proj", "project", "enabled"]]);
    expect(imported(box, "proj")).toBe(true);
    await manager.close();
  });

  it("later sources win on the same key: user < project < npm", async () => {
    const box = sandbox();
    plugin(path.join(box.home, "plugins"), "same", box.marks, `globalThis.__which = "user";`);
    plugin(path.join(box.cwd, ".mibyan", "plugins"), "same", box.marks, `globalThis.__which = "project";`);
    config(box, "plugins:\n  enabled: [same]\n");
    let manager = await load(box, { env: { MIBYAN_ENABLE_PROJECT_PLUGINS: "1" } });
    expect(manager.plugins[0]).toMatchObject({ key: "same", source: "project", state: "enabled" });
    expect((globalThis as { __which?: string }).__which).toBe("project");
    await manager.close();

    const pkg = path.join(box.home, "node_modules", "same");
    write(path.join(pkg, "package.json"), JSON.stringify({ name: "same", version: "2.0.0", mibyan: { plugin: "./main.js" } }));
    write(path.join(pkg, "main.js"), `export function register() { globalThis.__which = "npm"; }`);
    manager = await load(box, { env: { MIBYAN_ENABLE_PROJECT_PLUGINS: "1" } });
    expect(manager.plugins[0]).toMatchObject({ key: "same", source: "npm", version: "2.0.0", state: "enabled" });
    expect((globalThis as { __which?: string }).__which).toBe("npm");
    await manager.close();
  });
});

describe("manifest parsing (2)", () => {
  it("takes the folder name when name is missing, turns an unknown kind into standalone with a warning, and skips invalid YAML with its location", async () => {
    const box = sandbox();
    const plugins = path.join(box.home, "plugins");
    plugin(plugins, "nameless", box.marks, "", "version: 3\ndescription: no name here\n");
    plugin(plugins, "odd-kind", box.marks, "", "name: odd-kind\nkind: spaceship\n");
    plugin(plugins, "broken", box.marks, "", "name: broken\nrequires_env: [unclosed\n");
    plugin(plugins, "wrong-type", box.marks, "", "name: wrong-type\ndescription:\n  nested: mapping\n");
    plugin(plugins, "fine", box.marks);
    config(box, "plugins:\n  enabled: [nameless, odd-kind, broken, wrong-type, fine]\n");
    const manager = await load(box);
    const by = Object.fromEntries(manager.plugins.map((p) => [p.key, p]));
    expect(by.nameless).toMatchObject({ name: "nameless", version: "3", state: "enabled" });
    expect(by["odd-kind"]!.state).toBe("enabled");
    expect(warnings(box).some((w) => /odd-kind.*plugin\.yaml:2:7: unknown kind "spaceship"; treated as standalone/.test(w))).toBe(true);
    expect(by.broken!.state).toBe("failed");
    expect(by.broken!.error).toMatch(new RegExp(`${path.join(plugins, "broken", "plugin.yaml").replace(/[.]/g, "\\.")}:\\d+:\\d+: invalid YAML`));
    expect(by["wrong-type"]).toMatchObject({ state: "failed" });
    expect(by["wrong-type"]!.error).toMatch(/plugin\.yaml:3:3: description must be a string \(got a mapping\)/);
    expect(imported(box, "broken")).toBe(false);
    expect(by.fine!.state).toBe("enabled");
    await manager.close();
  });
});

describe("opt-in (3)", () => {
  it("never imports a plugin that is not enabled, and lists it as not enabled", async () => {
    const box = sandbox();
    plugin(path.join(box.home, "plugins"), "quiet", box.marks, ADD_TOOL("quiet_tool"));
    config(box, "plugins:\n  enabled: [someone-else]\n");
    const manager = await load(box);
    expect(manager.plugins).toEqual([expect.objectContaining({ key: "quiet", state: "not enabled", tools: [] })]);
    expect(manager.plugins[0]!.error).toMatch(/mibyan plugins enable quiet/);
    expect(imported(box, "quiet")).toBe(false);
    expect(box.registry.has("quiet_tool")).toBe(false);
    await manager.close();
  });

  it("loads nothing without plugins.enabled, even with a config file", async () => {
    const box = sandbox();
    plugin(path.join(box.home, "plugins"), "a", box.marks);
    config(box, "toolsets:\n  enabled: [terminal]\n");
    const manager = await load(box);
    expect(manager.plugins.map((p) => p.state)).toEqual(["not enabled"]);
    expect(imported(box, "a")).toBe(false);
    await manager.close();
  });

  it("plugins.disabled and entries.<key>.enabled: false beat enabled; entries.<key>.enabled: true enables", async () => {
    const box = sandbox();
    const plugins = path.join(box.home, "plugins");
    for (const name of ["listed-off", "entry-off", "entry-on"]) plugin(plugins, name, box.marks);
    config(
      box,
      "plugins:\n  enabled: [listed-off, entry-off]\n  disabled: [listed-off]\n  entries:\n    entry-off:\n      enabled: false\n    entry-on:\n      enabled: true\n",
    );
    const manager = await load(box);
    expect(manager.plugins.map((p) => [p.key, p.state])).toEqual([
      ["entry-off", "disabled"],
      ["entry-on", "enabled"],
      ["listed-off", "disabled"],
    ]);
    expect(imported(box, "listed-off")).toBe(false);
    expect(imported(box, "entry-off")).toBe(false);
    expect(imported(box, "entry-on")).toBe(true);
    await manager.close();
  });

  it("does not load a plugin whose requires_env is missing, and says which variable", async () => {
    const box = sandbox();
    plugin(path.join(box.home, "plugins"), "needs-key", box.marks, "", "name: needs-key\nrequires_env:\n  - ACME_KEY\n  - name: ACME_REGION\n    description: region\n");
    config(box, "plugins:\n  enabled: [needs-key]\n");
    let manager = await load(box, { env: { ACME_KEY: "k" } });
    expect(manager.plugins[0]).toMatchObject({ state: "disabled", error: "missing environment variable: ACME_REGION (requires_env)" });
    expect(imported(box, "needs-key")).toBe(false);
    await manager.close();
    manager = await load(box, { env: { ACME_KEY: "k", ACME_REGION: "eu" } });
    expect(manager.plugins[0]!.state).toBe("enabled");
    await manager.close();
  });
});

describe("npm plugins (4)", () => {
  it("discovers a package in $MIBYAN_HOME/node_modules with mibyan.plugin, and loads it only when enabled", async () => {
    const box = sandbox();
    const pkg = path.join(box.home, "node_modules", "mibyan-weather");
    write(path.join(pkg, "package.json"), JSON.stringify({ name: "mibyan-weather", version: "0.3.1", description: "weather", mibyan: { plugin: "./index.js" } }));
    write(path.join(pkg, "index.js"), entrySource(box.marks, "npm-weather", ADD_TOOL("weather")));
    const scoped = path.join(box.home, "node_modules", "@acme", "tools");
    write(path.join(scoped, "package.json"), JSON.stringify({ name: "@acme/tools", mibyan: { plugin: "lib/plugin.js" } }));
    write(path.join(scoped, "lib", "plugin.js"), entrySource(box.marks, "npm-acme", ADD_TOOL("acme_tool")));
    write(path.join(box.home, "node_modules", "left-pad", "package.json"), JSON.stringify({ name: "left-pad" }));
    let manager = await load(box);
    expect(manager.plugins.map((p) => [p.key, p.source, p.state])).toEqual([
      ["@acme/tools", "npm", "not enabled"],
      ["mibyan-weather", "npm", "not enabled"],
    ]);
    expect(imported(box, "npm-weather")).toBe(false);
    await manager.close();

    config(box, "plugins:\n  enabled: [mibyan-weather, '@acme/tools']\n");
    manager = await load(box);
    expect(manager.plugins.map((p) => [p.key, p.state, p.tools])).toEqual([
      ["@acme/tools", "enabled", ["acme_tool"]],
      ["mibyan-weather", "enabled", ["weather"]],
    ]);
    expect(await box.registry.dispatch("weather", {})).toBe("hi");
    await manager.close();
  });

  it("fails a package whose entry exports no register()", async () => {
    const box = sandbox();
    const pkg = path.join(box.home, "node_modules", "no-register");
    write(path.join(pkg, "package.json"), JSON.stringify({ name: "no-register", mibyan: { plugin: "./index.js" } }));
    write(path.join(pkg, "index.js"), "export const nothing = 1;\n");
    config(box, "plugins:\n  enabled: [no-register]\n");
    const manager = await load(box);
    expect(manager.plugins[0]).toMatchObject({ state: "failed", error: "the entry exports no register() function" });
    await manager.close();
  });
});

describe("safe mode (16)", () => {
  it("MIBYAN_SAFE_MODE=1 loads no plugin and no shell hook", async () => {
    const box = sandbox();
    plugin(path.join(box.home, "plugins"), "p", box.marks, `ctx.registerHook("pre_tool_call", () => ({ action: "block", message: "no" }));`);
    config(box, "plugins:\n  enabled: [p]\nhooks:\n  pre_tool_call:\n    - command: node -e 0\n");
    const manager = await load(box, { env: { MIBYAN_SAFE_MODE: "1" } });
    expect(manager.safeMode).toBe(true);
    expect(manager.plugins).toEqual([]);
    expect(imported(box, "p")).toBe(false);
    expect(box.registry.hooks.pre).toHaveLength(0);
    await manager.close();
  });
});

describe("attacks on what is read before a plugin is enabled", () => {
  it("refuses a manifest entry that leads out of the plugin folder, by path or by symlink, without importing it", async () => {
    const box = sandbox();
    const plugins = path.join(box.home, "plugins");
    const outside = write(path.join(box.root, "outside.js"), entrySource(box.marks, "outside"));
    plugin(plugins, "dotdot", box.marks, "", "name: dotdot\nentry: ../../../outside.js\n");
    plugin(plugins, "absolute", box.marks, "", `name: absolute\nentry: ${outside}\n`);
    const linked = plugin(plugins, "linked", box.marks, "", "name: linked\nentry: link.js\n");
    symlinkSync(outside, path.join(linked, "link.js"));
    plugin(plugins, "url", box.marks, "", "name: url\nentry: 'data:text/javascript,export function register(){}'\n");
    config(box, "plugins:\n  enabled: [dotdot, absolute, linked, url]\n");
    const manager = await load(box);
    const by = Object.fromEntries(manager.plugins.map((p) => [p.key, p]));
    expect(by.dotdot).toMatchObject({ state: "failed" });
    expect(by.dotdot!.error).toMatch(/entry "\.\.\/\.\.\/\.\.\/outside\.js" leads out of the plugin folder/);
    expect(by.absolute!.error).toMatch(/must be a path relative to the plugin folder/);
    expect(by.linked!.error).toMatch(/outside the plugin folder .*; refused/);
    expect(by.url!.error).toMatch(/must be a file path, not a URL/);
    expect(imported(box, "outside")).toBe(false);
    await manager.close();
  });

  it("refuses an npm package whose mibyan.plugin points outside the package", async () => {
    const box = sandbox();
    write(path.join(box.home, "node_modules", "evil-helper.js"), entrySource(box.marks, "evil"));
    const pkg = path.join(box.home, "node_modules", "evil");
    write(path.join(pkg, "package.json"), JSON.stringify({ name: "evil", mibyan: { plugin: "../evil-helper.js" } }));
    config(box, "plugins:\n  enabled: [evil]\n");
    const manager = await load(box);
    expect(manager.plugins[0]).toMatchObject({ key: "evil", state: "failed" });
    expect(manager.plugins[0]!.error).toMatch(/"mibyan\.plugin" "\.\.\/evil-helper\.js" leads out of the plugin folder/);
    expect(imported(box, "evil")).toBe(false);
    await manager.close();
  });

  it("fails a YAML bomb, a huge manifest and a manifest that is /dev/zero, and still loads the others", async () => {
    const box = sandbox();
    const plugins = path.join(box.home, "plugins");
    const bomb = ['name: bomb', 'a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i <= 9; i++) bomb.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill(`*${String.fromCharCode(96 + i)}`).join(",")}]`);
    plugin(plugins, "bomb", box.marks, "", bomb.join("\n") + "\n");
    plugin(plugins, "huge", box.marks, "", `name: huge\ndescription: "${"x".repeat(200_000)}"\n`);
    const zero = path.join(plugins, "zero");
    mkdirSync(zero, { recursive: true });
    symlinkSync("/dev/zero", path.join(zero, "plugin.yaml"));
    plugin(plugins, "fine", box.marks);
    config(box, "plugins:\n  enabled: [bomb, huge, zero, fine]\n");
    const started = Date.now();
    const manager = await load(box);
    expect(Date.now() - started).toBeLessThan(5_000);
    const by = Object.fromEntries(manager.plugins.map((p) => [p.key, p]));
    expect(by.bomb).toMatchObject({ state: "failed" });
    expect(by.bomb!.error).toMatch(/invalid YAML: .*alias/i);
    expect(by.huge!.error).toMatch(/cannot read the manifest: it is larger than 65536 bytes/);
    expect(by.zero!.error).toMatch(/cannot read the manifest: it is a character device, not a regular file/);
    expect(by.fine!.state).toBe("enabled");
    expect(["bomb", "huge"].some((n) => imported(box, n))).toBe(false);
    await manager.close();
  });

  it("skips folder names that could not be a key, and never matches a manifest name against plugins.enabled", async () => {
    const box = sandbox();
    const plugins = path.join(box.home, "plugins");
    plugin(plugins, ".hidden", box.marks);
    plugin(plugins, "has space", box.marks);
    // A folder the operator never enabled, whose manifest claims the enabled plugin's name.
    plugin(plugins, "impostor", box.marks, "", "name: trusted\n");
    config(box, "plugins:\n  enabled: [trusted, .hidden, has space]\n");
    const manager = await load(box);
    expect(manager.plugins.map((p) => [p.key, p.state])).toEqual([["impostor", "not enabled"]]);
    expect(imported(box, "impostor")).toBe(false);
    expect(imported(box, ".hidden")).toBe(false);
    expect(warnings(box).some((w) => /skipping .*has space/.test(w))).toBe(true);
    await manager.close();
  });

  it("turns terminal escape sequences in manifest and package.json text into ? before anything can print them", async () => {
    const box = sandbox();
    plugin(path.join(box.home, "plugins"), "ansi", box.marks, "", 'name: "ok\\e[2J\\e[31mred"\ndescription: "line\\u009b1;1H"\n');
    const pkg = path.join(box.home, "node_modules", "ansi-npm");
    write(path.join(pkg, "package.json"), JSON.stringify({ name: "ansi-npm", description: "x\u001b]0;title\u0007y", mibyan: { plugin: "./index.js" } }));
    write(path.join(pkg, "index.js"), "export function register() {}\n");
    const manager = await load(box);
    const by = Object.fromEntries(manager.plugins.map((p) => [p.key, p]));
    expect(by.ansi).toMatchObject({ name: "ok?[2J?[31mred", description: "line?1;1H" });
    expect(by["ansi-npm"]!.description).toBe("x?]0;title?y");
    await manager.close();
  });

  it("a key with ../ in plugins.enabled reaches nothing outside the plugin folders", async () => {
    const box = sandbox();
    // Plugin-shaped folders next to plugins/, which a key walking out of it would name.
    plugin(box.home, "outside", box.marks);
    plugin(path.join(box.home, "plugins-extra"), "x", box.marks);
    plugin(path.join(box.home, "plugins"), "inside", box.marks);
    config(box, "plugins:\n  enabled: ['../outside', 'inside/../../outside', '../plugins-extra/x', '..', 'inside']\n");
    const manager = await load(box);
    expect(manager.plugins.map((p) => [p.key, p.state])).toEqual([["inside", "enabled"]]);
    expect(imported(box, "outside")).toBe(false);
    expect(imported(box, "x")).toBe(false);
    await manager.close();
  });

  it("with MIBYAN_ENABLE_PROJECT_PLUGINS=0, a project plugin under an enabled key never replaces the user's", async () => {
    const box = sandbox();
    plugin(path.join(box.home, "plugins"), "shared", box.marks, `globalThis.__shared = "user";`);
    const evil = plugin(path.join(box.cwd, ".mibyan", "plugins"), "shared", box.marks);
    writeFileSync(path.join(evil, "index.js"), entrySource(box.marks, "project-shared", `globalThis.__shared = "project";`));
    config(box, "plugins:\n  enabled: [shared]\n");
    const manager = await load(box, { env: { MIBYAN_ENABLE_PROJECT_PLUGINS: "0" } });
    expect(manager.plugins).toEqual([expect.objectContaining({ key: "shared", source: "user", state: "enabled" })]);
    expect((globalThis as { __shared?: string }).__shared).toBe("user");
    expect(imported(box, "project-shared")).toBe(false);
    await manager.close();
  });
});
