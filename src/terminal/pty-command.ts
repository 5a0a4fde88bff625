/**
 * PTY mode: a command run under util-linux `script`, which opens a real
 * pseudo-terminal (the kernel's /dev/ptmx) inside whatever environment runs
 * it (the local machine, a container, an ssh host, a cloud sandbox) and runs
 * the command on it: `tty` names a /dev/pts device, `isatty()` is true,
 * programs print colours and prompts as they would for a person. `script`
 * is part of every Debian and Ubuntu (bsdutils, essential) and of util-linux
 * elsewhere.
 *
 * Why `script` and not node-pty: the pseudo-terminal has to be where the
 * command runs. node-pty opens one on the machine running the runtime, which
 * is right only for the local backend, and it ties the program to the
 * runtime's process (a background program could not outlive it). `script`
 * works the same on every backend.
 *
 * The user's command reaches the inner bash through an environment variable
 * (unset before it runs), never spliced into `script`'s command string.
 */

import { shellQuote } from "../environments/shell-state.js";

/** Exit code when `script` is missing. */
export const NO_PTY_EXIT_CODE = 127;

export const NO_PTY_MESSAGE = "pty mode needs the 'script' program (util-linux; Debian/Ubuntu: bsdutils) in this environment";

/** Shell text running the command held in `$MIBYAN_PTY_COMMAND` on a new pseudo-terminal; `-e` returns its exit code. */
export const PTY_RUNNER = `SHELL=/bin/sh script -qefc 'c=$MIBYAN_PTY_COMMAND; unset MIBYAN_PTY_COMMAND; exec bash -c "$c"' /dev/null`;

/** A check that fails with NO_PTY_MESSAGE (exit `NO_PTY_EXIT_CODE`) where `script` is missing. */
export const PTY_CHECK = `command -v script >/dev/null 2>&1 || { echo ${shellQuote(NO_PTY_MESSAGE)} >&2; exit ${NO_PTY_EXIT_CODE}; }`;

/** `command` as a command line that runs it on a pseudo-terminal. */
export function ptyCommand(command: string): string {
  return `${PTY_CHECK}\nMIBYAN_PTY_COMMAND=${shellQuote(command)} ${PTY_RUNNER}`;
}
