/**
 * The call approval scope of src/approval/flow/call-approval.ts against a real ApprovalGate: grants
 * of exact texts for `check` and `checkAction` (a person's approval, which smart review does not
 * second-guess), and the route of the gate's questions back to the framework (`ask`), only for checks
 * that carry the scope (`CheckOptions.approvalScope`).
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { afterAll, describe, expect, it } from "vitest";

import { ApprovalGate } from "../src/approval/flow/gate.js";
import type { ApprovalRequest, CallApprovalScope, GateAction, SmartReviewInput } from "../src/approval/flow/types.js";
import { PLUGIN_APPROVAL_RULE } from "../src/plugins/approval.js";
import { createMemoryLogger } from "../src/util/logger.js";

const scratch = mkdtempSync(path.join(tmpdir(), "mibyan-call-scope-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function gate(mode: "manual" | "smart" = "manual") {
  const asked: ApprovalRequest[] = [];
  const reviewed: SmartReviewInput[] = [];
  const g = new ApprovalGate({
    home: mkdtempSync(path.join(scratch, "home-")),
    settings: { mode },
    surface: { kind: "test", ask: async (r) => (asked.push(r), { scope: "deny" }) },
    // Stands in for the reviewer model: it would deny everything it sees.
    reviewer: { review: async (input) => (reviewed.push(input), { verdict: "deny", reason: "looks risky" }) },
    logger: createMemoryLogger(),
  });
  return { g, asked, reviewed };
}

const action: GateAction = { rule: PLUGIN_APPROVAL_RULE, prefix: "read_file", text: 'read_file {\n  "path": "a"\n}' };
const opts = { sessionId: "s1", backend: "local" };
/** The check options of a call that carries `scope`. */
const within = (scope: CallApprovalScope, sessionId = "s1") => ({ ...opts, sessionId, approvalScope: scope });

describe("a call scope", () => {
  it("grants an action's exact text once (checkAction), then routes the next question to ask", async () => {
    const { g, asked } = gate();
    const questions: string[] = [];
    const scope = { sessionId: "s1", grants: new Set([action.text]), toolCallId: "c1", ask: (r: ApprovalRequest) => (questions.push(r.command), { scope: "deny" as const, by: "framework" as const, reason: "call again" }) };
    const [first, second] = [await g.checkAction(action, within(scope)), await g.checkAction(action, within(scope))];
    expect(first).toMatchObject({ allowed: true, by: "user", scope: "once" });
    expect(second).toMatchObject({ allowed: false, by: "framework" });
    expect(second!.reason).toMatch(/needs the user's approval .*plugin-approval.*call again/);
    expect(questions).toEqual([action.text]);
    expect(asked).toEqual([]);
  });

  it("without the scope, or for another session, the gate's own surface is asked", async () => {
    const { g, asked } = gate();
    const questions: string[] = [];
    const scope = { sessionId: "s1", grants: new Set<string>(), toolCallId: "c1", ask: (r: ApprovalRequest) => (questions.push(r.command), { scope: "deny" as const, by: "framework" as const }) };
    await g.check("rm -rf build", within(scope, "s2"));
    await g.check("rm -rf build", opts);
    expect(questions).toEqual([]);
    expect(asked).toHaveLength(2);
  });

  it("smart mode: a granted command is not sent to the reviewer (a person's answer wins); without a grant the reviewer denies", async () => {
    const { g, reviewed } = gate("smart");
    const scope = { sessionId: "s1", grants: new Set(["rm -rf build"]), toolCallId: "c1" };
    expect(await g.check("rm -rf build", within(scope))).toMatchObject({ allowed: true, by: "user" });
    expect(reviewed).toEqual([]);
    expect(await g.check("rm -rf build", opts)).toMatchObject({ allowed: false, by: "smart" });
    expect(reviewed).toHaveLength(1);
  });

  it("the floor: a grant never lets a hardline command or a deny-rule action through", async () => {
    const { g } = gate();
    expect(await g.check("rm -rf /", within({ sessionId: "s1", grants: new Set(["rm -rf /"]), toolCallId: "c1" }))).toMatchObject({ allowed: false, by: "hardline" });
    const denying = new ApprovalGate({
      home: mkdtempSync(path.join(scratch, "home-")),
      settings: { mode: "manual", deny: [{ rule: "plugin-approval", reason: "not here" }] },
      surface: { kind: "test", ask: async () => ({ scope: "once" }) },
      logger: createMemoryLogger(),
    });
    expect(await denying.checkAction(action, within({ sessionId: "s1", grants: new Set([action.text]), toolCallId: "c1" }))).toMatchObject({ allowed: false, by: "deny_rule" });
  });
});
