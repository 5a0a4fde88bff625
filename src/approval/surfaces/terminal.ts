/**
 * The interactive terminal prompt. Shows the command and the matched rules, then asks
 * `[o]nce / [s]ession / [a]lways / [d]eny` (a line, confirmed with Enter). A timeout
 * (default 60 s), EOF (Ctrl-D), Ctrl-C, a closed terminal or an aborted signal deny:
 * silence is not consent. After `d` it asks for an optional reason for the model.
 * Requests are asked one at a time.
 */

import readline from "node:readline";

import type { ApprovalAnswer, ApprovalRequest, ApprovalScope, ApprovalSurface } from "../flow/types.js";
import { DEFAULT_PROMPT_TIMEOUT_MS } from "../flow/settings.js";
import { renderRequest } from "./display.js";

/*
 * The prompt's streams are Node streams (readline reads and writes them). The option types
 * below name only what a stream must have, so that the package's declarations compile
 * without @types/node (docs/packaging.md); any Node readable/writable stream fits.
 */
/** A readable Node stream, such as `process.stdin`. */
export interface PromptInputStream {
  readonly isTTY?: boolean;
  on(event: string, listener: (...args: any[]) => void): unknown;
  pause(): unknown;
  resume(): unknown;
}
/** A writable Node stream, such as `process.stderr`. */
export interface PromptOutputStream {
  readonly isTTY?: boolean;
  write(text: string): unknown;
}

export interface TerminalSurfaceOptions {
  /** Where answers are read (default `process.stdin`). */
  input?: PromptInputStream;
  /** Where the prompt is written (default `process.stderr`, so stdout stays clean). */
  output?: PromptOutputStream;
  /** No answer within this long denies (default 60 s). */
  timeoutMs?: number;
  /** After `d`, ask for an optional reason (default true). */
  askReason?: boolean;
}

export const PROMPT_TEXT = "Allow? [o]nce [s]ession [a]lways [d]eny: ";
export const REASON_PROMPT_TEXT = "Reason for the agent (optional, Enter to skip): ";

const CHOICES: Record<string, ApprovalScope> = {
  o: "once",
  once: "once",
  s: "session",
  session: "session",
  a: "always",
  always: "always",
  d: "deny",
  deny: "deny",
  n: "deny",
  no: "deny",
};

export function parseChoice(line: string): ApprovalScope | undefined {
  return CHOICES[line.trim().toLowerCase()];
}

const isTty = (stream: unknown): boolean => Boolean((stream as { isTTY?: boolean } | undefined)?.isTTY);

/** Whether the process has a terminal to ask on (stdin and stderr are both TTYs). */
export function hasInteractiveTerminal(): boolean {
  return isTty(process.stdin) && isTty(process.stderr);
}

export class TerminalSurface implements ApprovalSurface {
  readonly kind = "terminal";
  private readonly input: NodeJS.ReadableStream;
  private readonly output: NodeJS.WritableStream;
  private readonly timeoutMs: number;
  private readonly askReason: boolean;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: TerminalSurfaceOptions = {}) {
    this.input = (options.input as NodeJS.ReadableStream | undefined) ?? process.stdin;
    this.output = (options.output as NodeJS.WritableStream | undefined) ?? process.stderr;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_PROMPT_TIMEOUT_MS;
    this.askReason = options.askReason ?? true;
  }

  ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    const turn = this.queue.then(() => this.prompt(request, signal));
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  private prompt(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    if (signal.aborted) return Promise.resolve({ scope: "deny", by: "cancelled" });
    const seconds = Math.round(this.timeoutMs / 100) / 10;
    return new Promise<ApprovalAnswer>((resolve) => {
      const rl = readline.createInterface({
        input: this.input,
        output: this.output,
        terminal: isTty(this.input) && isTty(this.output),
        historySize: 0,
      });
      let settled = false;
      const finish = (answer: ApprovalAnswer, note?: string): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        if (note) this.output.write(note);
        rl.close();
        resolve(answer);
      };
      const onAbort = (): void => finish({ scope: "deny", by: "cancelled" }, "\nCancelled: denied.\n");
      const timer = setTimeout(
        () => finish({ scope: "deny", by: "timeout" }, `\nNo answer within ${seconds} s: denied.\n`),
        this.timeoutMs,
      );
      signal.addEventListener("abort", onAbort, { once: true });
      rl.on("close", () => finish({ scope: "deny", by: "closed" }, "\nNo answer (input closed): denied.\n"));
      rl.on("SIGINT", () => finish({ scope: "deny", by: "user", reason: "interrupted at the approval prompt" }, "\nInterrupted: denied.\n"));

      this.output.write(renderRequest(request, seconds));
      const askChoice = (): void => {
        rl.question(PROMPT_TEXT, (line) => {
          if (settled) return;
          const scope = parseChoice(line);
          if (!scope) {
            this.output.write("Please answer o, s, a or d.\n");
            askChoice();
            return;
          }
          if (scope === "deny" && this.askReason) {
            rl.question(REASON_PROMPT_TEXT, (reason) => {
              const text = reason.trim();
              finish({ scope: "deny", by: "user", ...(text ? { reason: text } : {}) }, "Denied.\n");
            });
            return;
          }
          finish({ scope, by: "user" }, scope === "deny" ? "Denied.\n" : `Approved (${scope}).\n`);
        });
      };
      askChoice();
    });
  }
}
