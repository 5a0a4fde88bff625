/**
 * The one-shot approval a framework's human-in-the-loop hands our gate (src/integrations/
 * pre-approval.ts), against a real ApprovalGate with real detection: it answers for exactly one
 * check of exactly that command and session, from inside that call only.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { afterAll, describe, expect, it } from "vitest";

import { ApprovalGate } from "../src/approval/flow/gate.js";
import type { ApprovalRequest } from "../src/approval/flow/types.js";
import { bridgeGate, withCallGrant } from "../src/integrations/pre-approval.js";
import { createMemoryLogger } from "../src/util/logger.js";

const scratch = mkdtempSync(path.join(tmpdir(), "mibyan-pre-approval-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function gate() {
  const asked: ApprovalRequest[] = [];
  const g = new ApprovalGate({
    home: mkdtempSync(path.join(scratch, "home-")),
    settings: { mode: "manual" },
    surface: { kind: "test", ask: async (r) => (asked.push(r), { scope: "deny" }) },
    logger: createMemoryLogger(),
  });
  bridgeGate(g);
  bridgeGate(g); // idempotent: one wrapper, not two
  return { g, asked };
}

const CMD = "rm -rf build";
const check = (g: ApprovalGate, command = CMD, sessionId = "s1") => g.check(command, { sessionId, backend: "local" });

describe("a call grant", () => {
  it("answers the gate's prompt once, for that command and session, inside the call", async () => {
    const { g, asked } = gate();
    const decisions = await withCallGrant({ sessionId: "s1", command: CMD, toolCallId: "c1" }, async () => [await check(g), await check(g)]);
    expect(decisions[0]).toMatchObject({ allowed: true, by: "user", scope: "once" });
    // Spent: a second check in the same call is asked as usual (and denied here).
    expect(decisions[1]).toMatchObject({ allowed: false });
    expect(asked).toHaveLength(1);
  });

  it("does not cover another command, another session, or a check outside the call", async () => {
    const { g, asked } = gate();
    await withCallGrant({ sessionId: "s1", command: CMD, toolCallId: "c1" }, async () => {
      expect(await check(g, "rm -rf src")).toMatchObject({ allowed: false });
      expect(await check(g, CMD, "s2")).toMatchObject({ allowed: false });
    });
    expect(await check(g)).toMatchObject({ allowed: false });
    expect(asked).toHaveLength(3);
  });

  it("a check running beside the call, not inside it, gets nothing even while the grant is unspent", async () => {
    const { g, asked } = gate();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const inside = withCallGrant({ sessionId: "s1", command: CMD, toolCallId: "c1" }, async () => {
      await held;
      return check(g);
    });
    const beside = await check(g); // same command, same session, while the grant waits
    release();
    expect(beside).toMatchObject({ allowed: false });
    expect(await inside).toMatchObject({ allowed: true, by: "user" });
    expect(asked).toHaveLength(1);
  });

  it("never lifts the floor: hardline and deny rules still refuse", async () => {
    const { g } = gate();
    expect(await withCallGrant({ sessionId: "s1", command: "rm -rf /", toolCallId: "c1" }, () => check(g, "rm -rf /"))).toMatchObject({ allowed: false, by: "hardline" });
    const denying = new ApprovalGate({
      home: mkdtempSync(path.join(scratch, "home-")),
      settings: { mode: "manual", deny: [{ rule: "recursive-delete", reason: "never here" }] },
      surface: { kind: "test", ask: async () => ({ scope: "once" }) },
      logger: createMemoryLogger(),
    });
    bridgeGate(denying);
    expect(await withCallGrant({ sessionId: "s1", command: CMD, toolCallId: "c1" }, () => check(denying))).toMatchObject({ allowed: false, by: "deny_rule" });
  });
});
