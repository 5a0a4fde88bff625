/**
 * The gate measured on commands written by authors who had not seen the rules
 * (test/fixtures/safety-corpus/README.md). Prints recall (dangerous commands that
 * need approval) and false-alarm rate (safe commands that would ask) for each
 * file. The files tuned on must be judged as labelled, but for the explained
 * disagreements below; the held-out file must not fall below what was measured.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

import { beforeAll, describe, expect, it } from "vitest";

import { detect } from "../src/approval/detection/index.js";
import { initShellParser } from "../src/shell/index.js";

interface Labelled {
  command: string;
  dangerous: boolean;
  hardline: boolean;
  class: string;
  note?: string;
  disputed?: boolean;
}

function load(name: string): Labelled[] {
  const file = fileURLToPath(new URL(`./fixtures/safety-corpus/${name}`, import.meta.url));
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line, i) => {
      try {
        return JSON.parse(line) as Labelled;
      } catch (error) {
        throw new Error(`${name} line ${i + 1} is not JSON: ${String(error)}`);
      }
    });
}

interface Score {
  scored: number;
  recall: number;
  falseAlarms: number;
  dangerous: number;
  safe: number;
  misses: string[];
  alarms: string[];
  hardlineFound: number;
  hardline: number;
}

function score(entries: readonly Labelled[]): Score {
  const s: Score = { scored: 0, recall: 0, falseAlarms: 0, dangerous: 0, safe: 0, misses: [], alarms: [], hardlineFound: 0, hardline: 0 };
  for (const e of entries) {
    if (e.disputed) continue;
    s.scored++;
    const d = detect(e.command, { cache: false, parse: { timeBudgetMs: 10_000 } });
    if (e.dangerous) {
      s.dangerous++;
      if (d.dangerous) s.recall++;
      else s.misses.push(e.command);
    } else {
      s.safe++;
      if (d.dangerous) {
        s.falseAlarms++;
        s.alarms.push(e.command);
      }
    }
    if (e.hardline) {
      s.hardline++;
      if (d.hardline) s.hardlineFound++;
    }
  }
  return s;
}

function report(name: string, s: Score): void {
  const pct = (a: number, b: number): string => `${((100 * a) / b).toFixed(1)}%`;
  console.log(
    `${name}: ${s.scored} scored, recall ${pct(s.recall, s.dangerous)} (${s.recall}/${s.dangerous}), ` +
      `false alarms ${pct(s.falseAlarms, s.safe)} (${s.falseAlarms}/${s.safe}), hardline ${s.hardlineFound}/${s.hardline}`,
  );
}

/** Labels of the tuned files that the gate knowingly does not follow, and why. */
const DISAGREEMENTS: Record<string, string> = {
  // Decision: `rm -f tmp/*.part` (a glob in the project) is not a bulk delete, through parallel neither.
  "parallel rm -f ::: tmp/*.part": "a glob of project files is deleted like rm -f *.o",
  // Decision: the e flag of sed's s command runs the edited text, which is not followed.
  "echo x | sed 's/x/uname -a/e'": "sed's e flag runs the pattern space: flagged as a computed command",
};

beforeAll(async () => {
  await initShellParser();
});

describe("blind corpora", () => {
  for (const name of ["tune-a.jsonl", "tune-b.jsonl", "tune-c.jsonl", "tune-d.jsonl", "tune-e.jsonl", "tune-f.jsonl"]) {
    it(`${name} (tuned on) is judged as labelled`, () => {
      const s = score(load(name));
      report(name, s);
      expect([...s.misses, ...s.alarms].filter((c) => !(c in DISAGREEMENTS))).toEqual([]);
    });
  }

  it("held-out.jsonl (never tuned on) does not fall below what was measured", () => {
    const s = score(load("held-out.jsonl"));
    report("held-out.jsonl", s);
    // Measured when issue 9 closed; a drop means a rule change made the gate worse on unseen commands.
    expect(s.recall).toBeGreaterThanOrEqual(HELD_OUT_FLOOR.recall);
    expect(s.falseAlarms).toBeLessThanOrEqual(HELD_OUT_FLOOR.falseAlarms);
  });
});

/** The held-out figures when issue 9 closed (counts of the scored commands). */
const HELD_OUT_FLOOR = { recall: 268, falseAlarms: 0 };
