// Acceptance 17 of spec 3.3: shell hooks from config.yaml, run as real programs (node scripts written to
// a temporary folder), with JSON on stdin and a block decision on stdout.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

import { describe, expect, it } from "vitest";

import { config, load, sandbox, warnings, write } from "./fixtures/plugins/plugin-home.js";
import { alive } from "./support/proc.js";

type Box = ReturnType<typeof sandbox>;

/** A node script that saves its stdin (and environment) under `name` and then prints `stdout` / exits with `code`. */
function script(box: Box, name: string, stdout: string, code = 0, extra = ""): string {
  const file = path.join(box.root, "hooks", `${name}.mjs`);
  write(
    file,
    `import { readFileSync, writeFileSync, appendFileSync } from "node:fs";
const input = readFileSync(0, "utf8");
appendFileSync(${JSON.stringify(path.join(box.marks, name + ".stdin"))}, input + "\\n");
writeFileSync(${JSON.stringify(path.join(box.marks, name + ".env"))}, JSON.stringify(Object.keys(process.env)));
${extra}
process.stdout.write(${JSON.stringify(stdout)});
process.exit(${code});
`,
  );
  return file;
}

function stdinOf(box: Box, name: string): Record<string, unknown>[] {
  const file = path.join(box.marks, `${name}.stdin`);
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
}

function tools(box: Box): void {
  for (const name of ["terminal", "read_file"]) {
    box.registry.register({ name, toolset: "t", schema: { description: name, parameters: { type: "object", properties: { command: { type: "string" } } } }, handler: () => `${name} ran` });
  }
}

const NODE = process.execPath;

describe("shell hooks (17)", () => {
  it("honours both block shapes on stdout, matches the tool name, and sends the event as JSON on stdin", async () => {
    const box = sandbox();
    tools(box);
    const claude = script(box, "claude", JSON.stringify({ decision: "block", reason: "claude says no" }));
    const hermes = script(box, "hermes", JSON.stringify({ action: "block", message: "hermes says no" }));
    config(
      box,
      `hooks:\n  pre_tool_call:\n    - matcher: "^terminal$"\n      command: ${NODE} ${claude}\n      timeout: 5\n    - matcher: "^read_file$"\n      command: ${NODE} ${hermes}\n`,
    );
    const manager = await load(box);
    const blocked = await box.registry.run("terminal", { command: "rm -rf /" }, { sessionId: "s1", surface: "mcp" });
    expect(blocked.content).toBe('{"error":"claude says no"}');
    expect(blocked.result.error?.kind).toBe("blocked");
    expect(stdinOf(box, "claude")).toEqual([{ hook_event_name: "pre_tool_call", tool_name: "terminal", tool_input: { command: "rm -rf /" }, session_id: "s1", cwd: box.cwd, surface: "mcp" }]);
    expect(stdinOf(box, "hermes")).toEqual([]);
    expect(await box.registry.dispatch("read_file", {})).toBe('{"error":"hermes says no"}');
    expect(stdinOf(box, "claude")).toHaveLength(1);
    await manager.close();
  });

  it("clamps timeout 999 to 300 with a warning", async () => {
    const box = sandbox();
    tools(box);
    config(box, `hooks:\n  pre_tool_call:\n    - command: ${NODE} ${script(box, "ok", "")}\n      timeout: 999\n`);
    const manager = await load(box);
    expect(warnings(box)).toContain("hooks.pre_tool_call[0]: timeout 999 s is above the limit; clamped to 300 s");
    expect(await box.registry.dispatch("terminal", {})).toBe("terminal ran");
    await manager.close();
  });

  it("a non-zero exit, stdout that is not JSON, or the time limit: a warning, and the call proceeds", async () => {
    const box = sandbox();
    tools(box);
    const failing = script(box, "failing", JSON.stringify({ decision: "block", reason: "ignored: exit 1" }), 1);
    const garbage = script(box, "garbage", "this is not json");
    const slow = script(box, "slow", "", 0, `writeFileSync(${JSON.stringify(path.join(box.marks, "slow.pid"))}, String(process.pid));\nawait new Promise((r) => setTimeout(r, 60_000));`);
    config(
      box,
      `hooks:\n  pre_tool_call:\n    - command: ${NODE} ${failing}\n    - command: ${NODE} ${garbage}\n    - command: ${NODE} ${slow}\n      timeout: 0.5\n`,
    );
    const manager = await load(box);
    const started = Date.now();
    expect(await box.registry.dispatch("terminal", {})).toBe("terminal ran");
    expect(Date.now() - started).toBeLessThan(10_000);
    const w = warnings(box).join("\n");
    expect(w).toMatch(/shell hook pre_tool_call ".*failing\.mjs": exited with 1; the call proceeds/);
    expect(w).toMatch(/shell hook pre_tool_call ".*garbage\.mjs": stdout is not JSON; ignored/);
    expect(w).toMatch(/shell hook pre_tool_call ".*slow\.mjs": timed out after 0\.5 s; the call proceeds/);
    const pid = Number(readFileSync(path.join(box.marks, "slow.pid"), "utf8"));
    expect(alive(pid)).toBe(false);
    await manager.close();
  });

  it("gives hooks a minimal environment: no API keys or tokens of the agent", async () => {
    const box = sandbox();
    tools(box);
    config(box, `hooks:\n  post_tool_call:\n    - command: ${NODE} ${script(box, "envdump", "")}\n`);
    const manager = await load(box, { env: { PATH: process.env.PATH, HOME: box.home, OPENAI_API_KEY: "sk-secret", GITHUB_TOKEN: "ghp_x", MIBYAN_HOME: box.home } });
    await box.registry.dispatch("read_file", {});
    const keys = JSON.parse(readFileSync(path.join(box.marks, "envdump.env"), "utf8")) as string[];
    expect(keys).toContain("PATH");
    expect(keys).toContain("MIBYAN_HOME");
    expect(keys).not.toContain("OPENAI_API_KEY");
    expect(keys).not.toContain("GITHUB_TOKEN");
    expect(stdinOf(box, "envdump")).toEqual([
      expect.objectContaining({ hook_event_name: "post_tool_call", tool_name: "read_file", tool_result: "read_file ran", status: "ok", duration_ms: expect.any(Number) }),
    ]);
    await manager.close();
  });

  it("never runs a command through a shell: pipes, $VAR and $(…) are refused with a warning", async () => {
    const box = sandbox();
    tools(box);
    const pwned = path.join(box.marks, "pwned");
    config(
      box,
      `hooks:\n  pre_tool_call:\n    - command: "echo hi | tee ${pwned}"\n    - command: "touch $HOME/x"\n    - command: "echo $(touch ${pwned})"\n    - command: "true && touch ${pwned}"\n`,
    );
    const manager = await load(box);
    expect(warnings(box).filter((w) => /cannot run without a shell/.test(w))).toHaveLength(4);
    expect(box.registry.hooks.pre).toHaveLength(0);
    expect(await box.registry.dispatch("terminal", {})).toBe("terminal ran");
    expect(existsSync(pwned)).toBe(false);
    await manager.close();
  });

  it("a transform_tool_result hook may replace the result with {result: …}; session hooks get the session id", async () => {
    const box = sandbox();
    tools(box);
    const transform = script(box, "transform", JSON.stringify({ result: "replaced by shell" }));
    const session = script(box, "session", "");
    config(box, `hooks:\n  transform_tool_result:\n    - matcher: "^read_file$"\n      command: ${NODE} ${transform}\n  on_session_start:\n    - command: ${NODE} ${session}\n`);
    const manager = await load(box);
    expect(await box.registry.dispatch("read_file", {})).toBe("replaced by shell");
    expect(await box.registry.dispatch("terminal", {})).toBe("terminal ran");
    await manager.startSession({ sessionId: "abc" });
    expect(stdinOf(box, "session")).toEqual([expect.objectContaining({ hook_event_name: "on_session_start", session_id: "abc", tool_name: null })]);
    await manager.close();
    expect(box.registry.hooks.pre).toHaveLength(0);
  });
});
