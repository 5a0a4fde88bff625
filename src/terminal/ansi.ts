/**
 * Cleaning terminal output before a model sees it: ANSI/VT escape sequences
 * (colours, cursor movement, OSC titles and hyperlinks) are removed and
 * Windows line endings become `\n`.
 */

import { stripVTControlCharacters } from "node:util";

/** Removes ANSI/VT escape sequences (CSI, OSC, and the other ESC forms Node recognises). */
export function stripAnsi(text: string): string {
  return stripVTControlCharacters(text);
}

/** Turns `\r\n` into `\n`. A lone `\r` (progress-bar redraws) is left alone. */
export function normalizeNewlines(text: string): string {
  return text.replace(/\r\n/g, "\n");
}

// C0 controls other than \t, \n, \r, plus DEL. ESC is included: by the time this
// runs, whole escape sequences are gone and a stray ESC carries no meaning.
// eslint-disable-next-line no-control-regex
const STRAY_CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

/** Removes control characters that are left after escape stripping (NUL, BEL, backspace, stray ESC, ...). */
export function removeStrayControls(text: string): string {
  return text.replace(STRAY_CONTROLS, "");
}

/** Everything a model-facing terminal result gets: escapes stripped, newlines normalised, stray controls dropped. */
export function cleanTerminalOutput(text: string): string {
  return removeStrayControls(normalizeNewlines(stripAnsi(text)));
}
