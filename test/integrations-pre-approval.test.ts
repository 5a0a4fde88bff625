/**
 * The one-shot approval a framework's human-in-the-loop hands our gate (src/approval/flow/
 * call-approval.ts), against a real ApprovalGate with real detection: it answers for exactly one
 * check of exactly that command and session, made by that call only (a check carrying its scope).
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { afterAll, describe, expect, it } from "vitest";

import { ApprovalGate } from "../src/approval/flow/gate.js";
import type { ApprovalRequest, CallApprovalScope } from "../src/approval/flow/types.js";
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
  return { g, asked };
}

const CMD = "rm -rf build";
/** A call's one-shot grant of `command` (what run-call.ts gives an approved call). */
const grant = (command = CMD): CallApprovalScope => ({ sessionId: "s1", grants: new Set([command]), toolCallId: "c1" });
const check = (g: ApprovalGate, command = CMD, sessionId = "s1", approvalScope?: CallApprovalScope) =>
  g.check(command, { sessionId, backend: "local", approvalScope });

describe("a call grant", () => {
  it("answers the gate's prompt once, for that command and session, in the call", async () => {
    const { g, asked } = gate();
    const scope = grant();
    const decisions = [await check(g, CMD, "s1", scope), await check(g, CMD, "s1", scope)];
    expect(decisions[0]).toMatchObject({ allowed: true, by: "user", scope: "once" });
    // Spent: a second check in the same call is asked as usual (and denied here).
    expect(decisions[1]).toMatchObject({ allowed: false });
    expect(asked).toHaveLength(1);
  });

  it("does not cover another command, another session, or a check outside the call", async () => {
    const { g, asked } = gate();
    const scope = grant();
    expect(await check(g, "rm -rf src", "s1", scope)).toMatchObject({ allowed: false });
    expect(await check(g, CMD, "s2", scope)).toMatchObject({ allowed: false });
    expect(await check(g)).toMatchObject({ allowed: false });
    expect(asked).toHaveLength(3);
  });

  it("a check running beside the call, not inside it, gets nothing even while the grant is unspent", async () => {
    const { g, asked } = gate();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const scope = grant();
    const inside = (async () => {
      await held;
      return check(g, CMD, "s1", scope);
    })();
    const beside = await check(g); // same command, same session, while the grant waits
    release();
    expect(beside).toMatchObject({ allowed: false });
    expect(await inside).toMatchObject({ allowed: true, by: "user" });
    expect(asked).toHaveLength(1);
  });

  it("never lifts the floor: hardline and deny rules still refuse", async () => {
    const { g } = gate();
    expect(await check(g, "rm -rf /", "s1", grant("rm -rf /"))).toMatchObject({ allowed: false, by: "hardline" });
    const denying = new ApprovalGate({
      home: mkdtempSync(path.join(scratch, "home-")),
      settings: { mode: "manual", deny: [{ rule: "recursive-delete", reason: "never here" }] },
      surface: { kind: "test", ask: async () => ({ scope: "once" }) },
      logger: createMemoryLogger(),
    });
    expect(await check(denying, CMD, "s1", grant())).toMatchObject({ allowed: false, by: "deny_rule" });
  });
});
