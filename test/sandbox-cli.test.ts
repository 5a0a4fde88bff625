/**
 * The sandbox as the `mibyan` command sees it, through config.yaml: `mibyan
 * tools` says whether it is active and why not, and `mibyan call terminal`
 * runs inside it, or is refused when it is configured but cannot work.
 * Runs the built CLI (dist/) as a real child process.
 */

import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";

import { afterAll, describe, expect, it } from "vitest";

import { checkBubblewrap } from "../src/sandbox/bubblewrap.js";
import { findExecutable } from "../src/util/find-executable.js";
import { BIN, cliEnv, spawnCollect } from "./support/cli-run.js";

const problem = checkBubblewrap().problem;
const scratch = realpathSync(mkdtempSync("/var/tmp/mibyan-sandbox-cli-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A profile home with `config`, a user home, and a workspace; `path` replaces PATH. */
async function mibyan(args: string[], config: string, options: { path?: string } = {}) {
  const root = mkdtempSync(path.join(scratch, "run-"));
  const home = path.join(root, "home");
  const workspace = path.join(root, "ws");
  mkdirSync(home);
  mkdirSync(workspace);
  writeFileSync(path.join(home, "config.yaml"), config.replaceAll("WORKSPACE", workspace));
  const env = cliEnv(home, root);
  if (options.path !== undefined) env.PATH = options.path;
  const run = await spawnCollect(process.execPath, [BIN, ...args], { env, cwd: workspace });
  return { ...run, home, workspace, root };
}

/** A PATH with bash and sh but no bwrap. */
function pathWithoutBwrap(): string {
  const bin = mkdtempSync(path.join(scratch, "bin-"));
  for (const name of ["bash", "sh"]) symlinkSync(findExecutable(name)!, path.join(bin, name));
  return bin;
}

const WRITE_CONFIG = "terminal:\n  cwd: WORKSPACE\n  local:\n    sandbox: workspace-write\napprovals:\n  mode: 'off'\n";

describe("mibyan tools reports the local sandbox", () => {
  it("off by default", async () => {
    const run = await mibyan(["tools"], "");
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^Local sandbox: off\b/m);
  });

  it("configured but bubblewrap missing: not active, says why and that commands are refused", async () => {
    const run = await mibyan(["tools"], WRITE_CONFIG, { path: pathWithoutBwrap() });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^✗ Local sandbox: NOT active \(configured: workspace-write, network off\): bubblewrap \(bwrap\) is not installed/m);
    expect(run.stdout).toContain("local commands and execute_code are refused");
    // The terminal tool is not offered to a model while every command would be refused.
    expect(run.stdout).toMatch(/^\s+💻 terminal\s+unavailable: .*The local sandbox is configured but cannot be used, so local commands are refused: bubblewrap \(bwrap\) is not installed/m);
  });

  it("--json carries the same report under `sandbox`", async () => {
    const off = JSON.parse((await mibyan(["tools", "--json"], "")).stdout) as { sandbox: Record<string, unknown> };
    expect(off.sandbox).toEqual({ mode: "off", network: null, writableRoots: [], active: false, reason: null, version: null });
    const missing = await mibyan(["tools", "--json"], WRITE_CONFIG, { path: pathWithoutBwrap() });
    const json = JSON.parse(missing.stdout) as { sandbox: Record<string, unknown>; toolsets: { name: string; tools: { name: string; available: boolean }[] }[] };
    expect(json.sandbox).toMatchObject({ mode: "workspace-write", network: false, active: false, reason: expect.stringContaining("bubblewrap (bwrap) is not installed") });
    const terminal = json.toolsets.flatMap((t) => t.tools).find((t) => t.name === "terminal");
    expect(terminal?.available).toBe(false);
  });

  it("a misspelt key is an invalid setting, not a silently disabled sandbox", async () => {
    const run = await mibyan(["tools"], "terminal:\n  local:\n    sandbox:\n      mode: read-only\n      netwrok: true\n");
    expect(run.stdout).toMatch(/^✗ Local sandbox: invalid setting: terminal\.local\.sandbox\.netwrok is not a known option/m);
    expect(run.stdout).toMatch(/^\s+💻 terminal\s+unavailable: .*the local sandbox setting is invalid, so local commands are refused: terminal\.local\.sandbox\.netwrok is not a known option/m);
  });

  it.skipIf(problem !== undefined)("active when bubblewrap works", async () => {
    const run = await mibyan(["tools"], "terminal:\n  local:\n    sandbox:\n      mode: read-only\n      network: true\n");
    expect(run.stdout).toMatch(/^✓ Local sandbox: active \(read-only, network on; bubblewrap /m);
  });
});

describe("mibyan call terminal with the sandbox from config.yaml", () => {
  it("configured but unusable: the command is refused and never runs", async () => {
    const run = await mibyan(["call", "terminal", JSON.stringify({ command: "touch ran.txt" })], WRITE_CONFIG, { path: pathWithoutBwrap() });
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/sandbox is configured but cannot be used/);
    expect(existsSync(path.join(run.workspace, "ran.txt"))).toBe(false);
  });

  it.skipIf(problem !== undefined)("active: approvals off, a write outside the workspace still fails; inside it works", async () => {
    const victim = path.join(scratch, "victim.txt");
    writeFileSync(victim, "keep\n");
    const run = await mibyan(["call", "terminal", JSON.stringify({ command: `echo ok > inside.txt; echo owned > ${victim}` })], WRITE_CONFIG);
    expect(run.stdout).toContain("Read-only file system");
    expect(readFileSync(victim, "utf8")).toBe("keep\n");
    expect(readFileSync(path.join(run.workspace, "inside.txt"), "utf8")).toBe("ok\n");
  });
});
