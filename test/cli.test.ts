/**
 * End-to-end tests of the `mibyan` command line, as real processes.
 *
 * Every test runs `node bin/mibyan.js ...` against the built `dist/` (the test script
 * builds before vitest runs) with `MIBYAN_HOME` (and `HOME`) pointing at fresh temp
 * directories, and looks at stdout, stderr and the exit status separately. The tests are
 * independent, so they run concurrently.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";

import { BIN, cliEnv, ROOT, spawnCollect, type CliRun } from "./support/cli-run.js";

const MAIN = path.join(ROOT, "dist", "cli", "main.js");
const DIST_TOOLS = path.join(ROOT, "dist", "tools");
const CACHE_REL = path.join("cache", "tool-discovery.json");

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

const tempDirs: string[] = [];

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** A fresh profile home, with `config.yaml` when `config` is given. */
function freshHome(config?: string): string {
  const home = tempDir("mibyan-cli-home-");
  if (config !== undefined) writeFileSync(path.join(home, "config.yaml"), config);
  return home;
}

interface Run extends CliRun {
  /** The MIBYAN_HOME the process ran with. */
  home: string;
}

/** Runs `node bin/mibyan.js ...args` with a fresh MIBYAN_HOME (or `options.home`). */
async function mibyan(args: readonly string[], options: { config?: string; home?: string; input?: string } = {}): Promise<Run> {
  const home = options.home ?? freshHome(options.config);
  const result = await spawnCollect(process.execPath, [BIN, ...args], { env: cliEnv(home, tempDir("mibyan-cli-user-")), cwd: home, input: options.input });
  return { ...result, home };
}

function parseJson(run: Run): unknown {
  try {
    return JSON.parse(run.stdout);
  } catch {
    throw new Error(`stdout is not JSON (exit ${run.status}):\n${run.stdout}\n--- stderr ---\n${run.stderr}`);
  }
}

function keysOf(value: unknown): string[] {
  return Object.keys(value as object).sort();
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Single-quotes a string for sh. */
function shq(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

function hasUtilLinuxScript(): boolean {
  const probe = spawnSync("script", ["--version"], { encoding: "utf8" });
  return probe.status === 0 && /util-linux/.test(`${probe.stdout}${probe.stderr}`);
}

const HAS_SCRIPT = hasUtilLinuxScript();

beforeAll(() => {
  if (!existsSync(MAIN)) {
    throw new Error(`${path.relative(ROOT, MAIN)} is missing: the CLI tests run the built package. Run \`npm run build\` first.`);
  }
});

afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------
// mibyan tools
// ---------------------------------------------------------------------------

describe.concurrent("mibyan tools", () => {
  it("lists the terminal toolset and tool as available", async ({ expect }) => {
    const run = await mibyan(["tools"]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^✓ terminal\b/m);
    expect(run.stdout).toMatch(/^\s+💻 terminal\s+available$/m);
  });

  it("--json has exactly the documented shape", async ({ expect }) => {
    const run = await mibyan(["tools", "--json"]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    const json = parseJson(run);
    expect(isPlainObject(json)).toBe(true);
    expect(keysOf(json)).toEqual(["mcpServers", "sandbox", "toolsets"]);
    // No MCP server configured here: the report is there, and empty (tests/cli-mcp.test.ts fills it).
    expect((json as { mcpServers: unknown }).mcpServers).toEqual([]);
    const toolsets = (json as { toolsets: unknown }).toolsets;
    expect(Array.isArray(toolsets)).toBe(true);
    expect((toolsets as unknown[]).length).toBeGreaterThan(0);
    for (const toolset of toolsets as unknown[]) {
      expect(isPlainObject(toolset)).toBe(true);
      expect(keysOf(toolset)).toEqual(["available", "description", "name", "note", "tools", "unregistered"]);
      const { name, description, available, tools, unregistered, note } = toolset as Record<string, unknown>;
      // A toolset with no registered tools says why (docs/toolsets.md); one with tools has no note.
      expect(Array.isArray(unregistered)).toBe(true);
      expect(note === null ? (tools as unknown[]).length > 0 : typeof note === "string" && (tools as unknown[]).length === 0).toBe(true);
      expect(typeof name).toBe("string");
      expect(typeof description).toBe("string");
      expect(typeof available).toBe("boolean");
      expect(Array.isArray(tools)).toBe(true);
      for (const tool of tools as unknown[]) {
        expect(isPlainObject(tool)).toBe(true);
        expect(keysOf(tool)).toEqual(["available", "name", "reason"]);
        const t = tool as Record<string, unknown>;
        expect(typeof t.name).toBe("string");
        expect(typeof t.available).toBe("boolean");
        // An available tool has no reason; an unavailable one says why.
        if (t.available) expect(t.reason).toBeNull();
        else expect(typeof t.reason).toBe("string");
      }
    }
    const terminal = (toolsets as { name: string; available: boolean; tools: { name: string; available: boolean }[] }[]).find(
      (t) => t.name === "terminal",
    );
    expect(terminal?.available).toBe(true);
    expect(terminal?.tools).toContainEqual({ name: "terminal", available: true, reason: null });
  });

  it("writes the discovery scan cache listing the built-in tool modules", async ({ expect }) => {
    const first = await mibyan(["tools"]);
    expect(first.status).toBe(0);
    const cacheFile = path.join(first.home, CACHE_REL);
    expect(existsSync(cacheFile)).toBe(true);
    const cache = JSON.parse(readFileSync(cacheFile, "utf8")) as {
      version: number;
      files: Record<string, { analysis: { registers: boolean; tools: { name?: string; toolset?: string }[] } }>;
    };
    expect(typeof cache.version).toBe("number");
    // Exactly the modules discovery looks at: every .js in dist/tools (no .d.ts, no .map).
    const modules = readdirSync(DIST_TOOLS)
      .filter((name) => name.endsWith(".js"))
      .map((name) => path.join(DIST_TOOLS, name))
      .sort();
    expect(Object.keys(cache.files).sort()).toEqual(modules);
    const terminal = cache.files[path.join(DIST_TOOLS, "terminal.js")];
    expect(terminal?.analysis.registers).toBe(true);
    expect(terminal?.analysis.tools).toContainEqual({ name: "terminal", toolset: "terminal" });

    // A second run reads the cache and leaves it as it was.
    const second = await mibyan(["tools"], { home: first.home });
    expect(second.status).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    expect(JSON.parse(readFileSync(cacheFile, "utf8"))).toEqual(cache);
  });
});

// ---------------------------------------------------------------------------
// config.yaml problems
// ---------------------------------------------------------------------------

describe.concurrent("config.yaml in MIBYAN_HOME", () => {
  it("a type error fails with the file, line and key on stderr", async ({ expect }) => {
    const run = await mibyan(["tools"], { config: "tools:\n  max_result_chars: lots\n" });
    expect(run.status).not.toBe(0);
    expect(run.stdout).toBe("");
    const file = path.join(run.home, "config.yaml");
    expect(run.stderr).toContain(`${file}:2:`);
    expect(run.stderr).toContain("tools.max_result_chars");
    expect(run.stderr).toContain("lots");
  });

  it("a YAML syntax error fails with the file and line on stderr", async ({ expect }) => {
    const run = await mibyan(["tools"], { config: "tools:\n  timeout_seconds: 5\n  bad: : x\n" });
    expect(run.status).not.toBe(0);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(`${path.join(run.home, "config.yaml")}:3:`);
    expect(run.stderr).toMatch(/invalid YAML/);
  });

  it("a type error fails `call` too, before the tool runs", async ({ expect }) => {
    const run = await mibyan(["call", "terminal", JSON.stringify({ command: "echo ran > ran.txt" })], {
      config: "tools:\n  timeout_seconds: soon\n",
    });
    expect(run.status).not.toBe(0);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("tools.timeout_seconds");
    expect(existsSync(path.join(run.home, "ran.txt"))).toBe(false);
  });

  it("an unknown key is a warning on stderr, and the command still succeeds", async ({ expect }) => {
    const run = await mibyan(["tools", "--json"], { config: "tools:\n  max_result_charz: 5\n" });
    expect(run.status).toBe(0);
    expect(run.stderr).toMatch(/warn/);
    expect(run.stderr).toContain(`${path.join(run.home, "config.yaml")}:2:`);
    expect(run.stderr).toContain("tools.max_result_charz");
    expect(run.stderr).toContain("did you mean tools.max_result_chars");
    expect(() => parseJson(run)).not.toThrow(); // the warning stays off stdout
  });
});

// ---------------------------------------------------------------------------
// mibyan definitions
// ---------------------------------------------------------------------------

type Definition = Record<string, unknown>;

async function definitions(args: readonly string[], options: { config?: string } = {}): Promise<{ run: Run; defs: Definition[] }> {
  const run = await mibyan(["definitions", ...args], options);
  const defs = run.status === 0 ? (parseJson(run) as Definition[]) : [];
  return { run, defs };
}

/** `definitions --format raw` (every tool, with its toolset), run once and shared by the tests that need it. */
let allRaw: ReturnType<typeof definitions> | undefined;
function allRawDefinitions(): ReturnType<typeof definitions> {
  allRaw ??= definitions(["--format", "raw"]);
  return allRaw;
}

/** The JSON Schema of the terminal tool's parameters in its native (OpenAI) form. */
function expectTerminalParameters(expect: import("vitest").ExpectStatic, parameters: unknown): void {
  expect(isPlainObject(parameters)).toBe(true);
  const p = parameters as { type: string; properties: Record<string, unknown>; required: string[] };
  expect(p.type).toBe("object");
  expect(keysOf(p.properties)).toEqual(["background", "command", "notify_on_complete", "pty", "timeout", "watch_patterns", "workdir"]);
  expect(p.required).toContain("command");
}

describe.concurrent("mibyan definitions", () => {
  it("prints an OpenAI-format array containing terminal by default", async ({ expect }) => {
    const { run, defs } = await definitions([]);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe("");
    expect(Array.isArray(defs)).toBe(true);
    for (const def of defs) {
      expect(keysOf(def)).toEqual(["function", "type"]);
      expect(def.type).toBe("function");
      expect(keysOf(def.function)).toEqual(["description", "name", "parameters"]);
    }
    const terminal = defs.find((d) => (d.function as { name: string }).name === "terminal");
    expect(terminal).toBeDefined();
    expectTerminalParameters(expect, (terminal!.function as { parameters: unknown }).parameters);
  });

  it("--format anthropic", async ({ expect }) => {
    const { run, defs } = await definitions(["--format", "anthropic"]);
    expect(run.status).toBe(0);
    for (const def of defs) expect(keysOf(def)).toEqual(["description", "input_schema", "name"]);
    const terminal = defs.find((d) => d.name === "terminal");
    expectTerminalParameters(expect, terminal?.input_schema);
  });

  it("--format responses", async ({ expect }) => {
    const { run, defs } = await definitions(["--format", "responses"]);
    expect(run.status).toBe(0);
    for (const def of defs) {
      expect(keysOf(def)).toEqual(["description", "name", "parameters", "strict", "type"]);
      expect(def.type).toBe("function");
      expect(typeof def.strict).toBe("boolean");
    }
    const terminal = defs.find((d) => d.name === "terminal");
    expectTerminalParameters(expect, terminal?.parameters);
  });

  it("--format gemini", async ({ expect }) => {
    const { run, defs } = await definitions(["--format", "gemini"]);
    expect(run.status).toBe(0);
    for (const def of defs) expect(keysOf(def)).toEqual(["description", "name", "parameters"]);
    const terminal = defs.find((d) => d.name === "terminal");
    expectTerminalParameters(expect, terminal?.parameters);
    // Gemini's schema subset has neither additionalProperties nor default.
    expect(run.stdout).not.toContain('"additionalProperties"');
    expect(run.stdout).not.toContain('"default"');
  });

  it("--format strict", async ({ expect }) => {
    const { run, defs } = await definitions(["--format", "strict"]);
    expect(run.status).toBe(0);
    for (const def of defs) {
      expect(keysOf(def)).toEqual(["function", "type"]);
      expect(def.type).toBe("function");
      expect(keysOf(def.function)).toEqual(["description", "name", "parameters", "strict"]);
      expect((def.function as { strict: unknown }).strict).toBe(true);
    }
    const terminal = defs.find((d) => (d.function as { name: string }).name === "terminal");
    const parameters = (terminal?.function as { parameters: Record<string, unknown> }).parameters;
    expectTerminalParameters(expect, parameters);
    // Strict mode: every property required, optional ones nullable, no extra properties.
    expect([...(parameters.required as string[])].sort()).toEqual(["background", "command", "notify_on_complete", "pty", "timeout", "watch_patterns", "workdir"]);
    expect(parameters.additionalProperties).toBe(false);
    expect((parameters.properties as Record<string, { type: unknown }>).workdir?.type).toEqual(["string", "null"]);
  });

  it("--format raw", async ({ expect }) => {
    const { run, defs } = await allRawDefinitions();
    expect(run.status).toBe(0);
    for (const def of defs) {
      expect(keysOf(def)).toEqual(expect.arrayContaining(["description", "name", "parameters", "toolset"]));
      expect(typeof def.toolset).toBe("string");
    }
    const terminal = defs.find((d) => d.name === "terminal");
    expect(terminal?.toolset).toBe("terminal");
    expectTerminalParameters(expect, terminal?.parameters);
  });

  it("--enable terminal gives only terminal's tools", async ({ expect }) => {
    const { run, defs } = await definitions(["--enable", "terminal", "--format", "raw"]);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe("");
    expect(defs.map((d) => d.name)).toContain("terminal");
    for (const def of defs) expect(def.toolset).toBe("terminal");
  });

  it("--disable terminal leaves terminal out (today: [])", async ({ expect }) => {
    const [disabled, all] = await Promise.all([definitions(["--disable", "terminal"]), allRawDefinitions()]);
    expect(disabled.run.status).toBe(0);
    expect(disabled.run.stderr).toBe("");
    const expected = all.defs.filter((d) => d.toolset !== "terminal").map((d) => d.name);
    expect(disabled.defs.map((d) => (d.function as { name: string }).name)).toEqual(expected);
    // With the built-in terminal the only registered tool, nothing is left.
    if (all.defs.every((d) => d.toolset === "terminal")) expect(disabled.run.stdout.trim()).toBe("[]");
  });

  it("--enable with an unknown toolset is a usage error (exit 2) that suggests a close match", async ({ expect }) => {
    const [typo, nonsense] = await Promise.all([mibyan(["definitions", "--enable", "terminl"]), mibyan(["definitions", "--enable", "nosuchset"])]);
    expect(typo.status).toBe(2);
    expect(typo.stdout).toBe("");
    expect(typo.stderr).toMatch(/unknown toolset "terminl" in --enable; did you mean: terminal\b/);
    expect(nonsense.status).toBe(2);
    expect(nonsense.stderr).toMatch(/unknown toolset "nosuchset" in --enable\n/);
  });

  it("--format bogus fails with a clear error", async ({ expect }) => {
    const run = await mibyan(["definitions", "--format", "bogus"]);
    expect(run.status).not.toBe(0);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("bogus");
    expect(run.stderr).toMatch(/--format/);
    for (const format of ["openai", "responses", "anthropic", "gemini", "raw", "strict"]) expect(run.stderr).toContain(format);
  });

  it("config toolsets.disabled applies when no flag is given, and --disable replaces it", async ({ expect }) => {
    const config = "toolsets:\n  disabled: [terminal]\n";
    const [fromConfig, overridden] = await Promise.all([
      definitions([], { config }),
      definitions(["--disable", "browser"], { config }),
    ]);
    expect(fromConfig.run.status).toBe(0);
    expect(fromConfig.run.stderr).toBe("");
    expect(fromConfig.defs.map((d) => (d.function as { name: string }).name)).not.toContain("terminal");
    expect(overridden.run.status).toBe(0);
    expect(overridden.defs.map((d) => (d.function as { name: string }).name)).toContain("terminal");
  });

  it("--enable replaces the configured selection too, so a configured disable cannot empty it", async ({ expect }) => {
    const { run, defs } = await definitions(["--enable", "terminal"], { config: "toolsets:\n  disabled: [terminal]\n" });
    expect(run.status).toBe(0);
    expect(defs.map((d) => (d.function as { name: string }).name)).toContain("terminal");
  });
});

// ---------------------------------------------------------------------------
// mibyan call
// ---------------------------------------------------------------------------

describe.concurrent("mibyan call", () => {
  it("runs terminal and prints the JSON result on stdout", async ({ expect }) => {
    const run = await mibyan(["call", "terminal", '{"command":"echo hi"}']);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout.endsWith("\n")).toBe(true);
    expect(JSON.parse(run.stdout)).toEqual({ output: "hi\n", exit_code: 0, error: null });
  });

  it("a failing command is still a successful call: exit 0, exit_code 3 in the JSON", async ({ expect }) => {
    const run = await mibyan(["call", "terminal", '{"command":"echo failing; exit 3"}']);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual({ output: "failing\n", exit_code: 3, error: null });
  });

  it("an empty command is an error of the tool: exit 1", async ({ expect }) => {
    const run = await mibyan(["call", "terminal", '{"command":""}']);
    expect(run.status).toBe(1);
    const result = parseJson(run) as { error: unknown };
    expect(result.error).toMatch(/command must not be empty/);
  });

  it("an unknown tool: a usage error, exit 2, {error: Unknown tool} on stdout and the message on stderr", async ({ expect }) => {
    const run = await mibyan(["call", "nosuchtool"]);
    expect(run.status).toBe(2);
    expect(JSON.parse(run.stdout)).toEqual({ error: "Unknown tool: nosuchtool" });
    expect(run.stderr).toBe("mibyan: Unknown tool: nosuchtool\n");
  });

  it("malformed JSON arguments: exit 1 and Invalid JSON arguments", async ({ expect }) => {
    const run = await mibyan(["call", "terminal", '{"command":']);
    expect(run.status).toBe(1);
    const result = parseJson(run) as { error: string };
    expect(result.error).toContain("Invalid JSON arguments");
  });

  it("reads the arguments from stdin with -", async ({ expect }) => {
    const run = await mibyan(["call", "terminal", "-"], { input: '{"command":"printf from-stdin"}\n' });
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ output: "from-stdin", exit_code: 0, error: null });
  });

  it("accepts --session and --task", async ({ expect }) => {
    const run = await mibyan(["call", "--session", "S", "terminal", '{"command":"echo ok"}', "--task", "T"]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ output: "ok\n", exit_code: 0, error: null });
  });
});

// ---------------------------------------------------------------------------
// Usage and errors
// ---------------------------------------------------------------------------

describe.concurrent("usage", () => {
  it("no arguments: help on stderr, non-zero exit", async ({ expect }) => {
    const run = await mibyan([]);
    expect(run.status).not.toBe(0);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^Usage: mibyan/m);
    for (const command of ["tools", "definitions", "call"]) expect(run.stderr).toMatch(new RegExp(`^\\s+${command}\\b`, "m"));
  });

  it("--help: usage on stdout, exit 0", async ({ expect }) => {
    const run = await mibyan(["--help"]);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(/^Usage: mibyan/m);
    expect(run.stdout).toMatch(/^\s+call\b/m);
  });

  it("--version prints the package version", async ({ expect }) => {
    const run = await mibyan(["--version"]);
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toBe(JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")).version);
  });

  it("call --help: usage of call, exit 0", async ({ expect }) => {
    const run = await mibyan(["call", "--help"]);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(/^Usage: mibyan call \[options\] <tool> \[json-args\]/m);
    expect(run.stdout).toContain("--session");
    expect(run.stdout).toContain("--task");
  });

  it("an unknown command: non-zero and a clear error", async ({ expect }) => {
    const run = await mibyan(["frobnicate"]);
    expect(run.status).not.toBe(0);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/unknown command 'frobnicate'/);
  });

  it("an unknown flag: non-zero and a clear error", async ({ expect }) => {
    const run = await mibyan(["tools", "--frobnicate"]);
    expect(run.status).not.toBe(0);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/unknown option '--frobnicate'/);
  });
});

// ---------------------------------------------------------------------------
// The spinner
// ---------------------------------------------------------------------------

const ptyTest = HAS_SCRIPT ? it : it.skip;
const ptyTitle = HAS_SCRIPT
  ? "on a terminal: the spinner is on stderr with the emoji and elapsed time, never on stdout"
  : "on a terminal: the spinner (skipped: the util-linux `script` command is not installed)";

describe.concurrent("spinner", () => {
  it("stays silent when stderr is piped", async ({ expect }) => {
    const run = await mibyan(["call", "terminal", '{"command":"sleep 1"}']);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual({ output: "", exit_code: 0, error: null });
  });

  ptyTest(ptyTitle, async ({ expect }) => {
    const home = freshHome();
    const outFile = path.join(home, "out.json");
    // `script` gives the inner command a real PTY for stdin/stderr; its stdout goes to a file.
    const inner = `${shq(process.execPath)} ${shq(BIN)} call terminal ${shq('{"command":"sleep 1"}')} > ${shq(outFile)}`;
    const run = await spawnCollect("script", ["-qefc", inner, "/dev/null"], { env: cliEnv(home, tempDir("mibyan-cli-user-")), cwd: home });
    expect(run.status).toBe(0);
    const transcript = run.stdout; // what the PTY showed: stderr only
    expect(transcript).toContain("💻");
    expect(transcript).toContain("terminal");
    expect(transcript).toMatch(/💻 terminal \S+ \d+\.\ds/);
    expect(transcript.endsWith("\r\x1b[2K")).toBe(true); // the line is cleared at the end
    expect(transcript).not.toContain("exit_code"); // the result is not on the terminal
    const out = readFileSync(outFile, "utf8");
    expect(out).toBe(`${JSON.stringify({ output: "", exit_code: 0, error: null })}\n`);
  });
});
