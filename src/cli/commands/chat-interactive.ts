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
 *
 * What a turn shows (the streamed answer, the live activity line) is src/cli/chat/chat-renderer.ts;
 * the questions asked on the terminal during a turn (approval, memory write) src/cli/chat/terminal-questions.ts.
 */

import readline from "node:readline";

import type { ApprovalGate } from "../../approval/flow/gate.js";
import { hasInteractiveTerminal, TerminalSurface } from "../../approval/surfaces/terminal.js";
import type { MemoryHandlerOptions } from "../../agent/tools/memory.js";
import type { AgentEvent, RunAgentResult } from "../../agent/types.js";
import { ChatRenderer } from "../chat/chat-renderer.js";
import { quietOutput } from "../chat/quiet-output.js";
import { TerminalQuestions } from "../chat/terminal-questions.js";

export interface InteractiveTurn {
  /** Runs one turn; resolves to the result, or to an error message (the session goes on). */
  (prompt: string, signal: AbortSignal): Promise<RunAgentResult | { error: string }>;
}

/** The terminal side of an interactive session, made before the session is opened (the memory handler needs its approver). */
export interface InteractiveUi {
  /** The loop's `onEvent` (run the loop with `stream: true`). */
  onEvent(event: AgentEvent): void;
  /** delegate_task's `onEvent`: the subagents' tool calls, marked with their task. */
  onChildEvent(taskIndex: number, event: AgentEvent): void;
  /** Asks on the terminal; undefined without one (memory writes needing approval are then refused). */
  approveMemoryWrite: MemoryHandlerOptions["approveWrite"];
  /** `sessionId` is asked again at the end: a compaction continues the conversation in a new session. */
  run(turn: InteractiveTurn, sessionId: () => string): Promise<number>;
  /** Stops the activity line for good (safe to call more than once, on any exit path). */
  stop(): void;
}

/**
 * On a terminal (stdin and stderr TTYs) the gate asks through the terminal prompt, one question at a
 * time with the activity line paused; so does the memory-write approver. Elsewhere the gate keeps its
 * default (non-interactive) surface and memory writes needing approval are refused.
 */
export function openInteractiveUi(gate: ApprovalGate): InteractiveUi {
  const renderer = new ChatRenderer();
  let approveMemoryWrite: MemoryHandlerOptions["approveWrite"];
  if (hasInteractiveTerminal()) {
    const questions = new TerminalQuestions(renderer.line ?? { pause() {}, resume() {} });
    gate.setSurface(questions.surface(new TerminalSurface({ timeoutMs: gate.settings.timeoutMs })));
    approveMemoryWrite = questions.memoryApprover(gate.settings.timeoutMs);
  }
  return {
    onEvent: renderer.onEvent,
    onChildEvent: renderer.onChildEvent,
    approveMemoryWrite,
    run: (turn, sessionId) => runInteractiveChat(turn, sessionId, renderer),
    stop: () => renderer.stop(),
  };
}

export async function runInteractiveChat(turn: InteractiveTurn, sessionId: () => string, renderer: ChatRenderer = new ChatRenderer()): Promise<number> {
  // A terminal to talk on: stdin and stderr both TTYs. With stderr redirected, readline's terminal mode
  // would write its prompt and cursor codes into that file: then lines are read plainly, as from a pipe.
  const tty = hasInteractiveTerminal();
  // Quiet during a turn: its echo of typed keys would land on the activity line or double a question's.
  const output = quietOutput(process.stderr);
  const rl = readline.createInterface({ input: process.stdin, output: tty ? output.stream : undefined, terminal: tty });
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
  process.stderr.write(`session ${sessionId()} — /exit or Ctrl-D ends it, Ctrl-C interrupts a turn\n`);
  try {
    for (;;) {
      const line = await next();
      if (line === undefined) break;
      const prompt = line.trim();
      if (prompt === "") continue;
      if (prompt === "/exit" || prompt === "/quit") break;
      current = new AbortController();
      output.quiet(true);
      try {
        // A throw ends the session; the outer `finally` stops the activity line.
        const result = await turn(prompt, current.signal);
        if ("error" in result) {
          renderer.abandon();
          process.stderr.write(`mibyan chat: ${result.error}\n`);
          continue;
        }
        renderer.finish(result);
        if (result.status !== "completed") process.stderr.write(`(${result.status})\n`);
      } finally {
        current = undefined;
        output.quiet(false);
        // The approval prompt's own reader, closed, paused stdin and left raw mode: take the terminal back.
        if (tty) {
          process.stdin.setRawMode?.(true);
          process.stdin.resume();
        }
      }
    }
  } finally {
    renderer.stop();
    process.removeListener("SIGINT", onInterrupt);
    rl.close();
  }
  process.stderr.write(`session ${sessionId()}\n`);
  return 0;
}
