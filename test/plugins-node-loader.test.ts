// The loader under node itself, in a child process against the built package: under vitest, a dynamic
// import goes through its module runner, so Node's own ESM cache (keyed by URL, hence the `?v=` query on a
// reload), its SyntaxError, and a real process.exit are only seen here. Needs `npm run build` (npm test
// builds first); MIBYAN_TEST_DIST points it at another build.
import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import path from "node:path";

import { describe, expect, it } from "vitest";

import { config, entrySource, plugin, sandbox, write } from "./fixtures/plugins/plugin-home.js";

const ROOT = path.resolve(import.meta.dirname, "..");
const DIST = process.env.MIBYAN_TEST_DIST ?? path.join(ROOT, "dist");
const BUILT = path.join(DIST, "plugins", "manager.js");
const fresh = existsSync(BUILT) && statSync(BUILT).mtimeMs >= statSync(path.join(ROOT, "src", "plugins", "manager.ts")).mtimeMs;

function runNode(code: string, cwd: string): Promise<{ stdout: string; stderr: string; code: number | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", code], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("close", (exit) => resolve({ stdout, stderr, code: exit }));
  });
}

describe.skipIf(!fresh)("the plugin loader under node (needs `npm run build`)", () => {
  it("reports a SyntaxError, survives process.exit in a plugin, and re-imports a changed entry on reload", async () => {
    const box = sandbox();
    const plugins = path.join(box.home, "plugins");
    const changing = plugin(plugins, "changing", box.marks, `ctx.registerTool({ name: "v", toolset: "d", schema: { description: "d" }, handler: () => "v1" });`);
    const syntax = plugin(plugins, "syntax", box.marks);
    write(path.join(syntax, "index.js"), "export function register(ctx) { return ctx. ; }\n");
    plugin(plugins, "exits", box.marks, "process.exit(7);");
    config(box, "plugins:\n  enabled: [changing, syntax, exits]\n");
    const v2 = entrySource(box.marks, "changing", `ctx.registerTool({ name: "v", toolset: "d", schema: { description: "d" }, handler: () => "v2" });`);
    const code = `
      import { writeFileSync, utimesSync } from "node:fs";
      const { ToolRegistry } = await import(${JSON.stringify(path.join(DIST, "registry", "tool-registry.js"))});
      const { createMemoryLogger } = await import(${JSON.stringify(path.join(DIST, "util", "logger.js"))});
      const { loadPlugins } = await import(${JSON.stringify(BUILT)});
      const registry = new ToolRegistry({ logger: createMemoryLogger() });
      const manager = await loadPlugins({ registry, home: ${JSON.stringify(box.home)}, cwd: ${JSON.stringify(box.cwd)}, env: {}, logger: createMemoryLogger() });
      const first = await registry.dispatch("v", {});
      const entry = ${JSON.stringify(path.join(changing, "index.js"))};
      writeFileSync(entry, ${JSON.stringify(v2)});
      const later = new Date(Date.now() + 5000);
      utimesSync(entry, later, later);
      await manager.reload();
      const second = await registry.dispatch("v", {});
      console.log(JSON.stringify({ first, second, plugins: manager.plugins.map((p) => [p.key, p.state, p.error ?? null]) }));
      await manager.close();
    `;
    const run = await runNode(code, box.cwd);
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout.trim().split("\n").pop()!) as { first: string; second: string; plugins: [string, string, string | null][] };
    expect(out.first).toBe("v1");
    expect(out.second).toBe("v2");
    const by = Object.fromEntries(out.plugins.map(([key, state, error]) => [key, { state, error }]));
    expect(by.changing).toEqual({ state: "enabled", error: null });
    expect(by.exits).toEqual({ state: "failed", error: "plugin called process.exit(7) during load" });
    expect(by.syntax!.state).toBe("failed");
    expect(by.syntax!.error).toMatch(/^SyntaxError: Unexpected token/);
  });
});
