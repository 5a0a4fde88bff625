/**
 * The profile home holds what the runtime trusts (the discovery cache, the
 * configuration, process records). Created 0755, anyone on the machine could
 * read it, and a cache/ others can list invites tampering. Whatever creates it
 * must create it 0700, like processes/ and logs/.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { discoverTools } from "../src/index.js";
import { BIN, cliEnv, ROOT, spawnCollect } from "./support/cli-run.js";

let parent: string;
beforeEach(() => {
  parent = mkdtempSync(path.join(tmpdir(), "mibyan-home-mode-"));
});
afterEach(() => rmSync(parent, { recursive: true, force: true }));

const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);

describe("the profile home is created private", () => {
  it("by mibyan tools: the home and cache/ 0700, the cache file 0600", async () => {
    const home = path.join(parent, "fresh", "profile");
    const run = await spawnCollect(process.execPath, [BIN, "tools"], { env: cliEnv(home, parent), cwd: ROOT });
    expect(run.status).toBe(0);
    expect(mode(path.join(parent, "fresh"))).toBe("700");
    expect(mode(home)).toBe("700");
    expect(mode(path.join(home, "cache"))).toBe("700");
    expect(mode(path.join(home, "cache", "tool-discovery.json"))).toBe("600");
  });

  it("by discovery's cache in a home that does not exist yet", async () => {
    const dir = mkdtempSync(path.join(parent, "tools-"));
    writeFileSync(path.join(dir, "helper.mjs"), "export const x = 1;\n");
    const home = path.join(parent, "home");
    await discoverTools({ dir, cacheFile: path.join(home, "cache", "scan.json") });
    expect(mode(home)).toBe("700");
    expect(mode(path.join(home, "cache"))).toBe("700");
  });
});
