/**
 * The gate with the real detection (`detectAsync` of src/approval/detection/, its default):
 * normalised prefixes make keys, wrappers and flag spellings do not matter, compounds are
 * covered part by part, hardline rules hold in every mode.
 */

import { existsSync } from "node:fs";
import path from "node:path";

import { describe, expect, it } from "vitest";

import { MemoryAllowlist } from "../src/approval/flow/allowlist.js";
import { ApprovalGate } from "../src/approval/flow/gate.js";
import type { ApprovalSettings } from "../src/approval/flow/settings.js";
import { createMemoryLogger } from "../src/util/logger.js";
import { ROOT } from "./fixtures/approval-build.js";
import { ScriptedSurface } from "./fixtures/approval-detections.js";

const hasDetection = existsSync(path.join(ROOT, "src", "approval", "detection", "index.ts"));

function realGate(surface: ScriptedSurface, settings: Partial<ApprovalSettings> = {}) {
  // No `detect` option: the gate loads the real detection itself.
  return new ApprovalGate({ settings, surface, allowlist: new MemoryAllowlist(), logger: createMemoryLogger() });
}

const s = { sessionId: "s", backend: "local" } as const;

const title = hasDetection
  ? "the gate with the real detection"
  : "the gate with the real detection (skipped: src/approval/detection/index.ts does not exist yet)";

describe.skipIf(!hasDetection)(title, () => {
  it("safe commands and dangerous words used as data pass without a prompt", async () => {
    const surface = new ScriptedSurface();
    const gate = realGate(surface);
    for (const command of ["ls -la", "grep 'rm -rf' log", 'git commit -m "kill -9"']) {
      expect(await gate.check(command, s), command).toMatchObject({ allowed: true, by: "safe" });
    }
    expect(surface.asked).toEqual([]);
  });

  it("a session approval of `rm -rf node_modules` covers `rm -fr node_modules` (same normalised prefix) but not `rm -rf ~/src`", async () => {
    const surface = new ScriptedSurface([{ scope: "session" }, { scope: "deny" }]);
    const gate = realGate(surface);
    expect(await gate.check("rm -rf node_modules", s)).toMatchObject({ allowed: true, scope: "session" });
    expect(gate.sessionApprovals("s").map((e) => e.prefix)).toEqual(["rm -f -r node_modules"]);
    expect(await gate.check("rm -fr node_modules", s)).toMatchObject({ allowed: true, by: "session" });
    expect(await gate.check("rm -r -f node_modules", s)).toMatchObject({ allowed: true, by: "session" });
    expect(await gate.check("rm -rf ~/src", s)).toMatchObject({ allowed: false, by: "user" });
    expect(surface.asked.map((r) => r.command)).toEqual(["rm -rf node_modules", "rm -rf ~/src"]);
  });

  it("a compound is covered part by part: only the uncovered part is asked about", async () => {
    const surface = new ScriptedSurface([{ scope: "session" }, { scope: "once" }]);
    const gate = realGate(surface);
    await gate.check("rm -rf node_modules", s);
    expect(await gate.check("rm -rf node_modules && git push -f", s)).toMatchObject({ allowed: true, by: "user", scope: "once" });
    expect(surface.asked[1]!.matches.map((m) => m.rule)).toEqual(["git-force-push"]);
  });

  it("hardline rules hold in off mode, in yolo and on isolated backends, through wrappers", async () => {
    const off = realGate(new ScriptedSurface(), { mode: "off" });
    off.setYolo("s", true);
    for (const command of ["rm -rf /", "sudo rm -rf /", "bash -c 'rm -rf /'"]) {
      expect(await off.check(command, s), command).toMatchObject({ allowed: false, by: "hardline" });
      expect(await off.check(command, { sessionId: "s", backend: "modal" }), command).toMatchObject({ by: "hardline" });
    }
    expect(await off.check("rm -rf ~/src", s)).toMatchObject({ allowed: true, by: "mode_off" });
  });

  it("an unanalysable command needs approval (denied in a non-interactive run)", async () => {
    const gate = new ApprovalGate({ settings: {}, allowlist: new MemoryAllowlist(), logger: createMemoryLogger() });
    const d = await gate.check("$CMD --force", s);
    expect(d).toMatchObject({ allowed: false, by: "non_interactive" });
    expect(d.matches.map((m) => m.rule)).toContain("unanalysable");
  });
});
