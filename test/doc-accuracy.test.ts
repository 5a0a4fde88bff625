/**
 * Statements of README.md and docs/ that a new user relied on and found wrong, each checked against
 * the code: the process registry's notification methods, the backends entry's *OptionsFromEnv
 * functions, the approval id's shape, `mibyan call --task`'s lifetime, and how config.yaml's `tools`
 * section reaches a registry.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import * as backends from "../src/backends.js";
import { ProcessRegistry } from "../src/process/process-registry.js";
import { ToolRegistry } from "../src/registry/tool-registry.js";
import { PENDING_ID } from "../src/approval/surfaces/pending-store.js";
import { BIN, ROOT, cliEnv } from "./support/cli-run.js";

const read = (file: string): string => readFileSync(path.join(ROOT, file), "utf8");

describe("docs agree with the code", () => {
  it("processes.md: takeNotifications/onNotification are the process registry's (getProcessRegistry()), not the tool registry's", () => {
    const doc = read("docs/processes.md");
    expect(doc).not.toMatch(/\bregistry\.(takeNotifications|onNotification)\b/);
    expect(doc).toMatch(/getProcessRegistry\(\)/);
    expect(typeof ProcessRegistry.prototype.takeNotifications).toBe("function");
    expect(typeof ProcessRegistry.prototype.onNotification).toBe("function");
    expect((ToolRegistry.prototype as unknown as Record<string, unknown>).takeNotifications).toBeUndefined();
  });

  it("packaging.md: every function the mibyan-tools/backends row names exists, wildcards for every backend", () => {
    const row = read("docs/packaging.md").split("\n").find((line) => line.startsWith("| `mibyan-tools/backends`"))!;
    const exported = new Set(Object.keys(backends));
    const named = [...row.matchAll(/`([A-Za-z*][A-Za-z]*)`/g)].map((m) => m[1]!);
    const prefixes = ["docker", "ssh", "singularity", "modal", "daytona", "vercelSandbox"];
    const missing: string[] = [];
    for (const name of named) {
      const candidates = name.startsWith("*") ? prefixes.map((p) => p + name.slice(1)) : [name];
      for (const candidate of candidates) if (!exported.has(candidate)) missing.push(candidate);
    }
    expect(named.length).toBeGreaterThan(6);
    expect(missing).toEqual([]);
  });

  it("README's approval id has the shape of the gate's ids (randomUUID), which approvals.md describes", () => {
    const id = /const id = "([^"]+)"/.exec(read("README.md"))![1]!;
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(PENDING_ID.test(id)).toBe(true);
    expect(read("src/approval/flow/gate.ts")).toMatch(/id: randomUUID\(\)/);
    expect(read("docs/approvals.md")).toMatch(/`id`: a random UUID/);
  });

  it("mibyan call --task: --help and README say the shell state ends with the process, as it does", () => {
    const home = mkdtempSync(path.join(tmpdir(), "mibyan-task-"));
    try {
      const env = cliEnv(home, home);
      const run = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { env, cwd: home, encoding: "utf8" });
      const help = run(["call", "--help"]).stdout.replace(/\s+/g, " ");
      expect(help).toContain("separate `mibyan call --task T` runs do not share shell state");
      expect(read("README.md").replace(/\s+/g, " ")).toContain("two `mibyan call --task T` runs do not share it");
      expect(run(["call", "terminal", JSON.stringify({ command: "cd / && export MIBYAN_DOC_FOO=1" }), "--task", "T"]).status).toBe(0);
      const second = JSON.parse(run(["call", "terminal", JSON.stringify({ command: "pwd; echo FOO=$MIBYAN_DOC_FOO" }), "--task", "T"]).stdout) as { output: string };
      expect(second.output).toBe(`${home}\nFOO=\n`);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("config.md and README say tools: applies through applyConfig, which sets the registry's fields", () => {
    expect(read("docs/config.md")).toContain("applyConfig(registry, loadConfig().config);");
    expect(read("README.md")).toContain("applyConfig(registry, loadConfig().config)");
  });
});
