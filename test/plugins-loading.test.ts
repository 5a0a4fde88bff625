// Acceptance 5-9 and 18 of spec 3.3: registration, built-in override, ownership, rollback of every
// registration on any failure, and reload. Plugins are real folders imported by the real loader.
import { utimesSync, writeFileSync } from "node:fs";
import path from "node:path";

import { describe, expect, it } from "vitest";

import { config, entrySource, imported, load, plugin, sandbox, warnings } from "./fixtures/plugins/plugin-home.js";

const tool = (name: string, reply = "hi", extra = "") =>
  `ctx.registerTool({ name: ${JSON.stringify(name)}, toolset: "demo", schema: { description: "demo", parameters: { type: "object", properties: {} } }, handler: () => ${JSON.stringify(reply)}${extra} });`;

function builtin(box: ReturnType<typeof sandbox>, name = "read_file"): void {
  box.registry.register({ name, toolset: "file", schema: { description: "built-in" }, handler: () => "built-in", source: { kind: "builtin" } });
}

describe("registration (5)", () => {
  it("puts a plugin's tool in the registry under its toolset, stamped as the plugin's, and lists tools and hooks", async () => {
    const box = sandbox();
    plugin(
      path.join(box.home, "plugins"),
      "demo",
      box.marks,
      `${tool("demo_echo", "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789", ", source: { kind: 'user' }")}
       ctx.registerHook("pre_tool_call", () => undefined);
       ctx.registerHook("post_tool_call", () => undefined);`,
    );
    config(box, "plugins:\n  enabled: [demo]\n");
    const manager = await load(box);
    expect(manager.plugins).toEqual([
      expect.objectContaining({ key: "demo", source: "user", state: "enabled", tools: ["demo_echo"], hooks: ["pre_tool_call", "post_tool_call"] }),
    ]);
    const entry = box.registry.get("demo_echo")!;
    expect(entry.toolset).toBe("demo");
    expect(entry.source).toEqual({ kind: "plugin", id: "demo" });
    expect(entry.redactOutput).toBe(true);
    expect(box.registry.listTools({ toolset: "demo" }).map((e) => e.name)).toEqual(["demo_echo"]);
    // Plugin output is redacted for the model by default.
    expect(await box.registry.dispatch("demo_echo", {})).not.toContain("ghp_abcdefghijklmnopqrstuvwxyz0123456789");
    await manager.close();
    expect(box.registry.has("demo_echo")).toBe(false);
  });
});

describe("built-in override (6)", () => {
  it("without plugins.entries.<key>.allow_tool_override the load fails naming the key, and the built-in is unchanged", async () => {
    const box = sandbox();
    builtin(box);
    plugin(path.join(box.home, "plugins"), "shadow", box.marks, `${tool("other_tool")}\n${tool("read_file", "plugin", ", toolset: 'file', override: true")}`);
    config(box, "plugins:\n  enabled: [shadow]\n");
    const manager = await load(box);
    expect(manager.plugins[0]).toMatchObject({ state: "failed", tools: [] });
    expect(manager.plugins[0]!.error).toMatch(/plugins\.entries\.shadow\.allow_tool_override: true/);
    expect(await box.registry.dispatch("read_file", {})).toBe("built-in");
    expect(box.registry.get("read_file")!.source).toEqual({ kind: "builtin" });
    expect(box.registry.has("other_tool")).toBe(false);
    await manager.close();
  });

  it("with the flag the built-in is replaced, and put back when the plugin goes", async () => {
    const box = sandbox();
    builtin(box);
    plugin(path.join(box.home, "plugins"), "shadow", box.marks, tool("read_file", "plugin", ", toolset: 'file', override: true"));
    config(box, "plugins:\n  enabled: [shadow]\n  entries:\n    shadow:\n      allow_tool_override: true\n");
    const manager = await load(box);
    expect(manager.plugins[0]).toMatchObject({ state: "enabled", tools: ["read_file"] });
    expect(await box.registry.dispatch("read_file", {})).toBe("plugin");
    // The registry says so when another source replaces a built-in.
    expect((box.registry.logger as unknown as { messages: { message: string }[] }).messages.some((m) => /built-in.*replaced by a registration from plugin "shadow"/.test(m.message))).toBe(true);
    await manager.close();
    expect(await box.registry.dispatch("read_file", {})).toBe("built-in");
  });

  it("the flag of one plugin does not let another override", async () => {
    const box = sandbox();
    builtin(box);
    plugin(path.join(box.home, "plugins"), "other", box.marks, tool("read_file", "plugin", ", toolset: 'file', override: true"));
    config(box, "plugins:\n  enabled: [other]\n  entries:\n    shadow:\n      allow_tool_override: true\n");
    const manager = await load(box);
    expect(manager.plugins[0]!.error).toMatch(/plugins\.entries\.other\.allow_tool_override/);
    expect(await box.registry.dispatch("read_file", {})).toBe("built-in");
    await manager.close();
  });
});

describe("ownership (7)", () => {
  it("a plugin may deregister only its own tools", async () => {
    const box = sandbox();
    builtin(box, "terminal");
    plugin(
      path.join(box.home, "plugins"),
      "owner",
      box.marks,
      `${tool("mine")}
       ${tool("mine_too")}
       try { ctx.deregisterTool("terminal"); } catch (err) { globalThis.__ownership = err.name + ": " + err.message; }
       globalThis.__own = ctx.deregisterTool("mine_too");`,
    );
    config(box, "plugins:\n  enabled: [owner]\n");
    const manager = await load(box);
    const g = globalThis as { __ownership?: string; __own?: boolean };
    expect(g.__ownership).toBe('PluginOwnershipError: plugin "owner" may only deregister its own tools; "terminal" was not registered by it');
    expect(g.__own).toBe(true);
    expect(box.registry.has("terminal")).toBe(true);
    expect(box.registry.has("mine_too")).toBe(false);
    expect(manager.plugins[0]).toMatchObject({ state: "enabled", tools: ["mine"] });
    await manager.close();
  });
});

describe("failure rollback (8) and other failures (9)", () => {
  it("register() throwing after a tool and a hook: failed with its message, both removed, the next plugin loads", async () => {
    const box = sandbox();
    const plugins = path.join(box.home, "plugins");
    plugin(plugins, "a-breaks", box.marks, `${tool("half_done")}\nctx.registerHook("pre_tool_call", () => ({ action: "block", message: "stale" }));\nthrow new Error("boom in register");`);
    plugin(plugins, "b-works", box.marks, tool("works"));
    config(box, "plugins:\n  enabled: [a-breaks, b-works]\n");
    const manager = await load(box);
    expect(manager.plugins.map((p) => [p.key, p.state, p.error])).toEqual([
      ["a-breaks", "failed", "Error: boom in register"],
      ["b-works", "enabled", undefined],
    ]);
    expect(box.registry.has("half_done")).toBe(false);
    expect(manager.hooks.list("pre_tool_call")).toEqual([]);
    expect(box.registry.hooks.pre).toHaveLength(0);
    expect(await box.registry.dispatch("works", {})).toBe("hi");
    expect(warnings(box).some((w) => /plugin "a-breaks" failed to load: Error: boom in register/.test(w))).toBe(true);
    await manager.close();
  });

  it("a tool one plugin took over from another goes back to the other when the taker fails or goes, never to a plugin that is gone", async () => {
    const box = sandbox();
    const plugins = path.join(box.home, "plugins");
    plugin(plugins, "a-first", box.marks, tool("shared_tool", "from a"));
    plugin(plugins, "b-taker", box.marks, `${tool("shared_tool", "from b")}\nthrow new Error("b fails");`);
    plugin(plugins, "c-taker", box.marks, tool("shared_tool", "from c"));
    config(box, "plugins:\n  enabled: [a-first, b-taker]\n");
    const manager = await load(box);
    expect(manager.plugins.map((p) => p.state)).toEqual(["enabled", "failed", "not enabled"]);
    expect(await box.registry.dispatch("shared_tool", {})).toBe("from a");

    config(box, "plugins:\n  enabled: [a-first, c-taker]\n");
    await manager.reload();
    expect(await box.registry.dispatch("shared_tool", {})).toBe("from c");
    config(box, "plugins:\n  enabled: [c-taker]\n");
    await manager.reload();
    expect(await box.registry.dispatch("shared_tool", {})).toBe("from c");
    // a is gone: when c goes, a's tool does not come back.
    await manager.close();
    expect(box.registry.has("shared_tool")).toBe(false);
  });

  it("a failed override puts the built-in back", async () => {
    const box = sandbox();
    builtin(box);
    plugin(path.join(box.home, "plugins"), "x", box.marks, `${tool("read_file", "plugin", ", toolset: 'file', override: true")}\nthrow new Error("late");`);
    config(box, "plugins:\n  enabled: [x]\n  entries:\n    x:\n      allow_tool_override: true\n");
    const manager = await load(box);
    expect(manager.plugins[0]!.state).toBe("failed");
    expect(await box.registry.dispatch("read_file", {})).toBe("built-in");
    await manager.close();
  });

  it("marks failed a syntax error, a missing dependency, a rejected promise and a register that never settles", async () => {
    const box = sandbox();
    const plugins = path.join(box.home, "plugins");
    const syntax = plugin(plugins, "syntax", box.marks);
    writeFileSync(path.join(syntax, "index.js"), "export function register(ctx) { return ctx. ; }\n");
    const missing = plugin(plugins, "missing-dep", box.marks);
    writeFileSync(path.join(missing, "index.js"), 'import "definitely-not-installed-pkg";\nexport function register() {}\n');
    plugin(plugins, "rejects", box.marks, `${tool("rejected_tool")}\nawait new Promise((r) => setTimeout(r, 5));\nthrow new TypeError("async failure");`);
    plugin(plugins, "hangs", box.marks, `${tool("hung_tool")}\nglobalThis.__late = () => ctx.registerTool({ name: "late_tool", toolset: "demo", schema: { description: "d" }, handler: () => 1 });\nawait new Promise(() => {});`);
    const hangsAtImport = plugin(plugins, "hangs-at-import", box.marks);
    writeFileSync(path.join(hangsAtImport, "index.js"), "await new Promise(() => {});\nexport function register() {}\n");
    plugin(plugins, "zz-after", box.marks, tool("after"));
    config(box, "plugins:\n  enabled: [syntax, missing-dep, rejects, hangs, hangs-at-import, zz-after]\n");
    const manager = await load(box, { loadTimeoutMs: 400 });
    const by = Object.fromEntries(manager.plugins.map((p) => [p.key, p]));
    expect(by.syntax).toMatchObject({ state: "failed" });
    // Under vitest the import goes through its module runner (Rolldown's parse error); under node it is a SyntaxError.
    expect(by.syntax!.error).toMatch(/SyntaxError|Unexpected token/);
    expect(by["missing-dep"]!.error).toMatch(/definitely-not-installed-pkg/);
    expect(by.rejects!.error).toBe("TypeError: async failure");
    expect(by.hangs!.error).toBe("loading took longer than 400 ms (import and register); abandoned");
    expect(by["hangs-at-import"]!.error).toBe("loading took longer than 400 ms (import and register); abandoned");
    expect(by["zz-after"]!.state).toBe("enabled");
    for (const name of ["rejected_tool", "hung_tool"]) expect(box.registry.has(name)).toBe(false);
    // The abandoned plugin's context is revoked: a late registration throws and registers nothing.
    expect(() => (globalThis as { __late?: () => void }).__late!()).toThrow(/no longer loaded/);
    expect(box.registry.has("late_tool")).toBe(false);
    await manager.close();
  });

  it("process.exit during load is caught as failed, its registrations rolled back, and process.exit restored", async () => {
    const box = sandbox();
    const plugins = path.join(box.home, "plugins");
    const realExit = process.exit;
    plugin(plugins, "exits", box.marks, `${tool("exit_tool")}\nprocess.exit(3);`);
    // Swallowing the stub's throw does not help: the call itself fails the load.
    plugin(plugins, "exits-quietly", box.marks, `${tool("quiet_exit_tool")}\ntry { process.exit(0); } catch {}`);
    const atImport = plugin(plugins, "exits-at-import", box.marks);
    writeFileSync(path.join(atImport, "index.js"), "process.exit(1);\nexport function register() {}\n");
    plugin(plugins, "zz-after", box.marks, tool("after_exit"));
    config(box, "plugins:\n  enabled: [exits, exits-quietly, exits-at-import, zz-after]\n");
    const manager = await load(box);
    const by = Object.fromEntries(manager.plugins.map((p) => [p.key, p]));
    expect(by.exits).toMatchObject({ state: "failed", error: "plugin called process.exit(3) during load" });
    expect(by["exits-quietly"]).toMatchObject({ state: "failed", error: "plugin called process.exit(0) during load" });
    expect(by["exits-at-import"]).toMatchObject({ state: "failed", error: "plugin called process.exit(1) during load" });
    expect(by["zz-after"]!.state).toBe("enabled");
    expect(box.registry.has("exit_tool")).toBe(false);
    expect(box.registry.has("quiet_exit_tool")).toBe(false);
    expect(process.exit).toBe(realExit);
    await manager.close();
  });

  it("a registration the registry refuses (shadowing another toolset's tool) fails the load with the reason", async () => {
    const box = sandbox();
    box.registry.register({ name: "shared_name", toolset: "app", schema: { description: "app" }, handler: () => "app" });
    plugin(path.join(box.home, "plugins"), "clash", box.marks, tool("shared_name"));
    config(box, "plugins:\n  enabled: [clash]\n");
    const manager = await load(box);
    expect(manager.plugins[0]!.state).toBe("failed");
    expect(manager.plugins[0]!.error).toMatch(/would shadow the tool of the same name in toolset "app"/);
    expect(await box.registry.dispatch("shared_name", {})).toBe("app");
    await manager.close();
  });
});

describe("reload (18)", () => {
  it("re-imports a changed plugin (cache-busted URL), keeps an unchanged one, and removes the tools of a plugin disabled since", async () => {
    const box = sandbox();
    const plugins = path.join(box.home, "plugins");
    const changing = plugin(plugins, "changing", box.marks, tool("versioned", "v1"));
    plugin(plugins, "steady", box.marks, tool("steady_tool"));
    plugin(plugins, "going", box.marks, `${tool("going_tool")}\nctx.registerHook("post_tool_call", () => undefined);`);
    config(box, "plugins:\n  enabled: [changing, steady, going]\n");
    const manager = await load(box);
    expect(await box.registry.dispatch("versioned", {})).toBe("v1");
    expect(box.registry.hooks.post).toHaveLength(1);

    const entry = path.join(changing, "index.js");
    writeFileSync(entry, entrySource(box.marks, "changing", `${tool("versioned", "v2")}\n${tool("added_in_v2")}`));
    const later = new Date(Date.now() + 5_000);
    utimesSync(entry, later, later);
    config(box, "plugins:\n  enabled: [changing, steady]\n");
    await manager.reload();
    expect(await box.registry.dispatch("versioned", {})).toBe("v2");
    expect(box.registry.has("added_in_v2")).toBe(true);
    expect(box.registry.has("going_tool")).toBe(false);
    expect(box.registry.hooks.post).toHaveLength(0);
    expect(manager.plugins.map((p) => [p.key, p.state, p.tools])).toEqual([
      ["changing", "enabled", ["versioned", "added_in_v2"]],
      ["going", "not enabled", []],
      ["steady", "enabled", ["steady_tool"]],
    ]);

    // Dropping a tool in the new version removes it; a forced reload re-imports unchanged plugins too.
    writeFileSync(entry, entrySource(box.marks, "changing", tool("versioned", "v3")));
    const evenLater = new Date(Date.now() + 10_000);
    utimesSync(entry, evenLater, evenLater);
    await manager.reload({ force: true });
    expect(await box.registry.dispatch("versioned", {})).toBe("v3");
    expect(box.registry.has("added_in_v2")).toBe(false);
    expect(box.registry.has("steady_tool")).toBe(true);
    await manager.close();
    expect(imported(box, "going")).toBe(true);
  });

  it("warns about an enabled key that matches no plugin, and runs overlapping reloads one after the other", async () => {
    const box = sandbox();
    plugin(path.join(box.home, "plugins"), "real", box.marks, tool("real_tool"));
    config(box, "plugins:\n  enabled: [real, reel]\n");
    const manager = await load(box);
    expect(warnings(box)).toContain('plugins.enabled names "reel", but no plugin with that key was found (run `mibyan plugins list`)');
    await Promise.all([manager.reload({ force: true }), manager.reload({ force: true }), manager.reload()]);
    expect(manager.plugins).toEqual([expect.objectContaining({ key: "real", state: "enabled", tools: ["real_tool"] })]);
    expect(await box.registry.dispatch("real_tool", {})).toBe("hi");
    await manager.close();
    expect(box.registry.has("real_tool")).toBe(false);
  });
});
