// The CI check that a test run leaves nothing behind (scripts/ci/leak-check.mjs), played
// against a planted file and a planted process. Other test files run at the same time, so
// only what this file planted is asserted on.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { afterEach, describe, expect, it } from "vitest";

import { alive } from "./support/proc.js";

const SCRIPT = path.join(import.meta.dirname, "..", "scripts", "ci", "leak-check.mjs");

function check(mode: "snapshot" | "compare", state: string, dirs: string) {
  return spawnSync(process.execPath, [SCRIPT, mode, state], {
    encoding: "utf8",
    env: { ...process.env, LEAK_CHECK_DIRS: dirs, LEAK_CHECK_GRACE_MS: "300" },
  });
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("leak check", () => {
  it("reports a file and a detached process created after the snapshot, and not what was cleaned up", () => {
    const work = mkdtempSync(path.join(tmpdir(), "leak-check-"));
    const shared = path.join(work, "shared");
    cleanups.push(() => rmSync(work, { recursive: true, force: true }));
    mkdirSync(shared);
    writeFileSync(path.join(shared, "old"), "there before");
    const state = path.join(work, "state.json");
    expect(check("snapshot", state, shared).status).toBe(0);

    writeFileSync(path.join(shared, "left"), "left behind");
    writeFileSync(path.join(shared, "removed"), "cleaned up");
    rmSync(path.join(shared, "removed"));
    const stray = spawn("sleep", ["60"], { detached: true, stdio: "ignore" });
    stray.unref();
    cleanups.push(() => {
      if (alive(stray.pid!)) process.kill(stray.pid!, "SIGKILL");
    });

    const result = check("compare", state, shared);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`left behind: file ${path.join(shared, "left")}`);
    expect(result.stderr).not.toContain("removed");
    expect(result.stderr).not.toContain(`file ${path.join(shared, "old")}`);
    expect(result.stderr).toMatch(new RegExp(`left behind: process ${stray.pid} \\(parent \\d+\\): sleep 60`));
  });

  it("passes when the directories are as they were and the planted process has ended", () => {
    const work = mkdtempSync(path.join(tmpdir(), "leak-check-"));
    cleanups.push(() => rmSync(work, { recursive: true, force: true }));
    const shared = path.join(work, "shared");
    mkdirSync(shared);
    const state = path.join(work, "state.json");
    expect(check("snapshot", state, shared).status).toBe(0);
    const stray = spawn("sleep", ["60"], { detached: true, stdio: "ignore" });
    process.kill(stray.pid!, "SIGKILL");
    const result = check("compare", state, shared);
    expect(result.stderr).not.toContain(`process ${stray.pid} `);
    expect(result.stderr).not.toContain("file ");
  });
});
