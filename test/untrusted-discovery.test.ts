/**
 * The discovery scan cache lives in the profile home, where anything that can
 * write there can change it. A poisoned cache used to silently yield "No tools
 * are registered". Each poison here must be noticed (ignored with a warning
 * and rebuilt) or made harmless, and the tools must still be found.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { createMemoryLogger, discoverTools, registry } from "../src/index.js";
import { MAX_SCAN_CACHE_BYTES } from "../src/discovery/scan-cache.js";
import { BIN, cliEnv, ROOT, spawnCollect } from "./support/cli-run.js";

const singleton = path.resolve("src/registry/singleton.ts");
let dir: string;
let cacheDir: string;
let cacheFile: string;
let counter = 0;
let toolName: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "mibyan-poison-tools-"));
  cacheDir = mkdtempSync(path.join(tmpdir(), "mibyan-poison-cache-"));
  cacheFile = path.join(cacheDir, "scan.json");
  registry.logger = createMemoryLogger();
  // A fresh tool name per test: the singleton registry outlives each test, and a module is imported once per process
  // (so "imported" in the report, not a fresh registration, is what shows the module was not skipped).
  toolName = `poison_target_${++counter}`;
  writeFileSync(
    path.join(dir, "target_tool.mjs"),
    `import { registry } from ${JSON.stringify(singleton)};\nregistry.register({ name: ${JSON.stringify(toolName)}, toolset: "poison", schema: { description: "d" }, handler: () => "ran", override: true });\n`,
  );
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

const warnings = () => (registry.logger as ReturnType<typeof createMemoryLogger>).messages.filter((m) => m.level === "warn").map((m) => m.message);

/** Builds a genuine cache, then lets `poison` change it, and runs discovery again. */
async function discoverAfter(poison: (cache: { version: number; files: Record<string, any> }) => void | string) {
  await discoverTools({ dir, cacheFile });
  const cache = JSON.parse(readFileSync(cacheFile, "utf8"));
  const replaced = poison(cache);
  writeFileSync(cacheFile, typeof replaced === "string" ? replaced : JSON.stringify(cache), { mode: 0o600 });
  chmodSync(cacheFile, 0o600);
  return discoverTools({ dir, cacheFile });
}

function expectRebuilt(report: Awaited<ReturnType<typeof discoverTools>>, reason: string | RegExp) {
  expect(report.imported.map((f) => path.basename(f))).toEqual(["target_tool.mjs"]);
  expect(warnings().join("\n")).toMatch(reason);
  expect(warnings().join("\n")).toContain("is ignored and rebuilt");
  // The rebuilt cache is genuine again.
  const rebuilt = JSON.parse(readFileSync(cacheFile, "utf8"));
  expect(rebuilt.files[path.join(dir, "target_tool.mjs")].analysis.registers).toBe(true);
  expect(statSync(cacheFile).mode & 0o777).toBe(0o600);
}

describe("a poisoned scan cache", () => {
  it("a well-formed entry with the right stamp saying the tool module registers nothing is checked, not believed", async () => {
    const report = await discoverAfter((cache) => {
      for (const entry of Object.values(cache.files)) entry.analysis = { registers: false, tools: [] };
    });
    expect(report.imported.map((f) => path.basename(f))).toEqual(["target_tool.mjs"]);
  });

  for (const [label, poison, reason] of [
    ["an analysis of null", (c: any) => void Object.values(c.files).forEach((e: any) => (e.analysis = null)), /entry for .*target_tool.mjs" is malformed/],
    ["registers as a string", (c: any) => void Object.values(c.files).forEach((e: any) => (e.analysis.registers = "no")), /is malformed/],
    ["a stamp of numbers", (c: any) => void Object.values(c.files).forEach((e: any) => (e.stamp.size = 5)), /is malformed/],
    ["files as a number", (c: any) => void (c.files = 5), /its files are not an object/],
    ["another version", (c: any) => void (c.version = 99), /it has version 99, not 1/],
    ["a relative path key", (c: any) => void (c.files["target_tool.mjs"] = { stamp: {}, analysis: {} }), /is malformed/],
    ["not JSON", () => "{ this is not json", /it is not JSON/],
    ["a JSON array", () => "[]", /it is not a JSON object/],
  ] as const) {
    it(`${label} makes the cache ignored and rebuilt`, async () => {
      expectRebuilt(await discoverAfter(poison as never), reason);
    });
  }

  it("a symlink to /dev/zero is not read", async () => {
    await discoverTools({ dir, cacheFile });
    rmSync(cacheFile);
    symlinkSync("/dev/zero", cacheFile);
    const report = await discoverTools({ dir, cacheFile });
    expect(report.imported.map((f) => path.basename(f))).toEqual(["target_tool.mjs"]);
    expect(warnings().join("\n")).toContain("a character device, not a regular file");
  });

  it("a FIFO does not hang discovery", async () => {
    execFileSync("mkfifo", [cacheFile]);
    const report = await discoverTools({ dir, cacheFile });
    expect(report.imported.map((f) => path.basename(f))).toEqual(["target_tool.mjs"]);
    expect(warnings().join("\n")).toContain("a FIFO, not a regular file");
  });

  it("a cache over the size limit is not read", async () => {
    expectRebuilt(await discoverAfter(() => " ".repeat(MAX_SCAN_CACHE_BYTES + 1)), /larger than/);
  });

  it("a cache others may write is not trusted", async () => {
    await discoverTools({ dir, cacheFile });
    const cache = readFileSync(cacheFile, "utf8").replace('"registers":true', '"registers":false');
    writeFileSync(cacheFile, cache);
    chmodSync(cacheFile, 0o666);
    expectRebuilt(await discoverTools({ dir, cacheFile }), /others may write it \(mode 666\)/);
  });

  it.skipIf(process.getuid?.() !== 0)("a cache owned by another user is not trusted", async () => {
    await discoverTools({ dir, cacheFile });
    chownSync(cacheFile, 12345, 12345);
    expectRebuilt(await discoverTools({ dir, cacheFile }), /owned by uid 12345, not by this user/);
  });
});

describe("mibyan tools with a poisoned cache in the profile home", () => {
  it("still lists the built-in tools when every entry says its module registers nothing", async () => {
    const home = mkdtempSync(path.join(tmpdir(), "mibyan-poison-home-"));
    try {
      const run = () => spawnCollect(process.execPath, [BIN, "tools"], { env: cliEnv(home, home), cwd: ROOT });
      const first = await run();
      expect(first.status).toBe(0);
      const file = path.join(home, "cache", "tool-discovery.json");
      const cache = JSON.parse(readFileSync(file, "utf8"));
      for (const entry of Object.values(cache.files) as { analysis: unknown }[]) entry.analysis = { registers: false, tools: [] };
      writeFileSync(file, JSON.stringify(cache));
      const second = await run();
      expect(second.status).toBe(0);
      expect(second.stdout).not.toContain("No tools are registered");
      expect(second.stdout).toBe(first.stdout);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
