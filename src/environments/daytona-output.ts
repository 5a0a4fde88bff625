/**
 * How a command's output survives the trip through a Daytona session.
 *
 * The Daytona daemon runs a session command with its stdout and stderr going
 * to two "labelers" that read them line by line with bash's `read` and append
 * each line to the command's log behind a 3-byte marker (`\x01\x01\x01` for
 * stdout, `\x02\x02\x02` for stderr); the SDK splits the log back into the two
 * streams by those markers and decodes each as UTF-8. Along the way:
 *
 * - NUL bytes are dropped (`read` cannot hold them), which would break the
 *   environment's NUL-delimited trailer and every binary output;
 * - a last line without a newline is delivered only when the stream ends (and
 *   then with a newline added), so a command whose background job keeps the
 *   stream open would never deliver its trailer;
 * - `\x01\x01\x01` or `\x02\x02\x02` inside the output would be taken for a marker.
 *
 * So the transport does not hand the program's argv to the daemon as it is. It
 * runs it inside a small bash wrapper (`frameCommand`) that
 *
 * 1. gives it an empty stdin (the daemon keeps an async command's stdin open
 *    forever),
 * 2. merges its stderr into stdout and pipes both through `tr`, swapping the
 *    bytes NUL, 0x01, 0x02 with 0x10, 0x11, 0x12 (a bijection, so nothing is
 *    mangled on the way and nothing the labeler drops or the SDK splits on
 *    remains; `stdbuf -o0` keeps `tr` from holding output back),
 * 3. after the program, writes an end marker `RS nonce LF code RS nonce LF`
 *    into the same pipe: it carries the program's exit code, and its newline
 *    completes the last line, so everything before it is delivered at once.
 *
 * `FramedOutput` undoes this on the client: it takes the end marker out
 * (`TrailerFilter`, the same filter the environment uses for its own trailer),
 * keeping the exit code, and swaps the bytes back.
 *
 * What is still lost: a 0x10 byte in the output becomes NUL, which the labeler
 * drops; three 0x11 or 0x12 bytes in a row become a stream marker (three bytes
 * dropped); bytes that are not UTF-8 become U+FFFD (the SDK decodes, as the
 * environment would anyway). Output a background job writes after the end
 * marker is passed on as it comes, unframed bytes included.
 */

import { shellQuote } from "./shell-state.js";
import { TrailerFilter } from "./sandbox-scripts.js";

/** What the wrapper's `tr` swaps (octal, as `tr` takes them): each byte with the one below it. */
const SWAP_FROM = "\\000\\001\\002\\020\\021\\022";
const SWAP_TO = "\\020\\021\\022\\000\\001\\002";

/** The byte each byte becomes after `tr`, and back (the swap is its own inverse). */
const SWAP = new Map<number, number>([
  [0x00, 0x10],
  [0x01, 0x11],
  [0x02, 0x12],
  [0x10, 0x00],
  [0x11, 0x01],
  [0x12, 0x02],
]);

/** Exit code of the wrapper when `tr` is missing (bash's "command not found"). */
export const MISSING_TOOL_EXIT = 127;

/** The end marker's tag: `RS nonce LF` (RS is not among the swapped bytes; the LF ends the line for the labeler). */
export function endTag(nonce: string): string {
  return `\u001e${nonce}\n`;
}

/**
 * The session command that runs `argv` inside the wrapper: one shell command
 * string, every argument single-quoted. `nonce` (hex) makes the end marker
 * unguessable for the program's own output.
 */
export function frameCommand(argv: readonly string[], nonce: string): string {
  if (argv.length === 0) throw new Error("frameCommand: empty argv");
  if (!/^[0-9a-f]{8,64}$/.test(nonce)) throw new Error("frameCommand: the nonce must be 8 to 64 hex digits");
  const wrapper = [
    `exec </dev/null`,
    `if ! command -v tr >/dev/null 2>&1; then echo "mibyan: the daytona backend needs tr (coreutils) in the sandbox image" >&2; exit ${MISSING_TOOL_EXIT}; fi`,
    `__mibyan_swap() { if command -v stdbuf >/dev/null 2>&1; then stdbuf -o0 tr '${SWAP_FROM}' '${SWAP_TO}'; else tr '${SWAP_FROM}' '${SWAP_TO}'; fi; }`,
    `{ "$@"; printf '\\036%s\\n%s\\036%s\\n' ${nonce} "$?" ${nonce}; } 2>&1 | __mibyan_swap`,
  ].join("\n");
  return ["bash", "-c", wrapper, "mibyan-daytona", ...argv].map(shellQuote).join(" ");
}

/**
 * The client side of the framing: text chunks from the SDK in, the program's
 * bytes out (to `sink`, in order), the end marker taken out and its exit code
 * kept.
 */
export class FramedOutput {
  private readonly filter: TrailerFilter;
  /** The program's exit code, once the end marker has been seen. */
  exitCode: number | undefined;
  /** Called once, when the end marker has been seen. */
  onEnd: (() => void) | undefined;
  /** Bytes of the program's output passed to the sink so far. */
  delivered = 0;

  constructor(nonce: string, sink: (chunk: Buffer) => void) {
    this.filter = new TrailerFilter(endTag(nonce), (chunk) => {
      this.delivered += chunk.length;
      sink(unswap(chunk));
    });
    this.filter.onValue = (value) => {
      const code = /^\d{1,3}$/.test(value) ? Number(value) : undefined;
      this.exitCode = code;
      this.onEnd?.();
    };
  }

  /** The SDK's chunks are strings (it decodes the log as UTF-8); the marker and the swapped bytes are ASCII. */
  push(text: string): void {
    if (text !== "") this.filter.push(Buffer.from(text, "utf8"));
  }

  /** End of stream: bytes held back that turned out not to be the marker go out. */
  end(): void {
    this.filter.end();
  }

  /** Whether the end marker has been seen. */
  get ended(): boolean {
    return this.filter.value !== undefined;
  }
}

/** A whole log at once (the non-streaming log request): the program's output and its exit code. */
export function decodeLog(nonce: string, text: string): { output: Buffer; exitCode: number | undefined; ended: boolean } {
  const chunks: Buffer[] = [];
  const framed = new FramedOutput(nonce, (chunk) => chunks.push(chunk));
  framed.push(text);
  framed.end();
  return { output: Buffer.concat(chunks), exitCode: framed.exitCode, ended: framed.ended };
}

/** Swaps the bytes `tr` swapped back, in a copy. */
export function unswap(chunk: Buffer): Buffer {
  let out: Buffer | undefined;
  for (let i = 0; i < chunk.length; i++) {
    const byte = chunk[i]!;
    if (byte > 0x12 || (byte > 0x02 && byte < 0x10)) continue;
    out ??= Buffer.from(chunk);
    out[i] = SWAP.get(byte)!;
  }
  return out ?? chunk;
}
