/**
 * `SandboxEnvironment` over a transport whose sandbox is this machine
 * (test/support/process-transport.ts): the shared contract, and what the
 * environment asks of its transport.
 */

import { describe, expect, it } from "vitest";

import { SandboxEnvironment, createSandboxFactory } from "../src/environments/sandbox-environment.js";
import type { SandboxTransport } from "../src/environments/sandbox-transport.js";
import { environmentContract } from "./support/environment-contract.js";
import { processContract } from "./support/process-contract.js";
import { ProcessTransport } from "./support/process-transport.js";

const base = { timeoutMs: 20_000, maxOutputChars: 100_000 };

environmentContract("sandbox (local process transport)", (taskId) => SandboxEnvironment.create(taskId, new ProcessTransport(taskId), { backend: "test_sandbox" }));

processContract("sandbox (local process transport)", (taskId) => SandboxEnvironment.create(taskId, new ProcessTransport(taskId), { backend: "test_sandbox" }));

environmentContract("sandbox (transport without exit codes)", (taskId) => {
  const transport = new ProcessTransport(taskId);
  transport.hideExitCodes = true;
  return SandboxEnvironment.create(taskId, transport, { backend: "test_sandbox" });
});

describe("SandboxEnvironment", () => {
  it("runs every command as bash -c with the user's command as its own argument", async () => {
    const transport = new ProcessTransport("t1");
    const env = await SandboxEnvironment.create("t1", transport, { backend: "test_sandbox" });
    try {
      const command = `echo "it's $((1+1))" 'quoted'`;
      const r = await env.exec(command, base);
      expect(r.output).toBe("it's 2 quoted\n");
      const last = transport.started.at(-1)!;
      expect(last.slice(0, 2)).toEqual(["bash", "-c"]);
      expect(last.at(-1)).toBe(command);
      expect(last[2]).not.toContain(command);
    } finally {
      await env.close();
    }
    expect(transport.closed).toBe(1);
  });

  it("reports its backend and isolation", async () => {
    const transport = new ProcessTransport("t2");
    const env = await SandboxEnvironment.create("t2", transport, { backend: "test_sandbox", cwd: `${transport.home}/work/dir` });
    try {
      expect(env.backend).toBe("test_sandbox");
      expect(env.isolation).toEqual({ name: "test_sandbox", hostMounts: false });
      expect(env.cwd).toBe(`${transport.home}/work/dir`);
      expect((await env.exec("pwd", base)).output).toBe(`${transport.home}/work/dir\n`);
    } finally {
      await env.close();
    }
  });

  it("runs the kill script as a second command on timeout", async () => {
    const transport = new ProcessTransport("t3");
    const env = await SandboxEnvironment.create("t3", transport, { backend: "test_sandbox", killGraceMs: 500 });
    try {
      const r = await env.exec("sleep 30", { ...base, timeoutMs: 300 });
      expect(r).toMatchObject({ exitCode: 124, timedOut: true });
      // init, the command, the kill script
      expect(transport.started).toHaveLength(3);
      expect(transport.started[2]![2]).toContain("kill -s TERM");
    } finally {
      await env.close();
    }
  });

  it("closes the transport when preparing the sandbox fails, and says why", async () => {
    let closed = 0;
    const broken: SandboxTransport = {
      description: "broken sandbox",
      async start(_argv, onOutput) {
        onOutput(Buffer.from("bash: not found"));
        return { done: Promise.resolve({ exitCode: 127 }), detach() {} };
      },
      async close() {
        closed++;
      },
    };
    await expect(SandboxEnvironment.create("t4", broken, { backend: "test_sandbox" })).rejects.toThrow(/preparing broken sandbox failed \(exit code 127: bash: not found\) \(the sandbox image must contain bash\)/);
    expect(closed).toBe(1);
  });

  it("says when the transport lost a command's result", async () => {
    const transport = new ProcessTransport("t5");
    const env = await SandboxEnvironment.create("t5", transport, { backend: "test_sandbox" });
    const lossy: SandboxTransport = {
      description: transport.description,
      async start() {
        return { done: Promise.resolve({ exitCode: null, error: new Error("stream reset") }), detach() {} };
      },
      close: () => transport.close(),
    };
    Object.defineProperty(env, "transport", { value: lossy });
    await expect(env.exec("echo hi", base)).rejects.toThrow(/lost the command's result in local process sandbox t5: stream reset/);
    await env.close();
  });

  it("builds a factory that reads options per task and reports configuration problems as unavailability", async () => {
    let bad = false;
    const opened: string[] = [];
    const factory = createSandboxFactory<{ cwd?: string }>({
      backend: "test_sandbox",
      options: () => {
        if (bad) throw new Error("terminal.test_sandbox.cwd must be a string");
        return {};
      },
      unavailableReason: () => undefined,
      open: async (taskId) => {
        opened.push(taskId);
        return new ProcessTransport(taskId);
      },
    });
    expect(factory.unavailableReason()).toBeUndefined();
    const env = await factory.create("t6");
    expect(opened).toEqual(["t6"]);
    expect((await env.exec("echo ok", base)).output).toBe("ok\n");
    await env.close();
    bad = true;
    expect(factory.unavailableReason()).toMatch(/configuration is invalid: terminal.test_sandbox.cwd/);
  });
});
