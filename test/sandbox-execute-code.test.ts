/**
 * execute_code's node process inside the local sandbox, for real: the program
 * cannot write outside its own folder or reach a server on the host's
 * 127.0.0.1 with the network off (it can with the network on), its tool calls
 * still travel over the IPC channel, and a sandbox that cannot work refuses
 * the run instead of running the program unsandboxed.
 */

import { chmodSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { runCode } from "../src/code-execution/run-code.js";
import { startCountingServer, type CountingServer } from "./support/proc.js";
import { ToolRegistry } from "../src/registry/tool-registry.js";
import { checkBubblewrap } from "../src/sandbox/bubblewrap.js";
import type { SandboxPolicy } from "../src/sandbox/policy.js";

const problem = checkBubblewrap().problem;
const scratch = realpathSync(mkdtempSync("/var/tmp/mibyan-sandbox-code-"));
const WRITE: SandboxPolicy = { mode: "workspace-write", network: false, writableRoots: [] };
const ECHO = "sandbox_echo";

const registry = new ToolRegistry();
registry.register({
  name: ECHO,
  toolset: "sandbox_test",
  schema: { description: "Echo.", parameters: { type: "object", properties: { text: { type: "string" } }, additionalProperties: false } },
  handler: (args) => `echo:${String(args.text)}`,
});

let server: CountingServer;
beforeAll(async () => {
  server = await startCountingServer();
});
afterAll(async () => {
  await server.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe.skipIf(problem !== undefined)(`execute_code in the local sandbox${problem ? ` — skipped: ${problem}` : ""}`, () => {
  it("writes outside the program's folder fail; its folder and /tmp are writable; tool calls still work", async () => {
    const victim = path.join(scratch, "precious.txt");
    writeFileSync(victim, "keep me\n");
    const code = [
      'import { writeFileSync, readFileSync } from "node:fs";',
      `try { writeFileSync(${JSON.stringify(victim)}, "owned"); console.log("WROTE"); } catch (e) { console.log("refused", e.code); }`,
      'writeFileSync("out.txt", "mine"); console.log(readFileSync("out.txt", "utf8"));',
      'writeFileSync("/tmp/t.txt", "tmp"); console.log(readFileSync("/tmp/t.txt", "utf8"));',
      'console.log(await tools.sandbox_echo({ text: "hi" }));',
    ].join("\n");
    const run = await runCode({ code, registry, extraSandboxTools: [ECHO], sandbox: WRITE });
    expect(run.error).toBeUndefined();
    expect(run.output).toContain("refused EROFS");
    expect(run.output).not.toContain("WROTE");
    expect(run.output).toContain("mine");
    expect(run.output).toContain("tmp");
    expect(run.output).toContain("echo:hi");
    expect(run.toolCalls).toBe(1);
    expect(readFileSync(victim, "utf8")).toBe("keep me\n");
  });

  it("network off: the host's 127.0.0.1 server is out of reach; network on: reachable", async () => {
    const code = `try { const r = await fetch("http://127.0.0.1:${server.port}/"); console.log(await r.text()); } catch (e) { console.log("failed", e.cause?.code ?? e.message); }`;
    const before = server.hits;
    const off = await runCode({ code, registry, sandbox: WRITE });
    expect(off.output).toMatch(/failed (ECONNREFUSED|ENETUNREACH)/);
    expect(server.hits).toBe(before);
    const on = await runCode({ code, registry, sandbox: { ...WRITE, network: true } });
    expect(on.output).toContain("pong-from-host");
    expect(server.hits).toBe(before + 1);
  });

  it("a timeout still kills the sandboxed program", async () => {
    const run = await runCode({ code: "await new Promise(() => setInterval(() => {}, 1000));", registry, sandbox: WRITE, timeoutMs: 500 });
    expect(run.timedOut).toBe(true);
    expect(run.exitCode).toBe(124);
  });
});

describe("execute_code with a sandbox that cannot work: fail closed", () => {
  it("no bubblewrap: the program is not run, and says why", async () => {
    const marker = path.join(scratch, "ran.txt");
    const run = await runCode({
      code: `import { writeFileSync } from "node:fs"; writeFileSync(${JSON.stringify(marker)}, "ran");`,
      registry,
      sandbox: WRITE,
      sandboxProgram: path.join(scratch, "no-bwrap"),
    });
    expect(run.exitCode).toBe(-1);
    expect(run.error).toMatch(/not run.*sandbox is configured but cannot be used.*bubblewrap/);
    expect(existsSync(marker)).toBe(false);
  });

  it("bubblewrap refusing its namespaces: not run either", async () => {
    const fake = path.join(scratch, "bwrap");
    writeFileSync(fake, "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n");
    chmodSync(fake, 0o755);
    const run = await runCode({ code: "console.log('ran')", registry, sandbox: WRITE, sandboxProgram: fake });
    expect(run.exitCode).toBe(-1);
    expect(run.error).toContain("No permissions to creating new namespace");
    expect(run.output).toBe("");
  });
});
