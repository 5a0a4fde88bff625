/**
 * The live activity line of interactive `mibyan chat` on a terminal: one stderr line, redrawn about
 * ten times a second, that shows what the agent is doing right now —
 *
 *     ⠋ thinking  1.2s                          (waiting for the model)
 *     ⠙ 💻 terminal  3.2s  ·  📖 read_file  0.1s   (the tool calls running, all on one line)
 *
 * When a call ends, the line is replaced by a permanent one (`💻 terminal ok 3.4s`) and redrawn
 * below it for the calls still running. Concurrent calls share one line (not one line each): a
 * single line is redrawn with a carriage return and an erase, which no terminal gets wrong; several
 * lines would need cursor movement, and a wrapped or scrolled line would leave debris. The line is
 * cut to the terminal's width for the same reason.
 *
 * Only for a TTY: the caller (chat-renderer.ts) uses plain lines otherwise. The timer is unref'd
 * (it never keeps the process alive) and `stop()` ends it for good on every exit path.
 */

import { SPINNER_FRAMES } from "../spinner.js";

/** The stream the line is drawn on (process.stderr). */
export interface LineStream {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(text: string): unknown;
}

export interface ActivityLineOptions {
  /** ANSI colours for the final lines (off with NO_COLOR). */
  color: boolean;
  /** Redraw period (default 100 ms). */
  intervalMs?: number;
}

interface RunningCall {
  emoji: string;
  name: string;
  started: number;
}

const ERASE = "\r\x1b[2K";
const GREEN = "\x1b[32m";
const RED = "\x1b[31m";
const YELLOW = "\x1b[33m";
const DIM = "\x1b[2m";
const RESET = "\x1b[0m";

const seconds = (ms: number): string => `${(Math.max(0, ms) / 1000).toFixed(1)}s`;

/**
 * Cuts `text` to `columns` terminal cells. Emoji and other wide characters take two cells, variation
 * selectors and joiners none: close enough for the line to never wrap (a wrapped line cannot be erased).
 */
export function fitWidth(text: string, columns: number): string {
  let width = 0;
  let out = "";
  for (const char of text) {
    const code = char.codePointAt(0)!;
    const cells = code === 0xfe0f || code === 0x200d ? 0 : code >= 0x1100 ? 2 : 1;
    if (width + cells > columns) return `${Array.from(out).slice(0, -1).join("")}…`;
    width += cells;
    out += char;
  }
  return out;
}

export class ActivityLine {
  private readonly calls = new Map<string, RunningCall>();
  private thinkingSince: number | undefined;
  private frame = 0;
  /** Something is drawn on the current line (to be erased before anything else is written). */
  private shown = false;
  private timer: NodeJS.Timeout | undefined;
  /** Open prompts (approval, memory write): nothing is drawn while one is open. */
  private pauses = 0;
  /** The answer's text is mid-line on the same terminal: drawing would erase it. */
  private held = false;
  private stopped = false;

  constructor(
    private readonly stream: LineStream,
    private readonly options: ActivityLineOptions,
  ) {}

  /** Waiting for the model. */
  thinking(): void {
    this.thinkingSince = Date.now();
    this.update();
  }

  /** The model is answering (text arrives) or has answered: no more "thinking". */
  thinkingDone(): void {
    this.thinkingSince = undefined;
    this.update();
  }

  callStarted(id: string, emoji: string, name: string): void {
    this.calls.set(id, { emoji, name, started: Date.now() });
    this.update();
  }

  /** Replaces the call's live part with its permanent line. */
  callEnded(id: string, emoji: string, name: string, status: string, elapsedMs: number): void {
    this.calls.delete(id);
    const { color } = this.options;
    const paint = (code: string, text: string): string => (color ? `${code}${text}${RESET}` : text);
    const statusText = paint(status === "ok" ? GREEN : status === "cancelled" ? YELLOW : RED, status);
    this.printLine(`${emoji} ${name} ${statusText} ${paint(DIM, seconds(elapsedMs))}`);
    this.update();
  }

  /** Writes a permanent line (a retry notice, a final call line) above the live one. */
  printLine(text: string): void {
    this.erase();
    this.stream.write(`${text}\n`);
    this.update();
  }

  /** Text of the answer is mid-line on the terminal (`true`) or its line is finished (`false`). */
  hold(held: boolean): void {
    this.held = held;
    if (held) this.erase();
    this.update();
  }

  /** A prompt opens: erase the line and draw nothing until `resume`. Nests. */
  pause(): void {
    this.pauses++;
    this.erase();
    this.update();
  }

  resume(): void {
    if (this.pauses > 0) this.pauses--;
    this.update();
  }

  /** The turn is over: forget what ran, erase the line. */
  idle(): void {
    this.calls.clear();
    this.thinkingSince = undefined;
    this.held = false;
    this.erase();
    this.update();
  }

  /** For good (every exit path): no timer, no line. */
  stop(): void {
    this.stopped = true;
    this.idle();
  }

  /** Starts or stops the redraw timer for the current state, and draws once now. */
  private update(): void {
    const visible = !this.stopped && this.pauses === 0 && !this.held && (this.calls.size > 0 || this.thinkingSince !== undefined);
    if (!visible) {
      if (this.timer !== undefined) clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    this.draw();
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.draw(), this.options.intervalMs ?? 100);
      this.timer.unref();
    }
  }

  private draw(): void {
    const now = Date.now();
    const spinner = SPINNER_FRAMES[this.frame++ % SPINNER_FRAMES.length]!;
    const parts =
      this.calls.size > 0
        ? [...this.calls.values()].map((call) => `${call.emoji} ${call.name}  ${seconds(now - call.started)}`)
        : [`thinking  ${seconds(now - (this.thinkingSince ?? now))}`];
    const columns = this.stream.columns !== undefined && this.stream.columns > 10 ? this.stream.columns : 80;
    this.stream.write(`${ERASE}${fitWidth(`${spinner} ${parts.join("  ·  ")}`, columns - 1)}`);
    this.shown = true;
  }

  private erase(): void {
    if (!this.shown) return;
    this.stream.write(ERASE);
    this.shown = false;
  }
}
