/**
 * The terminal prompt: driven through a real pseudo-terminal (`@lydell/node-pty` runs a
 * small node script with a real `ApprovalGate` whose default surface is the prompt), and
 * through plain streams for the cases a pty cannot express easily.
 */

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";

import pty from "@lydell/node-pty";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import type { ApprovalRequest, GateDecision } from "../src/approval/flow/types.js";
import { renderRequest, visible } from "../src/approval/surfaces/display.js";
import { PROMPT_TEXT, parseChoice, TerminalSurface } from "../src/approval/surfaces/terminal.js";
import { buildForNode, ROOT, type BuiltScripts } from "./fixtures/approval-build.js";
import { DETECTIONS, RM_NODE_MODULES } from "./fixtures/approval-detections.js";

const SCRIPT = "test/fixtures/approval-pty-prompt.ts";

let built: BuiltScripts;
let root: string;

beforeAll(() => {
  built = buildForNode([SCRIPT]);
  root = mkdtempSync(path.join(os.tmpdir(), "mibyan-approval-pty-"));
});

afterAll(() => {
  rmSync(built.dir, { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
});

/** A node child on a real pty; `waitFor` resolves once the screen output contains the text. */
function runInPty(timeoutMs: number) {
  const home = mkdtempSync(path.join(root, "home-"));
  const child = pty.spawn(process.execPath, [built.path(SCRIPT), home, String(timeoutMs)], {
    name: "xterm-256color",
    cols: 200,
    rows: 50,
    cwd: ROOT,
    env: { ...process.env, MIBYAN_HOME: home } as Record<string, string>,
  });
  let screen = "";
  const watchers: { text: string; resolve: () => void }[] = [];
  child.onData((data) => {
    screen += data;
    for (const w of watchers.splice(0)) {
      if (screen.includes(w.text)) w.resolve();
      else watchers.push(w);
    }
  });
  const exited = new Promise<number>((resolve) => child.onExit(({ exitCode }) => resolve(exitCode)));
  const waitFor = (text: string, ms = 10_000): Promise<void> =>
    new Promise((resolve, reject) => {
      if (screen.includes(text)) return resolve();
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${JSON.stringify(text)}; screen:\n${screen}`)), ms);
      watchers.push({ text, resolve: () => (clearTimeout(timer), resolve()) });
    });
  const line = (tag: string): GateDecision => {
    const m = new RegExp(`${tag} (\\{.*\\})`).exec(screen);
    if (!m) throw new Error(`no ${tag} line in:\n${screen}`);
    return JSON.parse(m[1]!) as GateDecision;
  };
  return { child, home, exited, waitFor, screen: () => screen, decision: () => line("DECISION"), second: () => line("SECOND") };
}

describe("terminal prompt in a real pseudo-terminal", () => {
  it("shows the command (escape sequences made visible) and the rule, and `o` approves once", async () => {
    const run = runInPty(20_000);
    await run.waitFor(PROMPT_TEXT);
    const screen = run.screen();
    expect(screen).toContain("rm -rf node_modules \\x1b[2K");
    expect(screen).not.toContain("node_modules \x1b[2K");
    expect(screen).toContain("Recursively deletes files and directories [recursive-delete: rm -f -r node_modules]");
    expect(screen).toContain("No answer within 20 s denies.");
    run.child.write("o\r");
    expect(await run.exited).toBe(0);
    expect(run.decision()).toMatchObject({ allowed: true, by: "user", scope: "once", backend: "local" });
    expect(() => run.second()).toThrow();
  });

  it("`s` approves for the session: the same command then passes without a prompt", async () => {
    const run = runInPty(20_000);
    await run.waitFor(PROMPT_TEXT);
    run.child.write("s\r");
    expect(await run.exited).toBe(0);
    expect(run.decision()).toMatchObject({ allowed: true, by: "user", scope: "session" });
    expect(run.second()).toMatchObject({ allowed: true, by: "session" });
    expect(run.screen().split(PROMPT_TEXT)).toHaveLength(2);
  });

  it("`a` approves for good: written to config.yaml in the profile home", async () => {
    const run = runInPty(20_000);
    await run.waitFor(PROMPT_TEXT);
    run.child.write("a\r");
    expect(await run.exited).toBe(0);
    expect(run.decision()).toMatchObject({ allowed: true, scope: "always" });
    expect(run.second()).toMatchObject({ allowed: true, by: "session" });
    expect(readFileSync(path.join(run.home, "config.yaml"), "utf8")).toMatch(/allowlist:\n\s+- rule: recursive-delete\n\s+prefix: rm -f -r node_modules\n\s+backend: local\n/);
  });

  it("an unknown answer asks again; `d` then asks for a reason, which reaches the model", async () => {
    const run = runInPty(20_000);
    await run.waitFor(PROMPT_TEXT);
    run.child.write("maybe\r");
    await run.waitFor("Please answer o, s, a or d.");
    run.child.write("d\r");
    await run.waitFor("Reason for the agent");
    run.child.write("keep my modules\r");
    expect(await run.exited).toBe(0);
    const d = run.decision();
    expect(d).toMatchObject({ allowed: false, by: "user", scope: "deny" });
    expect(d.reason).toBe("The user denied this command: keep my modules");
  });

  it("no answer before the timeout denies", async () => {
    const run = runInPty(400);
    await run.waitFor(PROMPT_TEXT);
    expect(await run.exited).toBe(0);
    expect(run.screen()).toContain("No answer within 0.4 s: denied.");
    const d = run.decision();
    expect(d).toMatchObject({ allowed: false, by: "timeout" });
    expect(d.reason).toMatch(/Nobody approved this command in time/);
  });

  it("EOF (Ctrl-D) denies", async () => {
    const run = runInPty(20_000);
    await run.waitFor(PROMPT_TEXT);
    run.child.write("\x04");
    expect(await run.exited).toBe(0);
    expect(run.decision()).toMatchObject({ allowed: false, by: "closed" });
  });

  it("Ctrl-C denies", async () => {
    const run = runInPty(20_000);
    await run.waitFor(PROMPT_TEXT);
    run.child.write("\x03");
    expect(await run.exited).toBe(0);
    expect(run.decision()).toMatchObject({ allowed: false, by: "user" });
  });
});

describe("terminal prompt on plain streams", () => {
  const request = (id: string, command = RM_NODE_MODULES): ApprovalRequest => ({
    id,
    command,
    sessionId: "s",
    backend: "local",
    matches: DETECTIONS[RM_NODE_MODULES]!.matches,
    detection: DETECTIONS[RM_NODE_MODULES]!,
    createdAt: Date.now(),
  });

  function streams() {
    const input = new PassThrough();
    const output = new PassThrough();
    let text = "";
    output.on("data", (d: Buffer) => (text += d.toString()));
    return { input, output, text: () => text };
  }

  it("a closed input denies", async () => {
    const s = streams();
    const surface = new TerminalSurface({ input: s.input, output: s.output, timeoutMs: 5_000 });
    const answer = surface.ask(request("a"), new AbortController().signal);
    s.input.end();
    expect(await answer).toEqual({ scope: "deny", by: "closed" });
  });

  it("an aborted signal denies", async () => {
    const s = streams();
    const surface = new TerminalSurface({ input: s.input, output: s.output, timeoutMs: 5_000 });
    const controller = new AbortController();
    const answer = surface.ask(request("a"), controller.signal);
    controller.abort();
    expect(await answer).toEqual({ scope: "deny", by: "cancelled" });
  });

  it("asks one request at a time, in order", async () => {
    const s = streams();
    const surface = new TerminalSurface({ input: s.input, output: s.output, timeoutMs: 5_000, askReason: false });
    const signal = new AbortController().signal;
    const first = surface.ask(request("1", "first-command"), signal);
    const second = surface.ask(request("2", "second-command"), signal);
    await new Promise((r) => setTimeout(r, 20));
    expect(s.text()).toContain("first-command");
    expect(s.text()).not.toContain("second-command");
    s.input.write("s\n");
    expect(await first).toEqual({ scope: "session", by: "user" });
    await new Promise((r) => setTimeout(r, 20));
    expect(s.text()).toContain("second-command");
    s.input.write("deny\n");
    expect(await second).toEqual({ scope: "deny", by: "user" });
  });

  it("parses answers and makes control, bidi and zero-width characters visible", () => {
    expect(["o", "O", " once ", "s", "session", "a", "always", "d", "deny", "n", "no"].map(parseChoice)).toEqual([
      "once", "once", "once", "session", "session", "always", "always", "deny", "deny", "deny", "deny",
    ]);
    expect(parseChoice("")).toBeUndefined();
    expect(parseChoice("yes")).toBeUndefined();
    expect(visible("a\x1b[31mb\r\u202ec\u200bd\te")).toBe("a\\x1b[31mb\\x0d\\u{202e}c\\u{200b}d\te");
    const text = renderRequest({ ...request("x", "line1\nline2"), smart: { reason: "unsure" } }, 60);
    expect(text).toContain("$ line1\n    line2");
    expect(text).toContain("Reviewer: unsure");
  });
});
