/**
 * The threat scan for text bound for the system prompt (memory entries): invisible characters on
 * the raw text, then the patterns of threat-patterns.ts on a normalised copy. Never throws.
 */

import { foldConfusables, mixedScriptWord } from "./confusables.js";
import { THREAT_PATTERNS } from "./threat-patterns.js";

/** Longest text scanned. Memory refuses longer entries outright rather than scan a prefix. */
export const MAX_SCAN_CHARS = 65_536;

/**
 * Characters that render as nothing (or reorder what is shown) and so let text say something a
 * person reading the file does not see: zero-width characters, bidi controls, word joiners and
 * invisible operators, the BOM, soft hyphen, Unicode tags (ASCII smuggling), interlinear
 * annotations and the variation selectors supplement (data smuggled after a visible character).
 * U+200D (zero-width joiner) between two emoji is part of the emoji and allowed.
 */
const INVISIBLE =
  /[\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\u3164\ufeff\ufff9-\ufffb\uffa0\u{e0000}-\u{e007f}\u{e0100}-\u{e01ef}]/gu;
/** Two or more variation selectors in a row: one selects a glyph, a run encodes data. */
const SELECTOR_RUN = /[\ufe00-\ufe0f]{2,}/u;
const EMOJI_BEFORE = /\p{Extended_Pictographic}\ufe0f?$/u;
const EMOJI_AFTER = /^\p{Extended_Pictographic}/u;

export interface ThreatFinding {
  /** A pattern id (`prompt_injection`) or `invisible_unicode_U+200B`. */
  id: string;
  description: string;
}

function hex(codePoint: number): string {
  return codePoint.toString(16).toUpperCase().padStart(4, "0");
}

/** The invisible characters of `text`, each code point once, in order of first appearance. */
function invisibleFindings(text: string): ThreatFinding[] {
  const seen = new Set<number>();
  const findings: ThreatFinding[] = [];
  for (const match of text.matchAll(INVISIBLE)) {
    const char = match[0];
    const codePoint = char.codePointAt(0)!;
    if (codePoint === 0x200d) {
      const at = match.index!;
      if (EMOJI_BEFORE.test(text.slice(Math.max(0, at - 3), at)) && EMOJI_AFTER.test(text.slice(at + 1, at + 3))) continue;
    }
    if (seen.has(codePoint)) continue;
    seen.add(codePoint);
    findings.push({ id: `invisible_unicode_U+${hex(codePoint)}`, description: "an invisible or direction-changing character" });
  }
  if (SELECTOR_RUN.test(text)) findings.push({ id: "variation_selector_run", description: "a run of variation selectors (hidden data)" });
  return findings;
}

/**
 * The text the patterns see: compatibility forms folded (NFKC: full-width `ｃａｔ` is `cat`),
 * invisible characters removed (`ig<ZWSP>nore` is `ignore`), typographic quotes made plain, and
 * look-alike letters of other scripts folded to Latin (a Cyrillic `о` in `ignоre`; confusables.ts).
 */
export function normalizeForScan(text: string): string {
  return foldConfusables(text.normalize("NFKC"))
    .replace(INVISIBLE, "")
    .replace(/[\ufe00-\ufe0f]/gu, "")
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .replace(/[\u201c\u201d]/g, '"');
}

/** Runs of base64 long enough to hide a sentence. */
const BASE64_RUN = /[A-Za-z0-9+/]{20,4096}={0,2}/g;
/** Runs of hex digits long enough to hide a command (`echo 6361… | xxd -r -p | sh`). */
const HEX_RUN = /(?<![0-9a-f])(?:[0-9a-f]{2}){12,2048}(?![0-9a-f])/gi;
/** Encoded runs decoded per scan (a text of many is not a note anyone writes). */
const MAX_DECODED_RUNS = 16;

/** ROT13, which a model decodes on request as readily as base64. */
function rot13(text: string): string {
  return text.replace(/[a-z]/gi, (char) => {
    const base = char <= "Z" ? 65 : 97;
    return String.fromCharCode(((char.charCodeAt(0) - base + 13) % 26) + base);
  });
}

function patternFindings(normalized: string): ThreatFinding[] {
  const findings: ThreatFinding[] = [];
  for (const { id, pattern, description } of THREAT_PATTERNS) {
    if (pattern.test(normalized)) findings.push({ id, description });
  }
  return findings;
}

/**
 * Whether a base64 or hex run of `text`, or the whole text read as ROT13, decodes to readable text
 * the patterns flag: a payload hidden from a person (and from the patterns) but not from a model,
 * which decodes these on sight.
 */
function hidesEncodedPayload(text: string): boolean {
  const runs = [
    ...[...text.matchAll(BASE64_RUN)].slice(0, MAX_DECODED_RUNS).map((match) => Buffer.from(match[0], "base64").toString("utf8")),
    ...[...text.matchAll(HEX_RUN)].slice(0, MAX_DECODED_RUNS).map((match) => Buffer.from(match[0], "hex").toString("utf8")),
  ];
  for (const decoded of runs) {
    const printable = decoded.replace(/[^\x20-\x7e\n\t]/g, "").length;
    if (decoded.length < 12 || printable < decoded.length * 0.9) continue;
    if (patternFindings(normalizeForScan(decoded)).length > 0) return true;
  }
  return patternFindings(rot13(text)).length > 0;
}

/** Every threat in `text` (at most `MAX_SCAN_CHARS` of it): invisible characters first, then patterns in table order. */
export function scanForThreats(text: string): ThreatFinding[] {
  if (typeof text !== "string" || text === "") return [];
  const head = text.length > MAX_SCAN_CHARS ? text.slice(0, MAX_SCAN_CHARS) : text;
  const normalized = normalizeForScan(head);
  const findings = [...invisibleFindings(head), ...patternFindings(normalized)];
  const disguised = mixedScriptWord(head.normalize("NFKC"));
  if (disguised !== undefined) findings.push({ id: "mixed_script_word", description: `a word spelled with look-alike letters of another script (${JSON.stringify(disguised)})` });
  if (hidesEncodedPayload(normalized)) findings.push({ id: "encoded_payload", description: "base64, hex or ROT13 that decodes to an injection or exfiltration payload" });
  return findings;
}

/** The original's refusal for the first finding, or undefined when `text` is clean. */
export function firstThreatMessage(text: string): string | undefined {
  const [first] = scanForThreats(text);
  if (first === undefined) return undefined;
  if (first.id.startsWith("invisible_unicode_")) {
    return `Blocked: content contains invisible unicode character ${first.id.slice("invisible_unicode_".length)} (possible injection).`;
  }
  return `Blocked: content matches threat pattern '${first.id}'. Content is injected into the system prompt and must not contain injection or exfiltration payloads.`;
}
