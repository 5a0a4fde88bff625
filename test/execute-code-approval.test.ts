/**
 * execute_code passes the approval gate as a whole before its program starts: real `node`
 * children, real files, a real config.yaml. A program that is refused never runs, which the
 * tests see as a file it would have created and did not.
 */

import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { afterAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";

import { getApprovalGate, setApprovalGate } from "../src/approval/default-gate.js";
import { listApprovals, MemoryAllowlist } from "../src/approval/flow/allowlist.js";
import { ApprovalGate, type ApprovalGateOptions } from "../src/approval/flow/gate.js";
import type { ApprovalAnswer, ApprovalSurface, GateDecision } from "../src/approval/flow/types.js";
import { MemoryPendingStore, type PendingApproval } from "../src/approval/surfaces/pending-store.js";
import { NonInteractiveSurface } from "../src/approval/surfaces/non-interactive.js";
import { renderRequest } from "../src/approval/surfaces/display.js";
import { registry, type ToolContext } from "../src/index.js";
import { createExecuteCodeHandler } from "../src/tools/execute-code.js";
import "../src/tools/terminal.js";
import { createMemoryLogger } from "../src/util/logger.js";
import { ScriptedSurface } from "./fixtures/approval-detections.js";

interface Parsed {
  output: string;
  exit_code: number;
  tool_calls: number;
  error: string | null;
  status?: string;
}

const EXECUTE_CODE_KEY = { rule: "execute-code", prefix: "execute_code", backend: "local" };
const scratch = mkdtempSync(path.join(tmpdir(), "mibyan-code-approval-"));
const previousGate = getApprovalGate();
afterAll(() => setApprovalGate(previousGate));

let counter = 0;
/** A path no program has written yet. */
function marker(): string {
  return path.join(scratch, `ran-${++counter}`);
}

/** A program that leaves a file behind when (and only when) it runs. */
function writes(file: string, extra = ""): string {
  return `import { writeFileSync } from "node:fs";\n${extra}writeFileSync(${JSON.stringify(file)}, "ran");\nconsole.log("done");`;
}

function ctx(sessionId = "s1", signal = new AbortController().signal): ToolContext {
  return { signal, toolName: "execute_code", sessionId };
}

/** A gate of its own (nothing read from the shared profile), recording its decisions. */
function gate(options: Partial<ApprovalGateOptions> = {}) {
  const decisions: GateDecision[] = [];
  const g = new ApprovalGate({
    settings: { mode: "manual" },
    surface: new NonInteractiveSurface("deny"),
    allowlist: new MemoryAllowlist(),
    logger: createMemoryLogger(),
    ...options,
    observers: [{ onDecision: (d) => void decisions.push(d) }],
  });
  return { gate: g, decisions, run: runner(g) };
}

function runner(g: ApprovalGate) {
  const handler = createExecuteCodeHandler({ gate: () => g });
  return async (code: string, context = ctx()): Promise<Parsed> => JSON.parse(await handler({ code }, context)) as Parsed;
}

describe("execute_code asks the approval gate before its program starts", () => {
  it("denies when nobody can approve (non-interactive), and the program never runs", async () => {
    const { run, decisions } = gate();
    const file = marker();
    const result = await run(writes(file));
    expect(result).toMatchObject({ output: "", exit_code: -1, tool_calls: 0, status: "blocked" });
    expect(result.error).toMatch(/non-interactive/);
    expect(result.error).toContain("[execute-code: execute_code]");
    expect(existsSync(file)).toBe(false);
    expect(decisions).toMatchObject([{ allowed: false, by: "non_interactive", backend: "local", matches: [{ rule: "execute-code", category: "code_execution" }] }]);
  });

  it("is denied by the process-wide gate of a non-interactive run with the default config", async () => {
    const home = mkdtempSync(path.join(scratch, "home-"));
    setApprovalGate({ home, logger: createMemoryLogger() });
    const file = marker();
    const result = JSON.parse(await registry.dispatch("execute_code", { code: writes(file) }, { sessionId: "s-default" })) as Parsed;
    expect(result.status).toBe("blocked");
    expect(existsSync(file)).toBe(false);
  });

  it("runs when approvals are off, and under the session's yolo toggle (that session only)", async () => {
    const off = gate({ settings: { mode: "off" } });
    const first = marker();
    expect(await off.run(writes(first))).toMatchObject({ output: "done\n", exit_code: 0, error: null });
    expect(existsSync(first)).toBe(true);
    expect(off.decisions.map((d) => d.by)).toEqual(["mode_off"]);

    const yolo = gate();
    yolo.gate.setYolo("bold", true);
    const second = marker();
    const third = marker();
    expect((await yolo.run(writes(second), ctx("bold"))).exit_code).toBe(0);
    expect((await yolo.run(writes(third), ctx("careful"))).status).toBe("blocked");
    expect([existsSync(second), existsSync(third)]).toEqual([true, false]);
    expect(yolo.decisions.map((d) => d.by)).toEqual(["yolo", "non_interactive"]);
  });

  it("a session approval covers the session's later programs, whatever their code, and no other session", async () => {
    const surface = new ScriptedSurface([{ scope: "session" }, { scope: "deny", reason: "not in this chat" }]);
    const { run, gate: g, decisions } = gate({ surface });
    const [a, b, c] = [marker(), marker(), marker()];
    expect((await run(writes(a), ctx("s1"))).exit_code).toBe(0);
    expect((await run(writes(b, "const other = 42;\n"), ctx("s1"))).exit_code).toBe(0);
    const refused = await run(writes(c), ctx("s2"));
    expect(refused).toMatchObject({ status: "blocked", error: "The user denied this command: not in this chat" });
    expect([existsSync(a), existsSync(b), existsSync(c)]).toEqual([true, true, false]);
    expect(surface.asked.map((r) => r.sessionId)).toEqual(["s1", "s2"]);
    expect(decisions.map((d) => d.by)).toEqual(["user", "session", "user"]);
    expect(g.sessionApprovals("s1")).toEqual([{ id: expect.any(String), ...EXECUTE_CODE_KEY }]);
    expect(g.sessionApprovals("s2")).toEqual([]);
  });

  it("`once` covers that one program; the next one asks again", async () => {
    const surface = new ScriptedSurface([{ scope: "once" }, { scope: "deny" }]);
    const { run } = gate({ surface });
    const [a, b] = [marker(), marker()];
    expect((await run(writes(a))).exit_code).toBe(0);
    expect((await run(writes(a))).status).toBe("blocked");
    expect(existsSync(a)).toBe(true);
    expect(existsSync(b)).toBe(false);
    expect(surface.asked).toHaveLength(2);
  });

  it("`always` is written to config.yaml as (execute-code, execute_code, local), and a later gate runs programs without asking", async () => {
    const home = mkdtempSync(path.join(scratch, "home-"));
    const first = gate({ home, allowlist: undefined, surface: new ScriptedSurface([{ scope: "always" }]) });
    const a = marker();
    expect((await first.run(writes(a))).exit_code).toBe(0);

    const config = parseYaml(readFileSync(path.join(home, "config.yaml"), "utf8")) as { approvals: { allowlist: object[] } };
    expect(config.approvals.allowlist).toEqual([{ ...EXECUTE_CODE_KEY, added: expect.any(String) }]);
    expect(listApprovals({ home })).toMatchObject([EXECUTE_CODE_KEY]);

    // Another process's gate, same profile, nobody to ask.
    const later = gate({ home, allowlist: undefined });
    const b = marker();
    expect((await later.run(writes(b), ctx("another-session"))).exit_code).toBe(0);
    expect(existsSync(b)).toBe(true);
    expect(later.decisions.map((d) => d.by)).toEqual(["allowlist"]);
  });

  it("a deny rule naming the rule id refuses every program, even with approvals off and yolo on", async () => {
    const { run, gate: g, decisions } = gate({
      settings: { mode: "off", deny: [{ rule: "execute-code", reason: "No programs on this machine." }] },
      allowlist: new MemoryAllowlist([EXECUTE_CODE_KEY]),
    });
    g.setYolo("s1", true);
    const file = marker();
    const result = await run(writes(file));
    expect(result.status).toBe("blocked");
    expect(result.error).toMatch(/^Denied by the user's configuration \(.*execute-code.*\): No programs on this machine\.$/);
    expect(existsSync(file)).toBe(false);
    expect(decisions.map((d) => d.by)).toEqual(["deny_rule"]);
  });

  it("a deny rule on the category `code_execution` in config.yaml refuses programs, and leaves shell commands alone", async () => {
    const home = mkdtempSync(path.join(scratch, "home-"));
    writeFileSync(path.join(home, "config.yaml"), "approvals:\n  mode: off\n  deny:\n    - category: code_execution\n      reason: Use the terminal.\n");
    const g = new ApprovalGate({ home, logger: createMemoryLogger() });
    const file = marker();
    const result = await runner(g)(writes(file));
    expect(result.error).toMatch(/Use the terminal\.$/);
    expect(existsSync(file)).toBe(false);
    expect((await g.check("rm -rf ./build", { sessionId: "s1", backend: "local" })).by).toBe("mode_off");
  });

  it("works through the gateway: the pending approval shows the program redacted and shortened, and the answer lets it run", async () => {
    let gateway: ReturnType<ApprovalGate["gatewaySurface"]> | undefined;
    const sent: PendingApproval[] = [];
    const { gate: g, run } = gate();
    gateway = g.gatewaySurface({
      store: new MemoryPendingStore(),
      notify: (pending) => {
        sent.push(JSON.parse(JSON.stringify(pending)) as PendingApproval);
        // The answer comes from "another request", later, by id.
        setTimeout(() => void gateway!.resolvePending(pending.id, { scope: "session", approver: "u1" }), 20);
      },
    });
    g.setSurface(gateway);
    const file = marker();
    const secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6";
    const filler = Array.from({ length: 400 }, (_, i) => `const v${i} = ${i}; // padding line ${i}`).join("\n");
    const code = writes(file, `const OPENAI_API_KEY = "${secret}";\n${filler}\n`);
    expect((await run(code, ctx("chat-7"))).exit_code).toBe(0);
    expect(existsSync(file)).toBe(true);

    expect(sent).toHaveLength(1);
    const pending = sent[0]!;
    expect(pending).toMatchObject({ sessionId: "chat-7", backend: "local", matches: [{ rule: "execute-code", prefix: "execute_code", category: "code_execution" }] });
    expect(pending.command).toMatch(/^execute_code: a JavaScript program run by node on this machine \(\d+ lines, \d+ characters\)\n/);
    expect(pending.command).not.toContain(secret);
    expect(pending.command).toContain("[REDACTED]");
    expect(pending.command).toMatch(/… \d+ characters not shown …/);
    expect(pending.command).toContain("console.log(\"done\");"); // the end of the program is shown
    expect(pending.command.length).toBeLessThan(3_600);
    expect(pending.command.length).toBeLessThan(code.length);
    // Approved for the session: the next program of that chat runs without a message.
    expect((await run(writes(marker()), ctx("chat-7"))).exit_code).toBe(0);
    expect(sent).toHaveLength(1);
  });

  it("the terminal prompt shows the program (redacted), not a shell command line", async () => {
    const surface = new ScriptedSurface([{ scope: "deny" }]);
    const { run } = gate({ surface });
    await run('const token = "ghp_' + "a".repeat(36) + '";\nconsole.log(token.length);');
    const text = renderRequest(surface.asked[0]!, 60);
    expect(text).toContain("execute_code: a JavaScript program run by node on this machine (2 lines,");
    expect(text).toContain("| console.log(token.length);");
    expect(text).not.toContain("$ ");
    expect(text).not.toContain("a".repeat(36));
    expect(text).toContain("[execute-code: execute_code]");
    // The decision keeps the exact program.
    expect(surface.asked[0]!.command).toContain("a".repeat(36));
  });

  it("is checked as `local` whatever the terminal backend, and the program's own tool calls still pass the gate", async () => {
    // execute_code approved for good; the nested `rm -rf` is a command of its own, refused.
    const decisions: GateDecision[] = [];
    setApprovalGate({
      settings: { mode: "manual" },
      surface: new NonInteractiveSurface("deny"),
      allowlist: new MemoryAllowlist([EXECUTE_CODE_KEY]),
      logger: createMemoryLogger(),
      observers: [{ onDecision: (d) => void decisions.push(d) }],
    });
    const victim = path.join(scratch, "victim");
    mkdirSync(victim);
    writeFileSync(path.join(victim, "keep.txt"), "keep");
    const code = `const r = JSON.parse(await tools.terminal({ command: ${JSON.stringify(`rm -rf ${victim}`)} }));\nconsole.log(r.status);`;
    const result = JSON.parse(await registry.dispatch("execute_code", { code }, { sessionId: "nested" })) as Parsed;
    expect(result).toMatchObject({ output: "blocked\n", exit_code: 0, tool_calls: 1 });
    expect(existsSync(path.join(victim, "keep.txt"))).toBe(true);
    expect(decisions.map((d) => [d.by, d.matches.map((m) => m.rule).join(","), d.backend])).toEqual([
      ["allowlist", "execute-code", "local"],
      ["non_interactive", "recursive-delete", "local"],
    ]);
  });

  it("a cancelled approval wait cancels the program before it starts", async () => {
    const controller = new AbortController();
    const waiting: ApprovalSurface = {
      kind: "terminal",
      ask: (_request, signal) =>
        new Promise<ApprovalAnswer>((resolve) => {
          signal.addEventListener("abort", () => resolve({ scope: "deny", by: "cancelled" }), { once: true });
          setTimeout(() => controller.abort(), 20);
        }),
    };
    const { run } = gate({ surface: waiting });
    const file = marker();
    expect(await run(writes(file), ctx("s1", controller.signal))).toMatchObject({ exit_code: 130, status: "cancelled", tool_calls: 0 });
    expect(existsSync(file)).toBe(false);
  });
});
