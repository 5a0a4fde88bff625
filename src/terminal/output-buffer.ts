/**
 * A bounded collector for streamed command output.
 *
 * It keeps the first `head` characters and the last `tail` characters of
 * everything pushed into it, and counts the rest. Memory is bounded by the cap
 * (plus at most one incoming chunk while it is being processed), never by the
 * total amount of output: a command that prints a gigabyte costs the same as
 * one that prints `maxChars` characters.
 *
 * Bytes are decoded as UTF-8 with a `StringDecoder`, so a multi-byte character
 * split across two chunks is decoded correctly. "Characters" are UTF-16 code
 * units (JavaScript string length); the head and tail never split a surrogate
 * pair.
 */

import { StringDecoder } from "node:string_decoder";

export interface CappedOutputOptions {
  /** Share of `maxChars` kept from the start of the output (0..1). Default 0.2. */
  headRatio?: number;
}

/** The marker placed between head and tail when output was cut. */
export function omissionMarker(omitted: number): string {
  return `\n\n[... ${omitted} characters omitted ...]\n\n`;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

export class CappedOutput {
  readonly maxChars: number;
  readonly headChars: number;
  readonly tailChars: number;

  private readonly decoder = new StringDecoder("utf8");
  private head = "";
  /** Set once the head stopped taking characters (full, or cut short before a surrogate pair). */
  private headClosed = false;
  /** Tail pieces; `tailPieces[tailStart]` is the oldest still retained. */
  private tailPieces: string[] = [];
  private tailStart = 0;
  /** Characters retained in the tail pieces (from `tailStart` on). */
  private tailLength = 0;
  private total = 0;
  private ended = false;

  constructor(maxChars: number, options: CappedOutputOptions = {}) {
    if (!Number.isFinite(maxChars) || maxChars < 0) {
      throw new RangeError(`maxChars must be a finite number >= 0, got ${maxChars}`);
    }
    const headRatio = options.headRatio ?? 0.2;
    if (!(headRatio >= 0 && headRatio <= 1)) {
      throw new RangeError(`headRatio must be between 0 and 1, got ${headRatio}`);
    }
    this.maxChars = Math.floor(maxChars);
    this.headChars = Math.floor(this.maxChars * headRatio);
    this.tailChars = this.maxChars - this.headChars;
  }

  /** Feeds a chunk of raw bytes (decoded as UTF-8) or an already-decoded string. */
  push(chunk: Uint8Array | string): void {
    if (this.ended) throw new Error("CappedOutput.push() after end()");
    const text = typeof chunk === "string" ? chunk : this.decoder.write(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    this.addText(text);
  }

  /** Flushes an incomplete UTF-8 sequence left at the end of the stream (as U+FFFD). Idempotent. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.addText(this.decoder.end());
  }

  /** Characters received so far (after decoding). */
  get totalChars(): number {
    return this.total;
  }

  /** Whether some of the output was dropped. */
  get truncated(): boolean {
    return this.total > this.head.length + this.tailLength;
  }

  /** Characters dropped between head and tail. */
  get omittedChars(): number {
    return this.total - this.head.length - this.tailLength;
  }

  /** Characters currently held in memory (head + tail); never above `maxChars`. */
  get retainedChars(): number {
    return this.head.length + this.tailLength;
  }

  /** Head + omission marker + tail when cut, otherwise everything received. */
  toString(): string {
    this.compactTail();
    const tail = this.tailPieces.join("");
    if (!this.truncated) return this.head + tail;
    return this.head + omissionMarker(this.omittedChars) + tail;
  }

  private addText(text: string): void {
    if (text.length === 0) return;
    this.total += text.length;

    let rest = text;
    if (!this.headClosed) {
      const room = this.headChars - this.head.length;
      if (rest.length <= room) {
        this.head += rest;
        if (this.head.length === this.headChars) this.headClosed = true;
        return;
      }
      let take = room;
      // Do not end the head between the two halves of a surrogate pair.
      if (take > 0 && isHighSurrogate(rest.charCodeAt(take - 1)) && isLowSurrogate(rest.charCodeAt(take))) take -= 1;
      this.head += rest.slice(0, take);
      this.headClosed = true;
      rest = rest.slice(take);
    }
    this.addTail(rest);
  }

  private addTail(text: string): void {
    const cap = this.tailChars;
    if (cap === 0) return;
    if (text.length >= cap) {
      // The chunk alone fills the tail: everything older is dropped.
      this.tailPieces = [text.slice(text.length - cap)];
      this.tailStart = 0;
      this.tailLength = cap;
      this.fixTailStart();
      return;
    }
    this.tailPieces.push(text);
    this.tailLength += text.length;
    // Drop whole pieces that fall entirely outside the window.
    while (this.tailLength > cap) {
      const first = this.tailPieces[this.tailStart]!;
      const excess = this.tailLength - cap;
      if (first.length <= excess) {
        this.tailPieces[this.tailStart] = "";
        this.tailStart += 1;
        this.tailLength -= first.length;
      } else {
        this.tailPieces[this.tailStart] = first.slice(excess);
        this.tailLength -= excess;
      }
    }
    this.fixTailStart();
    // Keep the piece array from growing without bound when chunks are tiny.
    if (this.tailStart > 1024 && this.tailStart * 2 > this.tailPieces.length) this.compactTail();
  }

  /** The tail must not start with the low half of a surrogate pair whose high half was dropped. */
  private fixTailStart(): void {
    const first = this.tailPieces[this.tailStart];
    if (first !== undefined && first.length > 0 && isLowSurrogate(first.charCodeAt(0))) {
      this.tailPieces[this.tailStart] = first.slice(1);
      this.tailLength -= 1;
    }
  }

  private compactTail(): void {
    if (this.tailStart === 0) return;
    this.tailPieces = this.tailPieces.slice(this.tailStart);
    this.tailStart = 0;
  }
}
