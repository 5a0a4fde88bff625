/**
 * Built-in toolset names without built-in tools (`web`, `browser`, `memory`, ...; docs/toolsets.md):
 * `mibyan tools` lists them and says why they are empty, and `mibyan definitions` warns on stderr
 * when an enabled toolset gives no tools, instead of printing `[]` without a word. Real CLI processes
 * against dist/ with a fresh MIBYAN_HOME.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, ROOT, cliEnv, spawnCollect } from "./support/cli-run.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function mibyan(args: string[], config?: string) {
  const home = mkdtempSync(path.join(tmpdir(), "mibyan-reserved-"));
  dirs.push(home);
  if (config !== undefined) writeFileSync(path.join(home, "config.yaml"), config);
  return spawnCollect(process.execPath, [BIN, ...args], { env: cliEnv(home, home), cwd: home });
}

describe.concurrent("toolsets without registered tools", () => {
  it("mibyan definitions --enable web,browser,memory: [] with exit 0 and a warning naming each empty toolset", async () => {
    const run = await mibyan(["definitions", "--enable", "web,browser,memory"]);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([]);
    expect(run.stderr).toContain('toolset "web" has no tools registered: web_search, web_extract are not built in; register them or load a plugin');
    expect(run.stderr).toContain('toolset "browser" has no tools registered: browser_navigate');
    expect(run.stderr).toContain('toolset "memory" has no tools registered: memory is handled by the agent loop');
    expect(run.stderr).toMatch(/^mibyan: warning: no tools selected/);
  });

  it("names an empty enabled toolset even when others give tools, and stays silent when every one gives tools", async () => {
    const [mixed, fine] = await Promise.all([mibyan(["definitions", "--enable", "web,terminal"]), mibyan(["definitions", "--enable", "terminal,file"])]);
    expect(mixed.status).toBe(0);
    expect((JSON.parse(mixed.stdout) as { function: { name: string } }[]).map((d) => d.function.name)).toEqual(["process", "terminal"]);
    expect(mixed.stderr).toContain('toolset "web" has no tools registered');
    expect(mixed.stderr).not.toContain("terminal");
    expect(fine.status).toBe(0);
    expect(fine.stderr).toBe("");
  });

  it("warns for toolsets.enabled in config.yaml too", async () => {
    const run = await mibyan(["definitions"], "toolsets:\n  enabled: [todo]\n");
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([]);
    expect(run.stderr).toContain('toolset "todo" has no tools registered: todo is handled by the agent loop');
  });

  it("mibyan tools lists every built-in toolset, an empty one with the reason", async () => {
    const run = await mibyan(["tools"]);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^- web — .*\n {4}no tools registered: web_search, web_extract are not built in; register them or load a plugin$/m);
    expect(run.stdout).toMatch(/^- todo — .*\n {4}no tools registered: todo is handled by the agent loop$/m);
    expect(run.stdout).toMatch(/^✓ terminal — /m);
    // Composites and presets bundle toolsets; they are not listed as toolsets of their own.
    expect(run.stdout).not.toMatch(/^. (core|research|mibyan-cli) — /m);
  });

  it("mibyan tools --json: every toolset with unregistered and note", async () => {
    const run = await mibyan(["tools", "--json"]);
    expect(run.status).toBe(0);
    const { toolsets } = JSON.parse(run.stdout) as { toolsets: { name: string; available: boolean; tools: unknown[]; unregistered: string[]; note: string | null }[] };
    const byName = new Map(toolsets.map((t) => [t.name, t]));
    for (const name of ["web", "browser", "vision", "memory", "todo", "skills", "terminal", "file", "code_execution"]) expect(byName.has(name)).toBe(true);
    expect(byName.get("web")).toMatchObject({ available: false, tools: [], unregistered: ["web_search", "web_extract"] });
    expect(byName.get("web")!.note).toBe("no tools registered: web_search, web_extract are not built in; register them or load a plugin");
    expect(byName.get("memory")!.note).toBe("no tools registered: memory is handled by the agent loop");
    expect(byName.get("terminal")).toMatchObject({ available: true, unregistered: [], note: null });
  });

  it("docs/toolsets.md marks as built in exactly the toolsets that have tools in this package", async () => {
    const run = await mibyan(["tools", "--json"]);
    const { toolsets } = JSON.parse(run.stdout) as { toolsets: { name: string; tools: unknown[]; note: string | null }[] };
    const doc = readFileSync(path.join(ROOT, "docs", "toolsets.md"), "utf8");
    const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| .*? \| (\*\*built in\*\*|reserved: register (?:it|them)|agent loop) \| /gm)].map((m) => [m[1]!, m[2]!] as const);
    expect(rows.length).toBe(17);
    const builtIn = rows.filter(([, kind]) => kind === "**built in**").map(([name]) => name).sort();
    expect(builtIn).toEqual(toolsets.filter((t) => t.tools.length > 0).map((t) => t.name).sort());
    for (const [name, kind] of rows) {
      if (kind === "agent loop") expect(toolsets.find((t) => t.name === name)!.note).toContain("handled by the agent loop");
      if (kind.startsWith("reserved")) expect(toolsets.find((t) => t.name === name)!.note).toContain("not built in");
    }
  });
});
