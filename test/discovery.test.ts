import { mkdtempSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger, discoverTools, registry } from "../src/index.js";
import { analyzeModule } from "../src/discovery/static-analysis.js";

const singleton = path.resolve("src/registry/singleton.ts");

function toolModule(name: string, extra = ""): string {
  return `import { registry } from ${JSON.stringify(singleton)};
${extra}
registry.register({ name: ${JSON.stringify(name)}, toolset: "found", schema: { description: "found tool" }, handler: () => ${JSON.stringify(name)} });
`;
}

let dir: string;
let cacheFile: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "mibyan-discovery-"));
  cacheFile = path.join(mkdtempSync(path.join(tmpdir(), "mibyan-cache-")), "scan.json");
  registry.logger = createMemoryLogger();
});

describe("static analysis", () => {
  it("finds top-level registry.register calls only, in JS and TS", async () => {
    expect((await analyzeModule(`registry.register({ name: "a", toolset: "t" });`, "a.js")).tools).toEqual([{ name: "a", toolset: "t" }]);
    expect((await analyzeModule(`export const e = registry.register({ name: "b" });`, "b.mjs")).registers).toBe(true);
    expect((await analyzeModule(`await registry.register({ name: "c" });`, "c.mjs")).registers).toBe(true);
    expect((await analyzeModule(`function later() { registry.register({ name: "d" }); }`, "d.js")).registers).toBe(false);
    expect((await analyzeModule(`if (x) { registry.register({ name: "e" }); }`, "e.js")).registers).toBe(false);
    expect((await analyzeModule(`other.register({ name: "f" }); registry["register"]({});`, "f.js")).registers).toBe(false);
    expect((await analyzeModule(`// registry.register({ name: "g" })\nconst s = "registry.register(";`, "g.js")).registers).toBe(false);
    const ts = await analyzeModule(`import type { X } from "y";\nconst n: number = 1 as number;\ninterface I { a: string }\nregistry.register({ name: "h", toolset: "ts" } satisfies object);`, "h.ts");
    expect(ts.registers).toBe(true);
  });
});

describe("discoverTools", () => {
  it("imports tool modules, skips helpers, and logs and skips modules that fail to import", async () => {
    writeFileSync(path.join(dir, "alpha_tool.mjs"), toolModule("alpha_discovered"));
    writeFileSync(path.join(dir, "helper.mjs"), `globalThis.__mibyanHelperImported = true;\nexport function make(registry) { registry.register({}); }\n`);
    writeFileSync(path.join(dir, "broken_tool.mjs"), toolModule("broken_discovered", `import "mibyan-package-that-does-not-exist";`));
    writeFileSync(path.join(dir, "typed_tool.ts"), toolModule("typed_discovered", `const answer: number = 42 as number;`));
    writeFileSync(path.join(dir, "bad_syntax.mjs"), `registry.register({ name: "x" ;`);
    writeFileSync(path.join(dir, "types.d.ts"), `export declare const x: number;`);
    writeFileSync(path.join(dir, "notes.txt"), `registry.register({})`);
    const report = await discoverTools({ dir, cacheFile });
    expect(report.imported.map((f) => path.basename(f))).toEqual(["alpha_tool.mjs", "typed_tool.ts"]);
    expect(report.skipped.map((f) => path.basename(f))).toEqual(["helper.mjs"]);
    expect(report.failed.map((f) => path.basename(f.file))).toEqual(["bad_syntax.mjs", "broken_tool.mjs"]);
    expect(report.failed[1]!.tools).toEqual([{ name: "broken_discovered", toolset: "found" }]);
    expect(report.failed[1]!.error).toMatch(/mibyan-package-that-does-not-exist/);
    expect((globalThis as { __mibyanHelperImported?: boolean }).__mibyanHelperImported).toBeUndefined();
    expect(registry.has("alpha_discovered")).toBe(true);
    expect(registry.has("typed_discovered")).toBe(true);
    expect(registry.has("broken_discovered")).toBe(false);
    expect(await registry.dispatch("alpha_discovered")).toBe("alpha_discovered");
    const errors = (registry.logger as ReturnType<typeof createMemoryLogger>).messages.filter((m) => m.level === "error");
    expect(errors.map((m) => m.message).join("\n")).toMatch(/broken_tool\.mjs failed to import and is skipped/);
  });

  it("uses the scan cache for unchanged files, and a new or changed file is still found", async () => {
    writeFileSync(path.join(dir, "one_tool.mjs"), toolModule("cache_one"));
    await discoverTools({ dir, cacheFile });
    const cache = JSON.parse(readFileSync(cacheFile, "utf8"));
    const key = path.join(dir, "one_tool.mjs");
    expect(cache.files[key].analysis.registers).toBe(true);

    // A cache entry whose stamp matches is trusted: poison a helper's entry to prove no parse happened.
    const helper = path.join(dir, "helper.mjs");
    writeFileSync(helper, "globalThis.__mibyanHelperImported = true;\n");
    await discoverTools({ dir, cacheFile });
    const withHelper = JSON.parse(readFileSync(cacheFile, "utf8"));
    expect(withHelper.files[helper].analysis.registers).toBe(false);
    withHelper.files[helper].analysis = { registers: true, tools: [] };
    // A cached "registers nothing" could hide a tool, so for a module that mentions `register` it is checked by parsing.
    withHelper.files[key].analysis = { registers: false, tools: [] };
    writeFileSync(cacheFile, JSON.stringify(withHelper), { mode: 0o600 });
    writeFileSync(path.join(dir, "two_tool.mjs"), toolModule("cache_two"));
    const second = await discoverTools({ dir, cacheFile });
    expect(second.skipped).toEqual([]);
    expect(second.imported.map((f) => path.basename(f))).toEqual(["helper.mjs", "one_tool.mjs", "two_tool.mjs"]);
    expect((globalThis as { __mibyanHelperImported?: boolean }).__mibyanHelperImported).toBe(true);
    expect(registry.has("cache_two")).toBe(true);

    // Touching the file changes its stamp, so it is parsed again.
    const later = new Date(Date.now() + 5_000);
    utimesSync(key, later, later);
    const third = await discoverTools({ dir, cacheFile });
    expect(third.imported.map((f) => path.basename(f))).toContain("one_tool.mjs");
  });

  it("reports an unreadable folder instead of throwing", async () => {
    const report = await discoverTools({ dir: path.join(dir, "missing"), cacheFile: false });
    expect(report).toEqual({ imported: [], skipped: [], failed: [] });
  });
});
