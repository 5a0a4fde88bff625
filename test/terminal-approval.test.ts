import { mkdtempSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ApprovalGate } from "../src/approval/flow/gate.js";
import type { ApprovalSurface } from "../src/approval/flow/types.js";
import { MemoryAllowlist } from "../src/approval/flow/allowlist.js";
import { NonInteractiveSurface } from "../src/approval/surfaces/non-interactive.js";
import { createMemoryLogger } from "../src/util/logger.js";
import { createTerminalHandler } from "../src/tools/terminal.js";

function gate(mode: "manual" | "off" = "manual") {
  return new ApprovalGate({
    settings: { mode },
    surface: new NonInteractiveSurface("deny"),
    allowlist: new MemoryAllowlist(),
    logger: createMemoryLogger(),
    home: mkdtempSync(path.join(tmpdir(), "mibyan-approval-home-")),
  });
}

const ctx = (sessionId = "s1") => ({ signal: new AbortController().signal, toolName: "terminal", sessionId });

describe("terminal goes through the approval gate", () => {
  it("runs safe commands", async () => {
    const handler = createTerminalHandler({ gate: () => gate() });
    expect(JSON.parse(await handler({ command: "echo safe" }, ctx()))).toEqual({ output: "safe\n", exit_code: 0, error: null });
  });

  it("refuses a dangerous command nobody can approve, without running it", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "mibyan-victim-"));
    const handler = createTerminalHandler({ gate: () => gate() });
    const result = JSON.parse(await handler({ command: `rm -rf ${dir}` }, ctx()));
    expect(result.status).toBe("blocked");
    expect(result.exit_code).toBe(-1);
    expect(result.error).toMatch(/recursive|delete/i);
    expect(existsSync(dir)).toBe(true);
  });

  it("blocks hardline commands even with approvals off, and runs other dangerous ones then", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "mibyan-victim-"));
    const handler = createTerminalHandler({ gate: () => gate("off") });
    const hardline = JSON.parse(await handler({ command: "sudo rm -rf --no-preserve-root /" }, ctx()));
    expect(hardline.status).toBe("blocked");
    expect(hardline.error).toMatch(/never allowed/);
    const allowed = JSON.parse(await handler({ command: `rm -rf ${dir}` }, ctx()));
    expect(allowed.exit_code).toBe(0);
    expect(existsSync(dir)).toBe(false);
  });

  it("session approvals apply to their own session only", async () => {
    const g = gate();
    const handler = createTerminalHandler({ gate: () => g });
    const dir = mkdtempSync(path.join(tmpdir(), "mibyan-victim-"));
    const command = `rm -rf ${dir}`;
    const first = await g.check(command, { sessionId: "other", backend: "local" });
    expect(first.allowed).toBe(false);
    g.grantSession("owner", first.matches.map((m) => ({ rule: m.rule, prefix: m.prefix, backend: "local" })));
    expect(JSON.parse(await handler({ command }, ctx("other"))).status).toBe("blocked");
    expect(JSON.parse(await handler({ command }, ctx("owner"))).exit_code).toBe(0);
  });
});

describe("gate.setSurface", () => {
  it("routes later checks to the new surface", async () => {
    const g = gate();
    const asked: string[] = [];
    const surface: ApprovalSurface = {
      kind: "test",
      ask: async (request) => {
        asked.push(request.command);
        return { scope: "once" };
      },
    };
    g.setSurface(surface);
    const decision = await g.check("rm -rf ./build-output", { sessionId: "s", backend: "local" });
    expect(asked).toEqual(["rm -rf ./build-output"]);
    expect(decision.allowed).toBe(true);
  });
});
