/**
 * Error messages that must say what is actually wrong: the config validator
 * names the missing key of an approvals entry; write_file onto a directory
 * never claims the directory is empty; read_file still describes a directory
 * it listed.
 */
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { MemoryAllowlist } from "../src/approval/flow/allowlist.js";
import { ApprovalGate } from "../src/approval/flow/gate.js";
import { NonInteractiveSurface } from "../src/approval/surfaces/non-interactive.js";
import { ConfigError } from "../src/config/config-error.js";
import { parseConfig } from "../src/config/load-config.js";
import { createLocalFactory } from "../src/environments/local.js";
import { EnvironmentManager } from "../src/environments/manager.js";
import type { ToolContext } from "../src/registry/types.js";
import { createReadFileHandler } from "../src/tools/read-file.js";
import { createWriteFileHandler } from "../src/tools/write-file.js";
import { createMemoryLogger } from "../src/util/logger.js";

function configError(text: string): string {
  try {
    parseConfig(text, "config.yaml");
  } catch (thrown) {
    expect(thrown).toBeInstanceOf(ConfigError);
    return (thrown as Error).message;
  }
  throw new Error(`no error for ${JSON.stringify(text)}`);
}

describe("config: approvals entries say which key is missing", () => {
  it("names the missing required key, or both", () => {
    expect(configError("approvals:\n  allowlist:\n    - rule: x\n")).toBe(
      "config.yaml:3:7: approvals.allowlist[0] must be a mapping with `rule` and `prefix` (got a mapping without `prefix`)",
    );
    expect(configError("approvals:\n  allowlist:\n    - prefix: rm -rf\n")).toMatch(/\(got a mapping without `rule`\)$/);
    expect(configError("approvals:\n  allowlist:\n    - backend: local\n")).toMatch(/\(got a mapping without `rule` and `prefix`\)$/);
    expect(configError("approvals:\n  allowlist:\n    - rule: x\n      prefix:\n")).toMatch(/\(got a mapping with `prefix` null\)$/);
  });

  it("a key of the wrong type is reported at that key", () => {
    expect(configError("approvals:\n  allowlist:\n    - rule: x\n      prefix: 3\n")).toBe(
      "config.yaml:4:15: approvals.allowlist[0].prefix must be a non-empty string (got 3)",
    );
    expect(configError("approvals:\n  allowlist:\n    - rule: x\n      prefix: ''\n")).toMatch(/approvals\.allowlist\[0\]\.prefix must be a non-empty string \(got ""\)$/);
  });

  it("a deny rule with none of rule, prefix, category lists what it has instead", () => {
    expect(configError("approvals:\n  deny:\n    - reason: because\n      backend: local\n")).toBe(
      "config.yaml:3:7: approvals.deny[0] must be a mapping with one of `rule`, `prefix`, `category` (got a mapping with none of them (only `reason`, `backend`))",
    );
    expect(configError("approvals:\n  deny:\n    - {}\n")).toMatch(/\(got an empty mapping\)$/);
  });

  it("a value that is not a mapping is still described as what it is", () => {
    expect(configError("approvals:\n  allowlist:\n    - just a string\n")).toMatch(/approvals\.allowlist\[0\] must be a mapping with `rule` and `prefix` \(got "just a string"\)$/);
  });
});

describe("write_file and read_file on a directory (real directories)", () => {
  let root: string;
  let manager: EnvironmentManager;
  let gate: ApprovalGate;
  beforeAll(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "mibyan-messages-")));
    mkdirSync(join(root, "home"));
    manager = new EnvironmentManager({
      factories: [createLocalFactory({ initialCwd: root, env: () => ({ ...process.env, HOME: join(root, "home") }) })],
      defaultBackend: "local",
      closeOnExit: false,
      idleTimeoutMs: 0,
    });
    gate = new ApprovalGate({
      settings: { mode: "manual" },
      surface: new NonInteractiveSurface("deny"),
      allowlist: new MemoryAllowlist(),
      logger: createMemoryLogger(),
      home: join(root, "home"),
    });
  });
  afterAll(async () => {
    await manager?.closeAll();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const ctx: ToolContext = { signal: new AbortController().signal, toolName: "write_file", taskId: "main", sessionId: "s" };
  const write = async (path: string): Promise<string> =>
    (JSON.parse(await createWriteFileHandler({ environments: () => manager, gate: () => gate })({ path, content: "x" }, ctx)) as { error: string }).error;
  const read = async (path: string): Promise<string> =>
    (JSON.parse(await createReadFileHandler({ environments: () => manager })({ path }, ctx)) as { error: string }).error;

  it("onto a non-empty directory: refused, nothing written, and no claim that it is empty", async () => {
    const full = join(root, "full");
    mkdirSync(full);
    writeFileSync(join(full, "keep.txt"), "k");
    const error = await write(full);
    expect(error).toBe(`${full} is a directory, not a file; nothing was written. To write a file inside it, give the file's path (${full}/NAME).`);
    expect(error).not.toMatch(/empty/);
    expect(readdirSync(full)).toEqual(["keep.txt"]);
  });

  it("onto an empty directory: the same refusal", async () => {
    const empty = join(root, "empty");
    mkdirSync(empty);
    expect(await write(empty)).toBe(`${empty} is a directory, not a file; nothing was written. To write a file inside it, give the file's path (${empty}/NAME).`);
    expect(readdirSync(empty)).toEqual([]);
  });

  it("read_file lists what it saw: empty or not", async () => {
    const full = join(root, "full2");
    mkdirSync(full);
    writeFileSync(join(full, "a.txt"), "a");
    expect(await read(full)).toBe(`${full} is a directory, not a file. It contains a.txt. Give the path of a file inside it, or use search_files to find one.`);
    const empty = join(root, "empty2");
    mkdirSync(empty);
    expect(await read(empty)).toBe(`${empty} is a directory, not a file. It is empty. Give the path of a file inside it, or use search_files to find one.`);
  });
});
