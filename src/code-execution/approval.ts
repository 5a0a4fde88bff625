/**
 * How an `execute_code` program is put to the approval gate: as a whole, before it
 * starts, under the `execute-code` rule (src/approval/rules/code-execution.ts).
 *
 * - The key is (`execute-code`, `execute_code`, `local`): one prefix for every program, so
 *   "session" and "always" mean "let this session (or every session) run programs". A
 *   per-program key would make those answers useless, since no two programs are alike.
 * - The backend is always `local`: the program runs in a `node` process on this machine
 *   whatever the terminal backend is, so a docker or modal terminal never makes it
 *   "isolated". The tool calls the program makes (`tools.terminal(...)`) run in the parent
 *   and pass the gate themselves, on their own backend.
 * - A person sees the program redacted and shortened (`actionDisplay`); the smart reviewer
 *   sees it with its comments removed (parsed with acorn), or, when it does not parse, not
 *   at all: a person decides then.
 */

import { actionDisplay } from "../approval/flow/action.js";
import type { GateAction } from "../approval/flow/types.js";
import { EXECUTE_CODE_RULE } from "../approval/rules/code-execution.js";

/** The approval key's prefix of every program. */
export const EXECUTE_CODE_PREFIX = "execute_code";

/** The backend every program is checked on: it runs on this machine. */
export const EXECUTE_CODE_BACKEND = "local";

/** What the smart reviewer is told the text is. */
export const EXECUTE_CODE_REVIEW_SUBJECT =
  "a JavaScript program (an ES module) that runs in a node process on the host as the agent's user, with Node's built-in modules (node:fs, node:child_process, ...) available; calls to tools.<name>() inside it are checked separately";

function countLines(text: string): number {
  return text === "" ? 0 : text.replace(/\n$/, "").split("\n").length;
}

/** `code` without its comments, or undefined when it does not parse as a module. */
export async function stripJsComments(code: string): Promise<string | undefined> {
  const { parse } = await import("acorn");
  const comments: { block: boolean; start: number; end: number }[] = [];
  try {
    parse(code, {
      ecmaVersion: "latest",
      sourceType: "module",
      allowHashBang: true,
      onComment: (block, _text, start, end) => comments.push({ block, start, end }),
    });
  } catch {
    return undefined;
  }
  let out = "";
  let at = 0;
  for (const c of comments) {
    out += code.slice(at, c.start) + (c.block ? " " : "");
    at = c.end;
  }
  out += code.slice(at);
  return out
    .split("\n")
    .filter((line) => line.trim() !== "")
    .join("\n");
}

/** The gate action for one program. */
export async function executeCodeAction(code: string): Promise<GateAction> {
  const title = `execute_code: a JavaScript program run by node on this machine (${countLines(code)} lines, ${code.length} characters)`;
  const action: GateAction = {
    rule: EXECUTE_CODE_RULE,
    prefix: EXECUTE_CODE_PREFIX,
    text: code,
    display: actionDisplay(title, code),
  };
  const reviewText = await stripJsComments(code);
  if (reviewText !== undefined) action.review = { subject: EXECUTE_CODE_REVIEW_SUBJECT, text: reviewText };
  return action;
}
