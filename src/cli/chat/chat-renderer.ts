/**
 * What interactive `mibyan chat` shows of a turn: the answer streamed to stdout as its text deltas
 * arrive, and on stderr either the live activity line (stderr is a TTY: activity-line.ts) or, when
 * stderr is a pipe or a file, one plain line per finished tool call and no escape codes at all.
 *
 * The answer is shown once: the text a turn streamed is remembered, and at the end of the turn the
 * final text is printed only when it is not what was streamed (the budget's fallback text, say).
 */

import type { AgentEvent, RunAgentResult } from "../../agent/types.js";
import { visible } from "../../approval/surfaces/display.js";
import { ActivityLine, type LineStream } from "./activity-line.js";

export interface ChatRendererOptions {
  /** Where the answer goes (process.stdout). */
  out?: { write(text: string): unknown };
  /** Where activity goes (process.stderr). */
  err?: LineStream;
  /** The environment read for NO_COLOR (process.env). */
  env?: NodeJS.ProcessEnv;
}

/** NO_COLOR set to anything but the empty string turns colours off (no-color.org). */
export const colorAllowed = (env: NodeJS.ProcessEnv): boolean => env.NO_COLOR === undefined || env.NO_COLOR === "";

/**
 * A tool name (the model's, for a tool that does not exist) or an endpoint's message, made inert for
 * the terminal: escape sequences shown, not sent (one could clear the screen or rewrite the line), and cut.
 */
function inert(text: string, max: number): string {
  const shown = visible(text);
  return shown.length > max ? `${shown.slice(0, max)}…` : shown;
}

/** How a subagent's lines are marked: `↳#0` for the first task of a delegate_task call. */
export const subagentMark = (taskIndex: number): string => `↳#${taskIndex}`;

export class ChatRenderer {
  private readonly out: { write(text: string): unknown };
  private readonly err: LineStream;
  /** The live line, on a TTY only. */
  readonly line: ActivityLine | undefined;
  /** stdout has text of the answer without its closing newline. */
  private midLine = false;
  /** What the current request streamed (compared with the final text at the end of the turn). */
  private streamed = "";

  constructor(options: ChatRendererOptions = {}) {
    this.out = options.out ?? process.stdout;
    this.err = options.err ?? process.stderr;
    this.line = this.err.isTTY === true ? new ActivityLine(this.err, { color: colorAllowed(options.env ?? process.env) }) : undefined;
  }

  /** The loop's `onEvent`. */
  readonly onEvent = (event: AgentEvent): void => {
    switch (event.type) {
      case "turn_start":
        this.streamed = "";
        this.line?.thinking();
        break;
      case "text_delta":
        if (event.delta === "") break;
        this.line?.thinkingDone();
        // Erase the line before the text, and keep it erased while the text is mid-line: on a shared terminal
        // a redraw (carriage return, erase) would wipe the answer's unfinished line.
        this.line?.hold(true);
        this.out.write(event.delta);
        this.streamed += event.delta;
        this.midLine = !event.delta.endsWith("\n");
        break;
      case "assistant_message":
        this.line?.thinkingDone();
        // Text before tool calls ("Let me look."): finish its line so the calls' lines start on their own.
        if ((event.message.tool_calls?.length ?? 0) > 0) this.endLine();
        break;
      case "tool_start":
        this.endLine();
        this.line?.callStarted(event.callId, event.emoji, inert(event.name, 64));
        break;
      case "tool_end":
        if (this.line !== undefined) this.line.callEnded(event.callId, event.emoji, inert(event.name, 64), event.status, event.elapsedMs);
        else this.err.write(`${event.emoji} ${inert(event.name, 64)} (${event.status}, ${event.elapsedMs} ms)\n`);
        break;
      case "retry":
        this.notice(`… ${inert(event.reason, 300)}; retrying in ${Math.round(event.delayMs)} ms`);
        break;
      case "compaction":
        this.notice(`context compacted (~${event.tokensBefore} → ~${event.tokensAfter} tokens)${event.sessionId !== undefined && event.sessionId !== event.previousSessionId ? `; session ${event.sessionId}` : ""}`);
        break;
      case "compaction_failed":
        this.notice(`context not compacted: ${inert(event.reason, 300)}`);
        break;
      default:
        break;
    }
  };

  /**
   * A subagent's events (`delegate_task`'s children): its tool calls, marked with the task's index,
   * on the live line and as finished lines. Its text is not shown: the child's answer comes back to
   * the parent as the tool's result, and the parent's answer is what the person reads.
   */
  readonly onChildEvent = (taskIndex: number, event: AgentEvent): void => {
    if (event.type !== "tool_start" && event.type !== "tool_end") return;
    const id = `subagent-${taskIndex}/${event.callId}`;
    const name = `${subagentMark(taskIndex)} ${inert(event.name, 64)}`;
    if (event.type === "tool_start") {
      this.endLine();
      this.line?.callStarted(id, event.emoji, name);
    } else if (this.line !== undefined) this.line.callEnded(id, event.emoji, name, event.status, event.elapsedMs);
    else this.err.write(`${event.emoji} ${name} (${event.status}, ${event.elapsedMs} ms)\n`);
  };

  /** A one-line notice on stderr, on its own line. */
  notice(text: string): void {
    this.endLine();
    if (this.line !== undefined) this.line.printLine(text);
    else this.err.write(`${text}\n`);
  }

  /** The turn ended: print the final text unless it was streamed, and end the answer's line. */
  finish(result: RunAgentResult): void {
    this.line?.idle();
    if (result.finalText !== "" && result.finalText !== this.streamed) {
      this.endLine();
      this.out.write(result.finalText.endsWith("\n") ? result.finalText : `${result.finalText}\n`);
    }
    this.endLine();
    this.streamed = "";
  }

  /** The turn failed (an endpoint error) or the session ends: nothing live stays on the screen. */
  abandon(): void {
    this.line?.idle();
    this.endLine();
    this.streamed = "";
  }

  /** For good: stops the line's timer (every exit path). */
  stop(): void {
    this.abandon();
    this.line?.stop();
  }

  private endLine(): void {
    if (this.midLine) this.out.write("\n");
    this.midLine = false;
    this.line?.hold(false);
  }
}
