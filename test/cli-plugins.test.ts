/**
 * `mibyan plugins list` and plugins in `mibyan call`: real CLI processes, a real config.yaml, real
 * plugin folders and a real shell hook program.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, cliEnv, spawnCollect } from "./support/cli-run.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** A profile home with config.yaml and three plugins: `guard` (a tool and a blocking hook), `idle`, `broken`. */
function home(config: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), "mibyan-cli-plugins-"));
  dirs.push(dir);
  write(path.join(dir, "config.yaml"), config);
  write(path.join(dir, "plugins/guard/plugin.yaml"), 'name: guard\nversion: "1.2"\ndescription: blocks rm\n');
  write(
    path.join(dir, "plugins/guard/index.js"),
    `export function register(ctx) {
  ctx.registerTool({
    name: "guard_hello", toolset: "guard",
    schema: { description: "Say hello", parameters: { type: "object", properties: { who: { type: "string" } }, required: ["who"] } },
    handler: (args) => "hello " + args.who,
  });
  ctx.registerHook("pre_tool_call", ({ toolName, args }) =>
    toolName === "terminal" && /\\brm\\b/.test(String(args.command)) ? { action: "block", message: "guard: no rm here" } : undefined);
}
`,
  );
  write(path.join(dir, "plugins/idle/plugin.yaml"), "name: idle\n");
  write(path.join(dir, "plugins/idle/index.js"), "export function register() {}\n");
  write(path.join(dir, "plugins/broken/plugin.yaml"), "name: broken\n");
  write(path.join(dir, "plugins/broken/index.js"), 'export function register(ctx) { ctx.registerTool({ name: "broken_tool", toolset: "x", schema: { description: "x" }, handler: () => "x" }); throw new Error("broken on purpose"); }\n');
  return dir;
}

function mibyan(dir: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnCollect(process.execPath, [BIN, ...args], { env: { ...cliEnv(dir, tmpdir()), ...env }, cwd: dir });
}

describe.concurrent("mibyan plugins list", () => {
  it("--json: every plugin found, with its state, error, tools and hooks (a failed one rolled back)", async () => {
    const dir = home("plugins:\n  enabled: [guard, broken]\n");
    const run = await mibyan(dir, ["plugins", "list", "--json"]);
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout) as { safeMode: boolean; plugins: Array<Record<string, unknown>> };
    expect(report.safeMode).toBe(false);
    expect(report.plugins).toEqual([
      expect.objectContaining({ key: "broken", source: "user", state: "failed", error: expect.stringMatching(/broken on purpose/), tools: [], hooks: [] }),
      expect.objectContaining({ key: "guard", source: "user", version: "1.2", state: "enabled", error: null, tools: ["guard_hello"], hooks: ["pre_tool_call"] }),
      expect.objectContaining({ key: "idle", source: "user", state: "not enabled", error: expect.stringMatching(/mibyan plugins enable idle/), tools: [], hooks: [] }),
    ]);
  });

  it("text: a mark per state and how to enable what is not", async () => {
    const dir = home("plugins:\n  enabled: [guard, broken]\n  disabled: [broken]\n");
    const run = await mibyan(dir, ["plugins", "list"]);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/– broken \(user\): disabled/);
    expect(run.stdout).toMatch(/✓ guard 1\.2 \(user\): enabled; tools: guard_hello; hooks: pre_tool_call/);
    expect(run.stdout).toMatch(/– idle \(user\): not enabled — .*`mibyan plugins enable idle`/);
  });

  it("lists plugins even when config.yaml enables none (plugins list is where you find their keys)", async () => {
    const dir = home("");
    const run = await mibyan(dir, ["plugins", "list", "--json"]);
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout) as { plugins: Array<{ key: string; state: string }> };
    expect(report.plugins.map((p) => [p.key, p.state])).toEqual([
      ["broken", "not enabled"],
      ["guard", "not enabled"],
      ["idle", "not enabled"],
    ]);
  });

  it("MIBYAN_SAFE_MODE: says so and loads nothing", async () => {
    const dir = home("plugins:\n  enabled: [guard]\n");
    const run = await mibyan(dir, ["plugins", "list"], { MIBYAN_SAFE_MODE: "1" });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/MIBYAN_SAFE_MODE is set/);
  });
});

describe.concurrent("plugins in mibyan call", () => {
  it("an enabled plugin's tool runs; its pre_tool_call hook blocks a terminal command before it runs", async () => {
    const dir = home("plugins:\n  enabled: [guard]\n");
    const hello = await mibyan(dir, ["call", "guard_hello", JSON.stringify({ who: "cli" })]);
    expect(hello.stdout.trim()).toBe("hello cli");
    expect(hello.status).toBe(0);
    const victim = path.join(dir, "victim.txt");
    writeFileSync(victim, "keep me");
    const blocked = await mibyan(dir, ["call", "terminal", JSON.stringify({ command: `rm ${victim}` })]);
    expect(blocked.status).toBe(1);
    expect(blocked.stdout).toMatch(/guard: no rm here/);
    expect(existsSync(victim)).toBe(true);
    const allowed = await mibyan(dir, ["call", "terminal", JSON.stringify({ command: "echo fine" })]);
    expect(allowed.status).toBe(0);
    expect(allowed.stdout).toContain("fine");
  });

  it("a plugin that is not enabled is not loaded: its tool is unknown (exit 2) and its hook does not run", async () => {
    const dir = home("");
    const run = await mibyan(dir, ["call", "guard_hello", JSON.stringify({ who: "cli" })]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/Unknown tool: guard_hello/);
  });

  it("MIBYAN_SAFE_MODE: an enabled plugin's tool is not there", async () => {
    const dir = home("plugins:\n  enabled: [guard]\n");
    const run = await mibyan(dir, ["call", "guard_hello", JSON.stringify({ who: "cli" })], { MIBYAN_SAFE_MODE: "yes" });
    expect(run.status).toBe(2);
  });

  it("a shell hook from config.yaml blocks a matching call (no plugin needed)", async () => {
    const dir = home("");
    const hook = path.join(dir, "no-prod.mjs");
    write(
      hook,
      `let input = "";
process.stdin.on("data", (c) => (input += c));
process.stdin.on("end", () => {
  const event = JSON.parse(input);
  if (/prod/.test(event.tool_input.command ?? "")) process.stdout.write(JSON.stringify({ decision: "block", reason: "no production commands" }));
});
`,
    );
    writeFileSync(path.join(dir, "config.yaml"), `hooks:\n  pre_tool_call:\n    - matcher: "^terminal$"\n      command: ${JSON.stringify(`${process.execPath} ${hook}`)}\n      timeout: 10\n`);
    const blocked = await mibyan(dir, ["call", "terminal", JSON.stringify({ command: "echo deploy prod" })]);
    expect(blocked.status).toBe(1);
    expect(blocked.stdout).toMatch(/no production commands/);
    const allowed = await mibyan(dir, ["call", "terminal", JSON.stringify({ command: "echo deploy staging" })]);
    expect(allowed.status).toBe(0);
    expect(allowed.stdout).toContain("deploy staging");
  });
});
