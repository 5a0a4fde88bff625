/**
 * Showing an approval request to a person. The command comes from the model, so it is
 * made inert before it reaches a terminal: control characters (escape sequences could
 * rewrite the screen and hide part of the command), bidirectional overrides ("Trojan
 * Source") and zero-width characters are shown as visible escapes.
 */

import type { ApprovalRequest } from "../flow/types.js";

const INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

/** `text` with every control, bidi and zero-width character shown as `\xNN` / `\u{NNNN}`; tabs kept. */
export function visible(text: string): string {
  return text.replace(INVISIBLE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
  });
}

/** Longest command shown in full; the rest is summarised (the matched rules still show every dangerous part). */
export const MAX_SHOWN_COMMAND_CHARS = 4_000;

/** The lines a terminal prompt prints before asking. */
export function renderRequest(request: ApprovalRequest, timeoutSeconds: number): string {
  // An action (gate.checkAction) brings its own display, already redacted and shortened.
  let command = request.display ?? request.command;
  let more = "";
  if (command.length > MAX_SHOWN_COMMAND_CHARS) {
    more = `\n    … ${command.length - MAX_SHOWN_COMMAND_CHARS} more characters`;
    command = command.slice(0, MAX_SHOWN_COMMAND_CHARS);
  }
  const lines = [
    "",
    `! Approval needed (session ${visible(request.sessionId)}, backend ${visible(request.backend)})`,
    `  ${request.display === undefined ? "$ " : ""}${visible(command).split("\n").join("\n    ")}${more}`,
    ...request.matches.map((m) => {
      const where = m.prefix ? `: ${visible(m.prefix)}` : "";
      return `  - ${visible(m.description)} [${visible(m.rule)}${where}]${m.detail ? `\n      ${visible(m.detail)}` : ""}`;
    }),
  ];
  if (request.smart) lines.push(`  Reviewer: ${visible(request.smart.reason)}`);
  lines.push(
    `  o = once (this command only)  s = this session  a = always (saved in config.yaml)  d = deny`,
    `  No answer within ${timeoutSeconds} s denies.`,
    "",
  );
  return lines.join("\n");
}
