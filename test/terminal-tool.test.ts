import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

import type { ToolContext } from "../src/registry/types.js";
import { groupDigits } from "../src/util/format.js";
import {
  DEFAULT_MAX_OUTPUT_CHARS,
  MAX_FOREGROUND_TIMEOUT_SECONDS,
  TERMINAL_SCHEMA,
  createTerminalHandler,
  terminalBackendAvailable,
  terminalHandler,
} from "../src/tools/terminal.js";

// The tool module registers itself on import; capture that instead of depending
// on the real registry, so the handler can be tested on its own (vi.mock is hoisted
// above the imports).
const registered = vi.hoisted(() => [] as unknown[]);
vi.mock("../src/registry/singleton.js", () => ({
  registry: { register: (options: unknown) => registered.push(options) },
}));

interface Parsed {
  output: string;
  exit_code: number;
  error: string | null;
  status?: string;
}

function ctx(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { signal, toolName: "terminal" };
}

async function call(args: Record<string, unknown>, context: ToolContext = ctx()): Promise<Parsed> {
  const raw = await terminalHandler(args, context);
  expect(typeof raw).toBe("string");
  return JSON.parse(raw) as Parsed;
}

let dir: string;
beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "mibyan-terminal-")));
  writeFileSync(join(dir, "file.txt"), "x");
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("terminal tool registration", () => {
  it("registers itself with the expected options", () => {
    expect(registered).toHaveLength(1);
    expect(registered[0]).toMatchObject({
      name: "terminal",
      toolset: "terminal",
      emoji: "💻",
      parallelSafe: false,
      schema: TERMINAL_SCHEMA,
      handler: terminalHandler,
    });
  });

  it("has a schema for the model", () => {
    expect(TERMINAL_SCHEMA.name).toBe("terminal");
    expect(TERMINAL_SCHEMA.description).toMatch(/50,000 characters/);
    expect(TERMINAL_SCHEMA.description).toMatch(/long-running/i);
    const params = TERMINAL_SCHEMA.parameters as {
      properties: Record<string, { type: string; default?: unknown; maximum?: number }>;
      required: string[];
    };
    expect(params.required).toEqual(["command"]);
    expect(params.properties.command?.type).toBe("string");
    expect(params.properties.timeout).toMatchObject({ type: "integer", default: 180, minimum: 1 });
    // The 600 s limit is stated in the description and enforced by the handler, whose
    // error points the model at background processes (a schema `maximum` would pre-empt it).
    expect(params.properties.timeout?.maximum).toBeUndefined();
    expect(JSON.stringify(params.properties.timeout)).toMatch(/maximum 600/);
    expect(params.properties.workdir?.type).toBe("string");
  });
});

describe("terminal availability", () => {
  it("requires the configured backend's program or credentials", () => {
    const home = mkdtempSync(join(tmpdir(), "mibyan-terminal-avail-"));
    const previous = process.env.MIBYAN_HOME;
    process.env.MIBYAN_HOME = home;
    try {
      expect(terminalBackendAvailable({ PATH: "" })).toBe(true);
      writeFileSync(join(home, "config.yaml"), "terminal:\n  backend: daytona\n");
      expect(() => terminalBackendAvailable({ PATH: "" })).toThrow("the daytona backend needs credentials: DAYTONA_API_KEY, or DAYTONA_JWT_TOKEN + DAYTONA_ORGANIZATION_ID");
      expect(terminalBackendAvailable({ DAYTONA_API_KEY: "k" })).toBe(true);
      writeFileSync(join(home, "config.yaml"), "terminal:\n  backend: vercel_sandbox\n");
      expect(() => terminalBackendAvailable({ VERCEL_TOKEN: "t" })).toThrow(/VERCEL_TOKEN \+ VERCEL_TEAM_ID \+ VERCEL_PROJECT_ID, or VERCEL_OIDC_TOKEN/);
      expect(terminalBackendAvailable({ VERCEL_OIDC_TOKEN: "o" })).toBe(true);
      writeFileSync(join(home, "config.yaml"), "terminal:\n  backend: modal\n");
      expect(() => terminalBackendAvailable({ MODAL_CONFIG_PATH: join(home, "none.toml") })).toThrow(/MODAL_TOKEN_ID \+ MODAL_TOKEN_SECRET \(or a profile file: .*none\.toml\)/);
      writeFileSync(join(home, "modal.toml"), "[default]\n");
      expect(terminalBackendAvailable({ MODAL_CONFIG_PATH: join(home, "modal.toml") })).toBe(true);
      writeFileSync(join(home, "config.yaml"), "terminal:\n  backend: singularity\n");
      expect(() => terminalBackendAvailable({ PATH: home })).toThrow("the singularity backend needs apptainer or singularity on PATH");
      // The registered tool uses it as its availability check.
      const options = registered[0] as { checkFn: () => boolean };
      writeFileSync(join(home, "config.yaml"), "terminal:\n  backend: local\n");
      expect(options.checkFn()).toBe(true);
    } finally {
      if (previous === undefined) delete process.env.MIBYAN_HOME;
      else process.env.MIBYAN_HOME = previous;
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("terminal handler", () => {
  it("runs a command and returns the JSON result", async () => {
    const raw = await terminalHandler({ command: "echo hi; echo oops >&2; exit 2" }, ctx());
    expect(Object.keys(JSON.parse(raw))).toEqual(["output", "exit_code", "error"]);
    expect(JSON.parse(raw)).toEqual({ output: "hi\noops\n", exit_code: 2, error: null });
  });

  it("strips ANSI escapes and normalises CRLF", async () => {
    const r = await call({ command: "printf '\\033[31mred\\033[0m\\r\\nplain\\r\\n'" });
    expect(r.output).toBe("red\nplain\n");
  });

  it("runs in workdir", async () => {
    const r = await call({ command: "pwd; ls", workdir: dir });
    expect(r).toEqual({ output: `${dir}\nfile.txt\n`, exit_code: 0, error: null });
  });

  it("treats an empty workdir as not given", async () => {
    const r = await call({ command: "pwd", workdir: "" });
    expect(r.error).toBeNull();
    expect(r.output).toBe(`${process.cwd()}\n`);
  });

  it("caps large output at 50,000 characters, head and tail", async () => {
    const r = await call({ command: "echo FIRST; yes abcdefghi | head -c 20000000; echo LAST" });
    expect(r.exit_code).toBe(0);
    expect(r.output.startsWith("FIRST\n")).toBe(true);
    expect(r.output.endsWith("LAST\n")).toBe(true);
    expect(r.output).toMatch(/\[\.\.\. \d+ characters omitted \.\.\.\]/);
    expect(r.output.length).toBeLessThan(DEFAULT_MAX_OUTPUT_CHARS + 100);
    const [head] = r.output.split("\n\n[...");
    expect(head!.length).toBe(DEFAULT_MAX_OUTPUT_CHARS * 0.2);
  });

  it("redacts secrets in the output before the model sees them", async () => {
    const home = mkdtempSync(join(tmpdir(), "mibyan-terminal-home-"));
    const previous = process.env.MIBYAN_HOME;
    process.env.MIBYAN_HOME = home;
    try {
      const secrets = "OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234 ghp_abcdefghijklmnopqrstuvwxyz0123 Authorization: Bearer abcdefgh12345678";
      const printIt = { command: `printf '%s\\n' '${secrets}'` };
      const r = await call(printIt);
      expect(r.exit_code).toBe(0);
      expect(r.output).toBe("OPENAI_API_KEY=[REDACTED] [REDACTED] Authorization: Bearer [REDACTED]\n");
      // Switched off in config.yaml (read at each call) the output is as printed...
      writeFileSync(join(home, "config.yaml"), "terminal:\n  redact_output: false\n");
      expect((await call(printIt)).output).toBe(`${secrets}\n`);
      // ... and an explicit option wins over the config.
      const strict = createTerminalHandler({ redactOutput: true });
      expect((JSON.parse(await strict(printIt, ctx())) as Parsed).output).not.toContain("sk-proj");
    } finally {
      if (previous === undefined) delete process.env.MIBYAN_HOME;
      else process.env.MIBYAN_HOME = previous;
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("honours a custom cap through createTerminalHandler", async () => {
    const handler = createTerminalHandler({ maxOutputChars: 100 });
    const r = JSON.parse(await handler({ command: "seq 1 1000" }, ctx())) as Parsed;
    expect(r.output).toMatch(/^1\n2\n3\n.*\[\.\.\. \d+ characters omitted \.\.\.\].*\n1000\n$/s);
  });

  it("times out, kills the group and says so", async () => {
    const started = Date.now();
    const r = await call({ command: "sleep 30 & echo PID=$!; sleep 30", timeout: 1 });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(r.exit_code).toBe(124);
    expect(r.status).toBe("timeout");
    expect(r.error).toBe("Command timed out after 1 seconds (process group killed)");
    const pid = Number(/PID=(\d+)/.exec(r.output)?.[1]);
    expect(pid).toBeGreaterThan(0);
    let alive = true;
    for (let i = 0; i < 20 && alive; i++) {
      try {
        process.kill(pid, 0);
        const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
        alive = stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
      } catch {
        alive = false;
      }
      if (alive) await new Promise((res) => setTimeout(res, 20));
    }
    expect(alive).toBe(false);
  });

  it("is cancelled through ctx.signal", async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const r = await call({ command: "sleep 30" }, ctx(ac.signal));
    expect(r).toEqual({
      output: "",
      exit_code: 130,
      error: "Command was cancelled (process group killed)",
      status: "cancelled",
    });
  });

  it("accepts the timeout as a numeric string", async () => {
    const r = await call({ command: "echo ok", timeout: "5" });
    expect(r).toEqual({ output: "ok\n", exit_code: 0, error: null });
  });

  describe("bad inputs", () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ["missing command", {}, /command must be a string, got undefined/],
      ["non-string command", { command: 42 }, /command must be a string, got number/],
      ["array command", { command: ["ls"] }, /command must be a string, got array/],
      ["empty command", { command: "" }, /command must not be empty/],
      ["whitespace command", { command: "  \n\t" }, /command must not be empty/],
      ["NUL in command", { command: "echo a\0b" }, /NUL/],
      ["zero timeout", { command: "true", timeout: 0 }, /at least 1/],
      ["fractional timeout", { command: "true", timeout: 1.5 }, /whole number/],
      ["non-numeric timeout", { command: "true", timeout: "soon" }, /whole number/],
      [
        "timeout above the maximum",
        { command: "true", timeout: MAX_FOREGROUND_TIMEOUT_SECONDS + 1 },
        /exceeds the maximum of 600 seconds.*must be started with background=true instead/,
      ],
      ["relative workdir", { command: "true", workdir: "src" }, /workdir must be an absolute path/],
      ["tilde workdir", { command: "true", workdir: "~/x" }, /workdir must be an absolute path/],
      ["newline in workdir", { command: "true", workdir: "/tmp\n/etc" }, /control characters/],
      ["NUL in workdir", { command: "true", workdir: "/tmp\0" }, /control characters/],
      ["non-string workdir", { command: "true", workdir: 5 }, /workdir must be a string/],
      ["missing workdir", { command: "true", workdir: "/definitely/not/here" }, /workdir does not exist: \/definitely\/not\/here/],
    ];
    for (const [label, args, message] of cases) {
      it(`rejects ${label}`, async () => {
        const r = await call(args);
        expect(r.exit_code).toBe(-1);
        expect(r.output).toBe("");
        expect(r.error).toMatch(message);
      });
    }

    it("rejects a workdir that is a file", async () => {
      const r = await call({ command: "true", workdir: join(dir, "file.txt") });
      expect(r.error).toBe(`workdir is not a directory: ${join(dir, "file.txt")}`);
    });

    it("does not run the command when an argument is bad", async () => {
      const marker = join(dir, "should-not-exist");
      const r = await call({ command: `touch ${marker}`, timeout: 10_000 });
      expect(r.error).toMatch(/exceeds the maximum/);
      expect(existsSync(marker)).toBe(false);
    });
  });
});


describe("groupDigits", () => {
  it("groups thousands like en-US without touching ICU", () => {
    for (const n of [0, 7, 999, 1000, 50000, 1234567, 100000000]) expect(groupDigits(n)).toBe(n.toLocaleString("en-US"));
  });
});
