// The README's quick start is what a new user types first: its commands must run the
// CLI directly (no npx, which installs the repository into npm's cache and rebuilds it),
// and each `mibyan` command it shows must work as written.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { afterAll, describe, expect, it } from "vitest";

import { ROOT, cliEnv, spawnCollect } from "./support/cli-run.js";

const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
const quickStart = readme.slice(readme.indexOf("## Quick start"), readme.indexOf("\n## ", readme.indexOf("## Quick start") + 1));
const shellLines = [...quickStart.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((block) =>
  block[1]!.split("\n").map((line) => line.replace(/\s+#.*$/, "").trim()).filter(Boolean),
);
/** The CLI invocations in the quick start, split off `npm ci && …`. */
const cliCommands = shellLines.flatMap((line) => line.split("&&").map((part) => part.trim())).filter((part) => part.startsWith("./bin/mibyan.js"));

const work = mkdtempSync(path.join(tmpdir(), "quick-start-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("README quick start", () => {
  it("installs with npm ci, tests with npm test, and never goes through npx", () => {
    expect(shellLines[0]).toMatch(/^npm ci && \.\/bin\/mibyan\.js tools$/);
    expect(shellLines).toContain("npm test");
    expect(quickStart).not.toMatch(/^npx /m);
    expect(cliCommands.length).toBeGreaterThanOrEqual(3);
  });

  it.each(cliCommands)("%s runs and exits 0", async (command) => {
    // The shown commands use single-quoted JSON and no other shell syntax: split them the same way sh would.
    const args = [...command.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!);
    const run = await spawnCollect(process.execPath, [path.join(ROOT, args[0]!), ...args.slice(1)], {
      env: cliEnv(path.join(work, "home"), work),
      cwd: work,
    });
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.status).toBe(0);
    expect(run.stdout.length).toBeGreaterThan(0);
  });
});
