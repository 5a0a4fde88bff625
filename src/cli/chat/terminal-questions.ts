/**
 * Questions interactive `mibyan chat` asks on its terminal while a turn runs: the approval gate's
 * prompt (a dangerous command) and the memory-write question (`memory.write_approval: true`).
 *
 * They take turns: one question at a time on the terminal, the live activity line paused while it is
 * open (a redraw would garble the question and the typed answer), and afterwards the terminal is
 * handed back to chat's own line reader — a closing readline interface pauses stdin and leaves raw
 * mode, after which Ctrl-C would no longer reach chat as a key.
 */

import readline from "node:readline";

import type { AgentLoopContext } from "../../dispatch/agent-loop.js";
import type { ApprovalAnswer, ApprovalRequest, ApprovalSurface } from "../../approval/flow/types.js";
import { visible } from "../../approval/surfaces/display.js";
import type { MemoryWriteRequest } from "../../agent/tools/memory.js";

/** What is paused while a question is open (the activity line). */
export interface Pausable {
  pause(): void;
  resume(): void;
}

export const MEMORY_PROMPT_TEXT = "Allow this memory write? [y/N]: ";
/** Most characters of a memory write's content shown in the question. */
const MAX_SHOWN_DETAIL = 2_000;

export class TerminalQuestions {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly paused: Pausable,
    private readonly input: NodeJS.ReadStream = process.stdin,
    private readonly output: NodeJS.WriteStream = process.stderr,
  ) {}

  /** Runs `ask` alone on the terminal, the activity line paused; takes the terminal back afterwards. */
  exclusive<T>(ask: () => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      this.paused.pause();
      try {
        return await ask();
      } finally {
        this.paused.resume();
        if (this.input.isTTY) {
          this.input.setRawMode?.(true);
          this.input.resume();
        }
      }
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** The gate's surface (the terminal prompt), asked one question at a time with the line paused. */
  surface(inner: ApprovalSurface): ApprovalSurface {
    return {
      kind: inner.kind,
      ask: (request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> => this.exclusive(() => inner.ask(request, signal)),
    };
  }

  /**
   * The memory handler's `approveWrite`: shows the target, the action and the content (escape
   * sequences made visible: the content is the model's) and asks y/N. Anything but y/yes, no answer
   * within `timeoutMs`, Ctrl-C, end of input or an interrupted turn is a no.
   */
  memoryApprover(timeoutMs: number): (request: MemoryWriteRequest, ctx: AgentLoopContext) => Promise<boolean> {
    return (request, ctx) =>
      this.exclusive(async () => {
        const detail = request.detail.length > MAX_SHOWN_DETAIL ? `${request.detail.slice(0, MAX_SHOWN_DETAIL)}… (${request.detail.length} characters)` : request.detail;
        const shown = visible(detail)
          .split("\n")
          .map((line) => `  ${line}`)
          .join("\n");
        this.output.write(`\nMemory write (${request.target}): ${request.summary}\n${shown}\n`);
        const answer = await this.question(MEMORY_PROMPT_TEXT, timeoutMs, ctx.signal);
        const yes = answer !== undefined && /^(y|yes)$/i.test(answer.trim());
        this.output.write(yes ? "Memory write approved.\n" : "Memory write refused.\n");
        return yes;
      });
  }

  /** One line read on the terminal; undefined for no answer (timeout, Ctrl-C, end of input, aborted). */
  private question(text: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<string | undefined> {
    if (signal?.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const rl = readline.createInterface({ input: this.input, output: this.output, terminal: Boolean(this.input.isTTY && this.output.isTTY), historySize: 0 });
      let settled = false;
      const finish = (answer: string | undefined, note?: string): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        if (note !== undefined) this.output.write(note);
        rl.close();
        resolve(answer);
      };
      const onAbort = (): void => finish(undefined, "\n");
      const timer = setTimeout(() => finish(undefined, `\nNo answer within ${Math.round(timeoutMs / 1000)} s.\n`), timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      rl.on("close", () => finish(undefined, "\n"));
      rl.on("SIGINT", () => finish(undefined, "\n"));
      rl.question(text, (line) => finish(line));
    });
  }
}
