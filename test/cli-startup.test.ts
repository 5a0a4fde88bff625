/**
 * What keeps `mibyan` start-up short (docs/benchmarks.md, "CLI start-up"; the figures are in
 * `npm run bench`, never here), as behaviour that can be checked:
 *
 * - the fast path (src/cli/fast-path.ts) takes only exact command-line shapes, and a command line
 *   it takes gives the same output and exit status as the commander program (src/cli/program.ts);
 * - `check` of a command the fast parser takes loads neither commander, nor the bash grammar, nor
 *   the registry and the tools; `tools --json` loads neither commander nor the grammar, nor what
 *   the tools' handlers run on (environments, processes, the code runner: src/tools/handlers/).
 *
 * Runs the built dist/ (the test script builds first), as real processes.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { afterAll, describe, expect, it } from "vitest";

import { fastPath } from "../src/cli/fast-path.js";
import { BIN, cliEnv, ROOT, spawnCollect } from "./support/cli-run.js";

const DIST = path.join(ROOT, "dist");
const scratch = mkdtempSync(path.join(tmpdir(), "mibyan-cli-startup-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let counter = 0;
function freshHome(config?: string): string {
  const home = path.join(scratch, `home-${counter++}`);
  mkdirSync(home);
  if (config !== undefined) writeFileSync(path.join(home, "config.yaml"), config);
  return home;
}

describe("fastPath: the command lines it takes", () => {
  it.each([
    [["tools"]],
    [["tools", "--json"]],
    [["check", "ls"]],
    [["check", "rm -rf /"]],
    [["check", "--json", "ls"]],
    [["check", "ls", "--json"]],
    [["call", "terminal"]],
    [["call", "terminal", '{"command":"true"}']],
  ])("%j", (args) => {
    expect(fastPath(args)).toBeTypeOf("function");
  });

  it.each([
    [[]],
    [["--help"]],
    [["-V"]],
    [["tools", "--help"]],
    [["tools", "x"]],
    [["tools", "--json", "--json"]],
    [["check"]],
    [["check", "--stdin"]],
    [["check", "-rf"]],
    [["check", "--", "ls"]],
    [["check", "a", "b"]],
    [["check", ""]],
    [["call"]],
    [["call", "terminal", "-"]],
    [["call", "terminal", "{}", "--session", "s"]],
    [["call", "terminal", "{}", "extra"]],
    [["call", "terminal", "--json"]],
    [["definitions"]],
    [["approvals"]],
    [["processes", "list"]],
    [["nosuch"]],
  ])("not %j (commander parses it)", (args) => {
    expect(fastPath(args)).toBeNull();
  });
});

/** Runs the commander program alone on `args`, as a process (what the CLI did before the fast path). */
function viaCommander(args: readonly string[], home: string): ReturnType<typeof spawnCollect> {
  const script = `const { runProgram } = await import(${JSON.stringify(pathToFileURL(path.join(DIST, "cli", "program.js")).href)}); await runProgram(["node", "mibyan", ...process.argv.slice(1)]);`;
  return spawnCollect(process.execPath, ["--input-type=module", "-e", script, "--", ...args], { env: cliEnv(home, home), cwd: home });
}

function viaBin(args: readonly string[], home: string): ReturnType<typeof spawnCollect> {
  return spawnCollect(process.execPath, [BIN, ...args], { env: cliEnv(home, home), cwd: home });
}

describe("the fast path answers as the commander program does", () => {
  const cases: [string, string[], string?][] = [
    ["tools --json", ["tools", "--json"]],
    ["tools", ["tools"]],
    ["check, safe", ["check", "ls -la"]],
    ["check, needs approval, --json", ["check", "--json", "rm -rf ./build"]],
    ["check, hardline", ["check", "sudo rm -rf /"]],
    ["check, the grammar needed", ["check", "case $x in a) rm -rf ~;; esac", "--json"]],
    ["call, success", ["call", "terminal", '{"command":"echo hi"}']],
    ["call, a tool error", ["call", "terminal", '{"command":"exit 3"}']],
    ["call, invalid arguments", ["call", "terminal", "not json"]],
    ["call, an unknown tool", ["call", "termnal", "{}"]],
    ["a broken config.yaml", ["tools", "--json"], "tools: [unclosed\n"],
  ];
  it.each(cases)("%s", async (_label, args, config) => {
    expect(fastPath(args)).not.toBeNull();
    const [fast, slow] = await Promise.all([viaBin(args, freshHome(config)), viaCommander(args, freshHome(config))]);
    // The profile home's path appears in some messages: compare without it.
    const norm = (text: string): string => text.replace(new RegExp(`${scratch}/home-\\d+`, "g"), "HOME");
    expect({ status: fast.status, stdout: norm(fast.stdout), stderr: norm(fast.stderr) }).toEqual({
      status: slow.status,
      stdout: norm(slow.stdout),
      stderr: norm(slow.stderr),
    });
    expect(fast.status).not.toBeNull();
  });
});

/**
 * Runs `main(args)` of the built CLI in a fresh process and reports what it loaded: commander
 * (CommonJS, so in require.cache), the bash grammar (the parser module's own state) and the registry.
 */
async function loadedBy(
  args: readonly string[],
): Promise<{ commander: boolean; grammar: boolean; registry: boolean; modules: string[]; stdout: string }> {
  const url = (file: string): string => JSON.stringify(pathToFileURL(path.join(DIST, file)).href);
  const script = [
    `import { createRequire } from "node:module";`,
    `const { main } = await import(${url("cli/main.js")});`,
    `await main(["node", "mibyan", ...process.argv.slice(1)]);`,
    `const { isShellParserReady } = await import(${url("shell/parser.js")});`,
    `const commander = Object.keys(createRequire(import.meta.url).cache).some((file) => file.includes("/node_modules/commander/"));`,
    `process.stderr.write("\\nLOADED " + JSON.stringify({ commander, grammar: isShellParserReady() }) + "\\n");`,
  ].join("\n");
  const home = freshHome();
  // A loader hook that notes every module of dist/ that is loaded (static and dynamic imports alike).
  const hook = path.join(scratch, `hook-${counter++}.mjs`);
  writeFileSync(
    hook,
    `export async function load(url, context, next) { const at = url.indexOf("/dist/"); if (url.startsWith("file:") && at !== -1) process.stderr.write("\\nMODULE " + url.slice(at + 6) + "\\n"); return next(url, context); }\n`,
  );
  const register = path.join(scratch, `register-${counter++}.mjs`);
  writeFileSync(register, `import { register } from "node:module"; register(${JSON.stringify(pathToFileURL(hook).href)});\n`);
  const run = await spawnCollect(process.execPath, ["--import", register, "--input-type=module", "-e", script, "--", ...args], { env: cliEnv(home, home), cwd: home });
  const line = /\nLOADED (.*)\n/.exec(run.stderr);
  if (!line) throw new Error(`no report from the child (status ${run.status}): ${run.stderr}`);
  const { commander, grammar } = JSON.parse(line[1]!) as { commander: boolean; grammar: boolean };
  const modules = [...run.stderr.matchAll(/\nMODULE (\S+)\n/g)].map((match) => match[1]!);
  return { commander, grammar, registry: modules.includes("registry/tool-registry.js"), modules, stdout: run.stdout };
}

describe("what a command loads", () => {
  it("check of a fast-path command: not commander, not the grammar, not the registry", async () => {
    const loaded = await loadedBy(["check", "git status --short"]);
    expect(loaded.stdout).toBe("safe: git status --short\n");
    expect(loaded).toMatchObject({ commander: false, grammar: false, registry: false });
  });

  it("check of a command that needs the grammar loads it, and still not commander or the registry", async () => {
    const loaded = await loadedBy(["check", "case $x in a) ls;; esac"]);
    expect(loaded.stdout).toBe("safe: case $x in a) ls;; esac\n");
    expect(loaded).toMatchObject({ commander: false, grammar: true, registry: false });
  });

  it("tools --json: the registry, but not commander or the grammar", async () => {
    const loaded = await loadedBy(["tools", "--json"]);
    expect(JSON.parse(loaded.stdout).toolsets.length).toBeGreaterThan(0);
    expect(loaded).toMatchObject({ commander: false, grammar: false, registry: true });
  });

  it("tools --json: each tool's schema, check and metadata, not what its handler runs on", async () => {
    const loaded = await loadedBy(["tools", "--json"]);
    const listed = JSON.parse(loaded.stdout) as { toolsets: { tools: { name: string }[] }[] };
    expect(listed.toolsets.flatMap((toolset) => toolset.tools.map((tool) => tool.name))).toEqual(
      expect.arrayContaining(["terminal", "process", "execute_code", "read_file", "write_file", "patch", "search_files"]),
    );
    // The tool modules themselves are loaded (they register the tools)...
    expect(loaded.modules).toEqual(expect.arrayContaining(["tools/terminal.js", "tools/execute-code.js", "tools/read-file.js"]));
    // ...but not the handlers' bodies and what they run on: environments, processes, the code runner.
    const heavy = [
      /^tools\/handlers\/(?!lazy-)/, // but lazy-body.js and lazy-redaction.js, the small loaders
      /^environments\/(local|manager|managed-environment|shell-state|docker|ssh|modal|daytona|singularity|vercel-sandbox)\.js$/,
      /^process\//,
      /^code-execution\/(run-code|approval|sandbox-prelude)\.js$/,
      /^terminal\/(process-group|pty-command|local-runner|output-buffer)\.js$/,
      /^files\/(read|write|patch|search)\.js$/,
      /^approval\//,
      // Calls only: the dispatch pipeline and result rendering, the secret patterns.
      /^dispatch\/(pipeline|result|arguments|call-context|coerce-arguments)\.js$/,
      /^redaction\//,
    ];
    expect(loaded.modules.filter((module) => heavy.some((pattern) => pattern.test(module)))).toEqual([]);
  });

  it("a command line the fast path does not take goes through commander", async () => {
    const loaded = await loadedBy(["check", "--", "ls"]);
    expect(loaded.stdout).toBe("safe: ls\n");
    expect(loaded.commander).toBe(true);
  });
});
