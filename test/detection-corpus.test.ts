/**
 * The labelled command corpus (test/fixtures/command-corpus.jsonl): every
 * command must be judged as labelled (dangerous or not, hardline or not, and
 * the expected rule among the matches). Prints recall and false-positive rate.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

import { beforeAll, describe, expect, it } from "vitest";

import { detect } from "../src/approval/detection/index.js";
import type { Detection } from "../src/approval/types.js";
import { initShellParser } from "../src/shell/index.js";

interface Entry {
  command: string;
  dangerous: boolean;
  hardline: boolean;
  rule?: string;
  technique?: string;
  note?: string;
}

const corpusPath = fileURLToPath(new URL("./fixtures/command-corpus.jsonl", import.meta.url));
const corpus: Entry[] = readFileSync(corpusPath, "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line, i) => {
    try {
      return JSON.parse(line) as Entry;
    } catch (error) {
      throw new Error(`command-corpus.jsonl line ${i + 1} is not JSON: ${String(error)}`);
    }
  });

/** A generous parse time budget: the corpus checks the rules, not the machine's load. */
const OPTIONS = { parse: { timeBudgetMs: 10_000 } };

function describeDetection(d: Detection): string {
  const matches = d.matches.map((m) => `${m.rule}${m.hardline ? "!" : ""} [${m.prefix}]`).join(", ");
  return `dangerous=${d.dangerous} hardline=${d.hardline} matches=${matches || "none"}${d.unanalysable.length ? ` unanalysable=${d.unanalysable.join("; ")}` : ""}`;
}

describe("detection corpus", () => {
  beforeAll(async () => {
    await initShellParser();
  });

  it("is well-formed, large enough and free of duplicates", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(250);
    const seen = new Set<string>();
    for (const e of corpus) {
      expect(typeof e.command).toBe("string");
      expect(typeof e.dangerous).toBe("boolean");
      expect(typeof e.hardline).toBe("boolean");
      if (e.hardline) expect(e.dangerous).toBe(true);
      if (e.dangerous) expect(e.rule, e.command).toBeTypeOf("string");
      expect(seen.has(e.command), `duplicate: ${e.command}`).toBe(false);
      seen.add(e.command);
    }
  });

  it("judges every command as labelled", () => {
    let truePositives = 0;
    let falseNegatives = 0;
    let falsePositives = 0;
    let trueNegatives = 0;
    const mislabelled: string[] = [];
    for (const e of corpus) {
      const d = detect(e.command, OPTIONS);
      if (e.dangerous && d.dangerous) truePositives++;
      else if (e.dangerous) falseNegatives++;
      else if (d.dangerous) falsePositives++;
      else trueNegatives++;
      const ruleOk = !e.rule || d.matches.some((m) => m.rule === e.rule);
      if (d.dangerous !== e.dangerous || d.hardline !== e.hardline || !ruleOk) {
        mislabelled.push(
          `${JSON.stringify(e.command)}: expected dangerous=${e.dangerous} hardline=${e.hardline}${e.rule ? ` rule=${e.rule}` : ""}; got ${describeDetection(d)}`,
        );
      }
    }
    const positives = truePositives + falseNegatives;
    const negatives = falsePositives + trueNegatives;
    const recall = positives ? (100 * truePositives) / positives : 100;
    const fpr = negatives ? (100 * falsePositives) / negatives : 0;
    const techniques = new Set(corpus.map((e) => e.technique).filter(Boolean)).size;
    console.log(
      `detection corpus: ${corpus.length} commands (${techniques} techniques), recall ${recall.toFixed(1)}% (${truePositives}/${positives}), ` +
        `false-positive rate ${fpr.toFixed(1)}% (${falsePositives}/${negatives})`,
    );
    expect(mislabelled, mislabelled.join("\n")).toEqual([]);
  });
});
