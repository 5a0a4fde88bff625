/**
 * One redaction policy for every tool output that reaches the model
 * (src/redaction/tool-output.ts): read_file, search_files and patch hide the
 * secrets of real files (private key blocks, tokens, `API_KEY=...`) the way
 * terminal's output does, line for line, so line numbers and offsets stay
 * those of the file; config `terminal.redact_output: false` turns it off for
 * all of them.
 */

import { spawnSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { MemoryAllowlist } from "../src/approval/flow/allowlist.js";
import { ApprovalGate } from "../src/approval/flow/gate.js";
import { NonInteractiveSurface } from "../src/approval/surfaces/non-interactive.js";
import type { EnvironmentManager } from "../src/environments/manager.js";
import { redactSecrets } from "../src/redaction/redact.js";
import { redactLines } from "../src/redaction/tool-output.js";
import type { ToolContext } from "../src/registry/types.js";
import { createExecuteCodeHandler } from "../src/tools/execute-code.js";
import { createPatchHandler } from "../src/tools/patch.js";
import { createReadFileHandler } from "../src/tools/read-file.js";
import { createSearchFilesHandler } from "../src/tools/search-files.js";
import { createMemoryLogger } from "../src/util/logger.js";
import { callFileTool, fileToolContext, localFileTools, type Handler, type Json } from "./support/local-file-tools.js";


const HAVE_RG = spawnSync("rg", ["--version"], { stdio: "ignore" }).status === 0;

const OPENAI = "sk-proj-abcdefghijklmnopqrstuv123456";
const GITHUB = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
const DB_PASSWORD = "s3cretPassw0rd";
const RSA = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs1", format: "pem" }).toString().trimEnd();
const ED25519 = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString().trimEnd();
const RSA_LINES = RSA.split("\n");
const RSA_BODY = RSA_LINES.slice(1, -1);

// A settings file: secrets on lines 2-4, plain lines around them, a key block from line 7, more after it.
const SETTINGS = [
  "# settings",
  `API_KEY=${OPENAI}`,
  `export GITHUB_TOKEN="${GITHUB}"`,
  `db_url: postgres://app:${DB_PASSWORD}@db:5432/app`,
  "plain = 1",
  "",
  ...RSA_LINES,
  "after = 2",
  "last = 3",
].join("\n") + "\n";
const KEY_FIRST = 7;
const KEY_LAST = KEY_FIRST + RSA_LINES.length - 1;
const TOTAL = KEY_LAST + 2;
const SECRETS = [OPENAI, GITHUB, DB_PASSWORD, ...RSA_BODY];

let root: string;
let dir: string;
let manager: EnvironmentManager;
let gate: ApprovalGate;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "mibyan-file-redact-")));
  dir = join(root, "project");
  mkdirSync(dir);
  writeFileSync(join(dir, "settings.env"), SETTINGS);
  writeFileSync(join(dir, "id_ed25519"), `${ED25519}\n`);
  writeFileSync(join(dir, "readme.md"), "nothing secret here\nkey = value\n");
  ({ manager, gate } = localFileTools(root, root));
});

afterAll(async () => {
  await manager?.closeAll();
  if (root) rmSync(root, { recursive: true, force: true });
});

const ctx = (): ToolContext => fileToolContext("redact");
const call = (handler: Handler, args: Record<string, unknown>): Promise<Json> => callFileTool(handler, args, "redact");
const expectNoSecrets = (text: string) => {
  for (const secret of SECRETS) expect(text).not.toContain(secret);
};
/** read_file's numbered lines back as { number: text }. */
const numbered = (content: string) => Object.fromEntries(content.split("\n").map((l) => [Number(l.slice(0, 6)), l.slice(7)]));

const readFile = createReadFileHandler({ environments: () => manager });

describe("read_file", () => {
  it("hides tokens, passwords and a private key block, on the same lines", async () => {
    const r = await call(readFile, { path: join(dir, "settings.env") });
    expect(r).toMatchObject({ start_line: 1, end_line: TOTAL, total_lines: TOTAL, truncated: false, redacted_lines: 3 + RSA_LINES.length, error: null });
    expectNoSecrets(JSON.stringify(r));
    const lines = numbered(r.content);
    expect(Object.keys(lines)).toHaveLength(TOTAL);
    expect(lines[1]).toBe("# settings");
    expect(lines[2]).toBe("API_KEY=[REDACTED]");
    expect(lines[3]).toBe("export GITHUB_TOKEN=[REDACTED]");
    expect(lines[4]).toBe("db_url: postgres://app:[REDACTED]@db:5432/app");
    expect(lines[5]).toBe("plain = 1");
    for (let n = KEY_FIRST; n <= KEY_LAST; n++) expect(lines[n], `line ${n}`).toBe("[REDACTED]");
    expect(lines[KEY_LAST + 1]).toBe("after = 2");
    expect(r.note).toMatch(/^Secrets on 30 lines are shown as \[REDACTED\] \(the file has the real values there; do not copy \[REDACTED\] into patch's old_string\)\.$/);
  });

  it("hides a key's body in a window that starts inside the block, and nothing after it", async () => {
    const inside = await call(readFile, { path: join(dir, "settings.env"), offset: KEY_FIRST + 5, limit: 6 });
    expect(inside).toMatchObject({ start_line: KEY_FIRST + 5, end_line: KEY_FIRST + 10, next_offset: KEY_FIRST + 11, redacted_lines: 6 });
    expect(inside.content).toBe(Array.from({ length: 6 }, (_, i) => `${String(KEY_FIRST + 5 + i).padStart(6)}\t[REDACTED]`).join("\n"));
    const across = await call(readFile, { path: join(dir, "settings.env"), offset: KEY_LAST - 1, limit: 4 });
    expect(numbered(across.content)).toEqual({ [KEY_LAST - 1]: "[REDACTED]", [KEY_LAST]: "[REDACTED]", [KEY_LAST + 1]: "after = 2", [KEY_LAST + 2]: "last = 3" });
    // A window that ends inside the block: what follows BEGIN is hidden to the window's end.
    const opening = await call(readFile, { path: join(dir, "settings.env"), offset: KEY_FIRST - 1, limit: 4 });
    expect(numbered(opening.content)).toEqual({ [KEY_FIRST - 1]: "", [KEY_FIRST]: "[REDACTED]", [KEY_FIRST + 1]: "[REDACTED]", [KEY_FIRST + 2]: "[REDACTED]" });
    const ed = await call(readFile, { path: join(dir, "id_ed25519"), offset: 2 });
    expect(ed).toMatchObject({ content: `     2\t[REDACTED]\n     3\t[REDACTED]`, redacted_lines: 2 });
  });

  it("leaves files without secrets as they are, with no note", async () => {
    const r = await call(readFile, { path: join(dir, "readme.md") });
    expect(r).toEqual({
      path: join(dir, "readme.md"),
      content: "     1\tnothing secret here\n     2\tkey = value",
      start_line: 1,
      end_line: 2,
      total_lines: 2,
      file_size: 32,
      truncated: false,
      error: null,
    });
  });
});

describe("search_files", () => {
  for (const engine of ["rg", "fallback"] as const) {
    const skip = engine === "rg" && !HAVE_RG;
    const search = createSearchFilesHandler({ environments: () => manager, engine });

    it.skipIf(skip)(`${engine}: matching lines and their context come back redacted, at their line numbers`, async () => {
      const tokens = await call(search, { path: dir, pattern: "API_KEY|GITHUB_TOKEN|postgres", glob: "*.env" });
      expect(tokens.files).toEqual([
        {
          path: join(dir, "settings.env"),
          lines: [
            { line: 2, text: "API_KEY=[REDACTED]" },
            { line: 3, text: "export GITHUB_TOKEN=[REDACTED]" },
            { line: 4, text: "db_url: postgres://app:[REDACTED]@db:5432/app" },
          ],
        },
      ]);
      expect(tokens).toMatchObject({ match_count: 3, redacted_lines: 3 });
      // The BEGIN line with context: the block's lines are hidden, the line before it is not.
      const begin = await call(search, { path: join(dir, "settings.env"), pattern: "BEGIN RSA", context: 2 });
      expect(begin.files[0].lines).toEqual([
        { line: KEY_FIRST - 2, text: "plain = 1", context: true },
        { line: KEY_FIRST - 1, text: "", context: true },
        { line: KEY_FIRST, text: "[REDACTED]" },
        { line: KEY_FIRST + 1, text: "[REDACTED]", context: true },
        { line: KEY_FIRST + 2, text: "[REDACTED]", context: true },
      ]);
      expectNoSecrets(JSON.stringify([tokens, begin]));
    });

    it.skipIf(skip)(`${engine}: a hit inside a key's body, far from its BEGIN line, is hidden too`, async () => {
      const fragment = RSA_BODY[10]!.slice(8, 30);
      const r = await call(search, { path: dir, pattern: fragment.replace(/[+/]/g, ".") });
      expect(r.files).toEqual([{ path: join(dir, "settings.env"), lines: [{ line: KEY_FIRST + 11, text: "[REDACTED]" }] }]);
      expect(r).toMatchObject({ match_count: 1, redacted_lines: 1 });
      // Base64 that is not inside a key block is shown.
      writeFileSync(join(dir, "blob.txt"), "aGVsbG8gd29ybGQgdGhpcyBpcyBub3QgYSBrZXk=\n");
      try {
        expect((await call(search, { path: join(dir, "blob.txt"), pattern: "aGVsbG8" })).files[0].lines).toEqual([{ line: 1, text: "aGVsbG8gd29ybGQgdGhpcyBpcyBub3QgYSBrZXk=" }]);
      } finally {
        rmSync(join(dir, "blob.txt"));
      }
    });
  }
});

describe("patch", () => {
  const patch = createPatchHandler({ environments: () => manager, gate: () => gate });

  it("shows the diff's context redacted while the file keeps its secrets", async () => {
    const path = join(dir, "patched.env");
    writeFileSync(path, SETTINGS);
    const r = await call(patch, { path, old_string: "plain = 1", new_string: "plain = 2" });
    expect(r.error).toBeNull();
    expect(r.diff).toBe(
      [
        `--- ${path}`,
        `+++ ${path}`,
        "@@ -2,7 +2,7 @@",
        " API_KEY=[REDACTED]",
        " export GITHUB_TOKEN=[REDACTED]",
        " db_url: postgres://app:[REDACTED]@db:5432/app",
        "-plain = 1",
        "+plain = 2",
        " ",
        " [REDACTED]",
        " [REDACTED]",
      ].join("\n"),
    );
    expect(readFileSync(path, "utf8")).toBe(SETTINGS.replace("plain = 1", "plain = 2"));
    // After the block: its last lines in the context are hidden though the BEGIN line is far above.
    const after = await call(patch, { path, old_string: "after = 2", new_string: "after = 3" });
    expect(after.diff.split("\n").slice(2)).toEqual([`@@ -${KEY_LAST - 2},5 +${KEY_LAST - 2},5 @@`, " [REDACTED]", " [REDACTED]", " [REDACTED]", "-after = 2", "+after = 3", " last = 3"]);
    // A key written by the edit itself is hidden on the + side.
    const added = await call(patch, { path, old_string: "last = 3\n", new_string: `last = 3\n${ED25519}\n` });
    expect(added.diff.split("\n").slice(-ED25519.split("\n").length - 1)).toEqual([" last = 3", ...ED25519.split("\n").map(() => "+[REDACTED]")]);
    expectNoSecrets(JSON.stringify([r, after, added]));
    expect(JSON.stringify(added)).not.toContain(ED25519.split("\n")[1]);
  });

  it("quotes file lines redacted in a near miss, and explains an old_string holding [REDACTED]", async () => {
    const path = join(dir, "near.env");
    writeFileSync(path, SETTINGS);
    const miss = await call(patch, { path, old_string: `# settings\nAPI_KEY=${OPENAI}\nexport GITHUB_TOKEN="${GITHUB.toUpperCase()}"`, new_string: "x" });
    expect(miss.error).toMatch(/line 3: letter case differs: file "export GITHUB_TOKEN=\[REDACTED\]", old_string /);
    expect(miss.error).not.toContain(GITHUB);
    const copied = await call(patch, { path, old_string: "API_KEY=[REDACTED]", new_string: "API_KEY=new" });
    expect(copied.error).toMatch(/old_string contains \[REDACTED\], which read_file and search_files show in place of secrets: the file has the real value there\./);
    expect(readFileSync(path, "utf8")).toBe(SETTINGS);
  });
});

describe("one switch: terminal.redact_output", () => {
  it("config redact_output: false shows the files as they are, to every tool; an explicit option wins", async () => {
    const home = mkdtempSync(join(root, "mibyan-home-"));
    const previous = process.env.MIBYAN_HOME;
    process.env.MIBYAN_HOME = home;
    try {
      const search = createSearchFilesHandler({ environments: () => manager, engine: "fallback" });
      expect((await call(readFile, { path: join(dir, "settings.env"), limit: 2 })).content).toBe("     1\t# settings\n     2\tAPI_KEY=[REDACTED]");
      writeFileSync(join(home, "config.yaml"), "terminal:\n  redact_output: false\n");
      const raw = await call(readFile, { path: join(dir, "settings.env"), limit: 2 });
      expect(raw.content).toBe(`     1\t# settings\n     2\tAPI_KEY=${OPENAI}`);
      expect(raw).not.toHaveProperty("redacted_lines");
      expect((await call(search, { path: dir, pattern: "API_KEY" })).files[0].lines[0].text).toBe(`API_KEY=${OPENAI}`);
      const strict = createReadFileHandler({ environments: () => manager, redactOutput: true });
      expect((await call(strict, { path: join(dir, "settings.env"), limit: 2 })).content).toBe("     1\t# settings\n     2\tAPI_KEY=[REDACTED]");
    } finally {
      if (previous === undefined) delete process.env.MIBYAN_HOME;
      else process.env.MIBYAN_HOME = previous;
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("execute_code", () => {
  it("a program's output is redacted like terminal's (it could read any file itself)", async () => {
    const allowed = new ApprovalGate({
      settings: { mode: "manual" },
      surface: new NonInteractiveSurface("deny"),
      allowlist: new MemoryAllowlist([{ rule: "execute-code", prefix: "execute_code", backend: "local" }]),
      logger: createMemoryLogger(),
      home: mkdtempSync(join(root, "gate-home-")),
    });
    const code = `import { readFileSync } from "node:fs";\nprocess.stdout.write(readFileSync(${JSON.stringify(join(dir, "settings.env"))}, "utf8"));`;
    const run = async (redactOutput?: boolean) => JSON.parse(await createExecuteCodeHandler({ gate: () => allowed, redactOutput })({ code }, ctx())) as Json;
    const redacted = await run();
    expect(redacted).toMatchObject({ exit_code: 0, error: null });
    expect(redacted.output).toContain("API_KEY=[REDACTED]\nexport GITHUB_TOKEN=[REDACTED]\n");
    expectNoSecrets(redacted.output);
    expect((await run(false)).output).toBe(SETTINGS);
  }, 30_000);
});

describe("redacting line for line", () => {
  it("keeps the line count: every line a key block covered reads [REDACTED]", () => {
    const text = `before\n${RSA}\nafter`;
    expect(redactSecrets(text)).toBe("before\n[REDACTED]\nafter");
    expect(redactSecrets(text, { keepLines: true })).toBe(["before", ...RSA_LINES.map(() => "[REDACTED]"), "after"].join("\n"));
    expect(redactLines(["a", `token: ${GITHUB}`, "b"])).toEqual(["a", "token: [REDACTED]", "b"]);
    expect(redactLines([])).toEqual([]);
  });
});
