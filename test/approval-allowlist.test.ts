/**
 * The persisted allowlist in a real config.yaml: comments and formatting survive, writes
 * are atomic and safe across processes, `listApprovals` / `revokeApproval` for the CLI,
 * and the `approvals` section of the config schema.
 */

import { spawn } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";

import { addApprovals, ConfigAllowlist, listApprovals, revokeApproval } from "../src/approval/flow/allowlist.js";
import { ApprovalGate } from "../src/approval/flow/gate.js";
import { approvalId } from "../src/approval/flow/keys.js";
import { ConfigError } from "../src/config/config-error.js";
import { clearConfigCache, loadConfig } from "../src/config/load-config.js";
import { createMemoryLogger } from "../src/util/logger.js";
import { buildForNode, type BuiltScripts } from "./fixtures/approval-build.js";
import { RM_NODE_MODULES, RM_SRC, ScriptedSurface, fakeDetect } from "./fixtures/approval-detections.js";

const USER_CONFIG = `# My Mibyan settings
# (hand-written; keep these comments)

terminal:
  backend: local   # the default
  timeout_seconds: 90

approvals:
  # ask me, do not guess
  mode: manual
  timeout_seconds: 45 # a minute is too long

# tools come last
tools:
  max_result_chars: 20000
`;

let root: string;
let home: string;
let file: string;

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), "mibyan-approval-allowlist-"));
  home = path.join(root, "profile");
  file = path.join(home, "config.yaml");
  clearConfigCache();
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function writeConfig(text: string): void {
  mkdirSync(home, { recursive: true });
  writeFileSync(file, text);
}

const KEY = { rule: "recursive-delete", prefix: "rm -f -r node_modules", backend: "local" };

describe("addApprovals / listApprovals / revokeApproval on a real config.yaml", () => {
  it("adds under approvals.allowlist and keeps every comment, blank line and other key", async () => {
    writeConfig(USER_CONFIG);
    const added = await addApprovals([KEY], { home });
    expect(added).toEqual([{ id: approvalId(KEY), ...KEY, added: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }]);
    const text = readFileSync(file, "utf8");
    for (const line of USER_CONFIG.split("\n").filter((l) => l.trim() !== "")) expect(text).toContain(line);
    expect(text).toContain("\n\napprovals:\n"); // the blank line before the section
    const loaded = loadConfig({ home });
    expect(loaded.warnings).toEqual([]);
    expect(loaded.config.approvals).toMatchObject({ mode: "manual", timeoutSeconds: 45, allowlist: [{ ...KEY, added: added[0]!.added }] });
    expect(loaded.config.tools.maxResultChars).toBe(20000);
    expect(listApprovals({ home })).toEqual(added);
  });

  it("creates the file (and the home) when missing, skips keys already present, and revokes by id", async () => {
    expect(await addApprovals([KEY], { home })).toHaveLength(1);
    expect(await addApprovals([KEY, { ...KEY, backend: "ssh" }], { home })).toEqual([expect.objectContaining({ backend: "ssh" })]);
    expect(listApprovals({ home }).map((e) => e.backend)).toEqual(["local", "ssh"]);
    expect(lstatSync(file).mode & 0o777).toBe(0o600);
    expect(lstatSync(home).mode & 0o777).toBe(0o700); // the profile home it created is private

    const removed = await revokeApproval(approvalId(KEY), { home });
    expect(removed).toMatchObject(KEY);
    expect(listApprovals({ home }).map((e) => e.backend)).toEqual(["ssh"]);
    expect(await revokeApproval("000000000000", { home })).toBeUndefined();
    expect(readdirSync(home).filter((n) => n.endsWith(".tmp") || n.endsWith(".lock"))).toEqual([]);
  });

  it("revoking the last entry keeps the rest of the file as written", async () => {
    writeConfig(USER_CONFIG);
    const [entry] = await addApprovals([KEY], { home });
    expect(await revokeApproval(entry!.id, { home })).toMatchObject(KEY);
    expect(listApprovals({ home })).toEqual([]);
    expect(readFileSync(file, "utf8")).toBe(USER_CONFIG.replace("  timeout_seconds: 45 # a minute is too long\n", "  timeout_seconds: 45 # a minute is too long\n  allowlist:\n"));
  });

  it("hand-written entries without a backend mean local; ids match what the gate uses", async () => {
    writeConfig("approvals:\n  allowlist:\n    - rule: recursive-delete\n      prefix: rm -f -r node_modules\n");
    expect(listApprovals({ home })).toEqual([{ id: approvalId(KEY), ...KEY }]);
  });

  it("works with an empty approvals section, an empty file and a comment-only file", async () => {
    for (const text of ["approvals:\n", "", "# nothing yet\n"]) {
      writeConfig(text);
      await addApprovals([KEY], { home });
      expect(listApprovals({ home })).toHaveLength(1);
      if (text.startsWith("#")) expect(readFileSync(file, "utf8")).toContain("# nothing yet");
    }
  });

  it("keeps the file's own style: 4-space indentation, flush sequences, CRLF line ends", async () => {
    writeConfig("toolsets:\n    enabled:\n    - web\n    - files\n");
    await addApprovals([KEY], { home });
    let text = readFileSync(file, "utf8");
    expect(text).toContain("toolsets:\n    enabled:\n    - web\n");
    expect(text).toContain("approvals:\n    allowlist:\n    - rule: recursive-delete\n");

    writeConfig("terminal:\r\n  backend: local # crlf\r\n");
    await addApprovals([KEY], { home });
    text = readFileSync(file, "utf8");
    expect(text).toContain("backend: local # crlf\r\n");
    expect(text.replace(/\r\n/g, "")).not.toContain("\n");
  });

  it("edits a symlinked config at its target and keeps the link", async () => {
    const real = path.join(root, "dotfiles", "mibyan.yaml");
    mkdirSync(path.dirname(real), { recursive: true });
    writeFileSync(real, "# dotfile\n");
    mkdirSync(home, { recursive: true });
    symlinkSync(real, file);
    await addApprovals([KEY], { home });
    expect(lstatSync(file).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, "utf8")).toContain("# dotfile\napprovals:");
  });

  it("refuses to rewrite a malformed file and leaves it untouched", async () => {
    writeConfig("approvals: [unclosed\n");
    await expect(addApprovals([KEY], { home })).rejects.toBeInstanceOf(ConfigError);
    expect(readFileSync(file, "utf8")).toBe("approvals: [unclosed\n");
  });
});

describe("the gate with the config.yaml allowlist", () => {
  it("an `always` answer lands in config.yaml; a fresh gate (a new process) allows it, and only it", async () => {
    writeConfig(USER_CONFIG);
    const first = new ApprovalGate({ home, detect: fakeDetect(), surface: new ScriptedSurface([{ scope: "always" }]), logger: createMemoryLogger() });
    expect(first.settings.timeoutMs).toBe(45_000); // read from the file
    expect(await first.check(RM_NODE_MODULES, { sessionId: "a", backend: "local" })).toMatchObject({ allowed: true, scope: "always" });
    expect(readFileSync(file, "utf8")).toContain("# ask me, do not guess");

    const surface = new ScriptedSurface([{ scope: "deny" }, { scope: "deny" }]);
    const second = new ApprovalGate({ home, detect: fakeDetect(), surface, logger: createMemoryLogger() });
    expect(await second.check(RM_NODE_MODULES, { sessionId: "b", backend: "local" })).toMatchObject({ allowed: true, by: "allowlist" });
    expect(await second.check(RM_SRC, { sessionId: "b", backend: "local" })).toMatchObject({ allowed: false });
    expect(await second.check(RM_NODE_MODULES, { sessionId: "b", backend: "ssh" })).toMatchObject({ allowed: false });

    // Revoked from elsewhere (the CLI): the running gate notices.
    await revokeApproval(approvalId(KEY), { home });
    const third = new ScriptedSurface([{ scope: "deny" }]);
    expect(await second.check(RM_NODE_MODULES, { sessionId: "c", backend: "local", surface: third })).toMatchObject({ allowed: false });
  });

  it("an unreadable config counts as an empty allowlist (fail closed) and is reported", async () => {
    writeConfig(`approvals:\n  allowlist:\n    - rule: recursive-delete\n      prefix: rm -f -r node_modules\n`);
    const errors: unknown[] = [];
    const allowlist = new ConfigAllowlist({ home }, (err) => errors.push(err));
    expect(allowlist.has(approvalId(KEY))).toBe(true);
    writeFileSync(file, "approvals: [broken\n");
    expect(allowlist.has(approvalId(KEY))).toBe(false);
    expect(errors).toHaveLength(1);
  });
});

describe("concurrent writers", () => {
  let built: BuiltScripts;
  beforeAll(() => {
    built = buildForNode(["test/fixtures/approval-allowlist-writer.ts"]);
  });
  afterAll(() => {
    rmSync(built.dir, { recursive: true, force: true });
  });

  it("8 processes adding different entries at the same moment: all 8 land, the file stays valid YAML with its comments", async () => {
    writeConfig(USER_CONFIG);
    const script = built.path("test/fixtures/approval-allowlist-writer.ts");
    const children = Array.from({ length: 8 }, (_, i) => {
      const child = spawn(process.execPath, [script, home, `rule-${i}`, `cmd --flag ${i}`], { stdio: ["pipe", "pipe", "pipe"] });
      let out = "";
      let err = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (err += d.toString()));
      const ready = new Promise<void>((resolve) => {
        const onData = (): void => {
          if (out.includes("ready\n")) {
            child.stdout.off("data", onData);
            resolve();
          }
        };
        child.stdout.on("data", onData);
      });
      const exited = new Promise<{ code: number | null; out: string; err: string }>((resolve) =>
        child.on("close", (code) => resolve({ code, out, err })),
      );
      return { child, ready, exited };
    });
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) c.child.stdin.write("go\n");
    const results = await Promise.all(children.map((c) => c.exited));
    for (const r of results) expect(r, r.err).toMatchObject({ code: 0 });

    const text = readFileSync(file, "utf8");
    const data = parseYaml(text) as { approvals: { allowlist: { rule: string }[] } };
    expect(data.approvals.allowlist.map((e) => e.rule).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `rule-${i}`));
    for (const comment of ["# My Mibyan settings", "# ask me, do not guess", "# a minute is too long", "# tools come last"]) {
      expect(text).toContain(comment);
    }
    expect(listApprovals({ home })).toHaveLength(8);
    expect(existsSync(`${file}.lock`)).toBe(false);
    expect(readdirSync(home).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });
});

describe("the approvals section of the config schema", () => {
  const errorFor = (text: string): ConfigError => {
    writeConfig(text);
    try {
      loadConfig({ home });
    } catch (err) {
      if (err instanceof ConfigError) return err;
      throw err;
    }
    throw new Error("expected a ConfigError");
  };

  it("has defaults and maps snake_case keys", () => {
    writeConfig(`approvals:
  mode: smart
  non_interactive: allow
  gateway_timeout_seconds: 600
  isolated_backends_need_approval: true
  deny:
    - rule: git-*
      reason: never touch history
    - prefix: npm publish
  smart:
    base_url: http://127.0.0.1:8080/v1
    model: qwen
    api_key_env: REVIEWER_KEY
    timeout_seconds: 5
    breaker_threshold: 2
`);
    expect(loadConfig({ home }).config.approvals).toEqual({
      mode: "smart",
      nonInteractive: "allow",
      timeoutSeconds: 60,
      gatewayTimeoutSeconds: 600,
      isolatedBackendsNeedApproval: true,
      deny: [{ rule: "git-*", reason: "never touch history" }, { prefix: "npm publish" }],
      smart: { baseUrl: "http://127.0.0.1:8080/v1", model: "qwen", apiKeyEnv: "REVIEWER_KEY", timeoutSeconds: 5, breakerThreshold: 2 },
    });
    writeConfig("");
    expect(loadConfig({ home }).config.approvals).toEqual({
      mode: "manual",
      nonInteractive: "deny",
      timeoutSeconds: 60,
      gatewayTimeoutSeconds: 300,
      isolatedBackendsNeedApproval: false,
      smart: {},
    });
  });

  it("reports bad values at their location", () => {
    const cases: [string, RegExp, number, number][] = [
      ["approvals:\n  mode: ask\n", /approvals\.mode must be one of manual, smart, off \(got "ask"\)/, 2, 9],
      ["approvals:\n  non_interactive: yes\n", /approvals\.non_interactive must be one of deny, allow/, 2, 20],
      ["approvals:\n  allowlist:\n    - rule: x\n", /approvals\.allowlist\[0\] must be a mapping with `rule` and `prefix`/, 3, 7],
      ["approvals:\n  allowlist:\n    - rule: x\n      prefix: 3\n", /approvals\.allowlist\[0\]\.prefix must be a non-empty string \(got 3\)/, 4, 15],
      ["approvals:\n  allowlist: rm -rf\n", /approvals\.allowlist must be a list of mappings/, 2, 14],
      ["approvals:\n  deny:\n    - reason: because\n", /approvals\.deny\[0\] must be a mapping with one of `rule`, `prefix`, `category`/, 3, 7],
      ["approvals:\n  deny:\n    - category: recursive-delete\n", /approvals\.deny\[0\]\.category must be one of recursive_delete, /, 3, 17],
      ["approvals:\n  timeout_seconds: 0\n", /approvals\.timeout_seconds must be a positive number/, 2, 20],
      ["approvals:\n  smart:\n    base_url: ftp://x\n", /approvals\.smart\.base_url must be an http\(s\) URL/, 3, 15],
      ["approvals:\n  smart:\n    api_key_env: not a name\n", /approvals\.smart\.api_key_env must be an environment variable name/, 3, 18],
      ["approvals:\n  smart:\n    breaker_threshold: 0\n", /approvals\.smart\.breaker_threshold must be a positive integer/, 3, 24],
    ];
    for (const [text, message, line, column] of cases) {
      const err = errorFor(text);
      expect({ text, message: err.message, line: err.line, column: err.column }).toEqual({
        text,
        message: expect.stringMatching(message),
        line,
        column,
      });
    }
  });

  it("an unknown key inside approvals is an error (docs/config.md); unknown fields of entries are ignored", () => {
    writeConfig("approvals:\n  mod: smart\n");
    expect(() => loadConfig({ home })).toThrow(/:2:3: unknown key approvals\.mod; did you mean approvals\.mode\?/);
    writeConfig("approvals:\n  mode: smart\n  allowlist:\n    - rule: r\n      prefix: p\n      note: from a newer release\n");
    expect(loadConfig({ home }).warnings).toEqual([]);
    expect(listApprovals({ home })).toEqual([expect.objectContaining({ rule: "r", prefix: "p", backend: "local" })]);
  });
});
