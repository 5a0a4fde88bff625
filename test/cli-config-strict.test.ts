/**
 * An unknown key in config.yaml's terminal or approvals section stops the CLI (exit 2) with a
 * located message and the close match, instead of a warning while commands keep running on the
 * default (docs/config.md, "Unknown keys"). Real CLI processes, real config.yaml files.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, cliEnv, spawnCollect } from "./support/cli-run.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function mibyan(args: string[], config: string) {
  const home = mkdtempSync(path.join(tmpdir(), "mibyan-strict-"));
  dirs.push(home);
  writeFileSync(path.join(home, "config.yaml"), config);
  return spawnCollect(process.execPath, [BIN, ...args], { env: cliEnv(home, tmpdir()), cwd: home });
}

describe.concurrent("config.yaml: unknown keys in safety-relevant sections", () => {
  it("terminal.bakend: exit 2, line:column, did you mean terminal.backend; the command does not run", async () => {
    const run = await mibyan(["call", "terminal", JSON.stringify({ command: "echo RAN-ON-LOCAL" })], "terminal:\n  bakend: docker\n");
    expect(run.status).toBe(2);
    expect(run.stdout).not.toContain("RAN-ON-LOCAL");
    expect(run.stderr).toMatch(/config\.yaml:2:3: unknown key terminal\.bakend; did you mean terminal\.backend\?/);
  });

  it("approvals.non_interactve: exit 2 from mibyan tools too", async () => {
    const run = await mibyan(["tools"], "approvals:\n  mode: manual\n  non_interactve: deny\n");
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/config\.yaml:3:3: unknown key approvals\.non_interactve; did you mean approvals\.non_interactive\?/);
  });

  it("an unknown key elsewhere (tools, top level) stays a warning: exit 0", async () => {
    const run = await mibyan(["tools", "--json"], "tools:\n  max_concurency: 2\nmcp_servrs: {}\n");
    expect(run.status).toBe(0);
    expect(run.stderr).toMatch(/config\.yaml:2:3: unknown key tools\.max_concurency; did you mean tools\.max_concurrency\?/);
    expect(run.stderr).toMatch(/config\.yaml:3:1: unknown key mcp_servrs; did you mean mcp_servers\?/);
  });
});
