/**
 * `detectAsync` and `parseShellAsync` judge a command on the fast parser alone when it can, and
 * load the bash grammar (web-tree-sitter + tree-sitter-bash.wasm) only when some text of the
 * command needs it (src/shell/parser.ts, `withoutShellGrammar`). What must hold:
 *
 * - a verdict reached without the grammar is the verdict with it, on every command of the
 *   corpora (the same matches, prefixes and unanalysable reasons);
 * - a command the fast path does not take (at the top or nested: `bash -c '...'`, `$(...)`) is
 *   not judged without the grammar: it is judged after the grammar is loaded;
 * - `parseShell` and `detect` (the synchronous API) still throw before `initShellParser()`.
 *
 * This file must be the first in its process to touch the parser (vitest runs each file in a
 * fresh module graph): the grammar is not loaded until the test that loads it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

import { describe, expect, it } from "vitest";

import { clearDetectionCache, detect, detectAsync } from "../src/approval/detection/index.js";
import type { Detection } from "../src/approval/types.js";
import { initShellParser, isShellParserReady, parseShell, parseShellAsync, withoutShellGrammar } from "../src/shell/index.js";
import { fastSyntaxTree } from "../src/shell/fast-parse.js";

const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url));
function commandsOf(file: string): string[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => (JSON.parse(line) as { command: string }).command);
}
const corpus = [
  ...commandsOf(`${fixtures}command-corpus.jsonl`),
  ...readdirSync(`${fixtures}safety-corpus`)
    .filter((name) => name.endsWith(".jsonl"))
    .flatMap((name) => commandsOf(`${fixtures}safety-corpus/${name}`)),
  // Nested texts the fast path does not take, inside commands it does.
  `bash -c 'case $x in a) rm -rf /;; esac'`,
  `echo $(case $x in a) rm -rf ~;; esac)`,
  `sh -c "ls; sh -c 'if true; then rm -rf /; fi'"`,
];

/** A generous parse time budget: the comparison is about the parse, not the machine's load. */
const OPTIONS = { cache: false, parse: { timeBudgetMs: 10_000 } } as const;

function summary(d: Detection): unknown {
  return { ...d, matches: d.matches.map((m) => ({ ...m })) };
}

describe("detection without the bash grammar", () => {
  const quick = new Map<string, Detection>();
  const deferred: string[] = [];

  it("the synchronous API still needs initShellParser()", () => {
    expect(isShellParserReady()).toBe(false);
    expect(() => parseShell("ls")).toThrow(/not initialised/);
    expect(() => detect("ls", OPTIONS)).toThrow(/not initialised/);
  });

  it("judges the commands the fast path takes, and defers the others, before the grammar is loaded", () => {
    for (const command of corpus) {
      const d = withoutShellGrammar(() => detect(command, OPTIONS));
      if (d === undefined) deferred.push(command);
      else quick.set(command, d);
    }
    // Nothing above may load the grammar.
    expect(isShellParserReady()).toBe(false);
    // The corpus has both kinds, in numbers (the fast path takes most commands).
    expect(quick.size).toBeGreaterThan(corpus.length / 2);
    expect(deferred.length).toBeGreaterThan(20);
    // A command whose top level the fast path rejects is never judged without the grammar.
    for (const command of corpus) if (fastSyntaxTree(command) === null) expect(quick.has(command), command).toBe(false);
    // Nor one with a nested script it rejects.
    for (const nested of corpus.slice(-3)) expect(deferred).toContain(nested);
  });

  it("parseShellAsync and detectAsync answer a fast-path command without loading the grammar", async () => {
    expect((await parseShellAsync("git status --short")).script.pipelines).toHaveLength(1);
    const d = await detectAsync("rm -rf ./build && ls");
    expect(d.dangerous).toBe(true);
    expect(isShellParserReady()).toBe(false);
  });

  it("detectAsync loads the grammar for a command that needs it, and judges it", async () => {
    clearDetectionCache();
    const d = await detectAsync("case $x in a) sudo rm -rf /;; esac");
    expect(isShellParserReady()).toBe(true);
    expect(d.hardline).toBe(true);
  });

  it("every verdict reached without the grammar is the verdict with it", async () => {
    await initShellParser();
    expect(quick.size).toBeGreaterThan(0);
    for (const [command, d] of quick) expect(summary(d), command).toEqual(summary(detect(command, OPTIONS)));
    // And with the grammar loaded, withoutShellGrammar is plain detection.
    for (const command of deferred) expect(withoutShellGrammar(() => detect(command, OPTIONS))).toEqual(detect(command, OPTIONS));
  });
});
