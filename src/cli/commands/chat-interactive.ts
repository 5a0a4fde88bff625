/**
 * `mibyan chat` without `-q`: prompts read line by line, one agent-loop turn each, all in the same
 * session; `/exit` (or end of input) ends it. Ctrl-C during a turn interrupts that turn — the request
 * in flight is aborted and running tools are cancelled — and the session goes on; Ctrl-C at the
 * prompt ends the session.
 *
 * One readline interface reads stdin for the whole session. On a terminal, lines typed while a turn
 * runs are not queued as prompts: they are the answers to the approval gate's own prompt, which
 * reads the same terminal. From a pipe, every line is a prompt, in order (approvals there are
 * non-interactive: nothing else reads stdin).
 */

import readline from "node:readline";

import type { RunAgentResult } from "../../agent/types.js";

export interface InteractiveTurn {
  /** Runs one turn; resolves to the result, or to an error message (the session goes on). */
  (prompt: string, signal: AbortSignal): Promise<RunAgentResult | { error: string }>;
}

export async function runInteractiveChat(turn: InteractiveTurn, sessionId: string): Promise<number> {
  const tty = process.stdin.isTTY === true;
  const rl = readline.createInterface({ input: process.stdin, output: tty ? process.stderr : undefined, terminal: tty });
  const queued: string[] = [];
  let waiting: ((line: string | undefined) => void) | undefined;
  let ended = false;
  let current: AbortController | undefined;

  rl.on("line", (line) => {
    if (tty && current !== undefined) return; // an answer to an approval prompt, not the next message
    if (waiting !== undefined) {
      const resolve = waiting;
      waiting = undefined;
      resolve(line);
    } else {
      queued.push(line);
    }
  });
  rl.on("close", () => {
    ended = true;
    waiting?.(undefined);
    waiting = undefined;
  });
  const onInterrupt = (): void => {
    if (current !== undefined) {
      current.abort(new Error("interrupted (Ctrl-C)"));
      return;
    }
    rl.close();
  };
  // On a terminal readline reads Ctrl-C itself (raw mode) and reports it here; from a pipe it is the process's signal.
  rl.on("SIGINT", onInterrupt);
  process.on("SIGINT", onInterrupt);

  const next = (): Promise<string | undefined> => {
    if (queued.length > 0) return Promise.resolve(queued.shift());
    if (ended) return Promise.resolve(undefined);
    if (tty) rl.prompt();
    return new Promise((resolve) => (waiting = resolve));
  };

  rl.setPrompt("> ");
  process.stderr.write(`session ${sessionId} — /exit or Ctrl-D ends it, Ctrl-C interrupts a turn\n`);
  try {
    for (;;) {
      const line = await next();
      if (line === undefined) break;
      const prompt = line.trim();
      if (prompt === "") continue;
      if (prompt === "/exit" || prompt === "/quit") break;
      current = new AbortController();
      try {
        const result = await turn(prompt, current.signal);
        if ("error" in result) {
          process.stderr.write(`mibyan chat: ${result.error}\n`);
          continue;
        }
        if (result.finalText !== "") process.stdout.write(result.finalText.endsWith("\n") ? result.finalText : `${result.finalText}\n`);
        if (result.status !== "completed") process.stderr.write(`(${result.status})\n`);
      } finally {
        current = undefined;
        // The approval prompt's own reader, closed, paused stdin and left raw mode: take the terminal back.
        if (tty) {
          process.stdin.setRawMode?.(true);
          process.stdin.resume();
        }
      }
    }
  } finally {
    process.removeListener("SIGINT", onInterrupt);
    rl.close();
  }
  process.stderr.write(`session ${sessionId}\n`);
  return 0;
}
