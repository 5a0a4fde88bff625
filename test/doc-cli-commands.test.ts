/**
 * The `mibyan …` command lines of the ```sh blocks in README.md and docs/ run as written (in a
 * fresh MIBYAN_HOME), and none is a usage error (exit status 2): a renamed command or option, or
 * an argument shape the CLI no longer takes, fails here. Lines using shell syntax (variables,
 * pipes, redirections) are left out; placeholders such as `proc_…` are passed as they are (an
 * unknown process is an error result, exit 1, not a usage error).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { docFiles } from "./support/doc-examples.js";
import { BIN, ROOT, cliEnv, spawnCollect } from "./support/cli-run.js";

interface CommandLine {
  where: string;
  args: string[];
}

/** Splits a line as sh would for plain words and '…'/"…" quotes; null when it uses other shell syntax. */
function shellWords(line: string): string[] | null {
  const words: string[] = [];
  let current = "";
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      if (end < 0) return null;
      const quoted = line.slice(i + 1, end);
      if (c === '"' && /[$`\\]/.test(quoted)) return null;
      current += quoted;
      inWord = true;
      i = end;
    } else if (c === " " || c === "\t") {
      if (inWord) words.push(current);
      current = "";
      inWord = false;
    } else if (c === "#" && !inWord) {
      break;
    } else if ("$`|&;<>()\\".includes(c)) {
      return null;
    } else {
      current += c;
      inWord = true;
    }
  }
  if (inWord) words.push(current);
  return words;
}

function commandLines(): CommandLine[] {
  const out: CommandLine[] = [];
  for (const file of docFiles(ROOT)) {
    const lines = readFileSync(path.join(ROOT, file), "utf8").split("\n");
    let inSh = false;
    lines.forEach((line, i) => {
      if (/^\s*```/.test(line)) {
        inSh = !inSh && /^\s*```\s*(sh|bash|shell)\s*$/.test(line);
        return;
      }
      if (!inSh || !/^\s*mibyan\s/.test(line)) return;
      const words = shellWords(line.trim());
      if (words !== null) out.push({ where: `${file}:${i + 1}`, args: words.slice(1) });
    });
  }
  return out;
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const lines = commandLines();

describe("mibyan command lines in the docs", () => {
  it("finds them", () => {
    expect(lines.length).toBeGreaterThanOrEqual(4);
  });

  it.each(lines.map((l) => [l.where, l] as const))("%s is not a usage error", async (_where, line) => {
    const home = mkdtempSync(path.join(tmpdir(), "mibyan-doc-sh-"));
    dirs.push(home);
    const run = await spawnCollect(process.execPath, [BIN, ...line.args], { env: cliEnv(home, home), cwd: home });
    expect(run.status, run.stderr).not.toBe(2);
    expect(run.stderr).not.toMatch(/unknown option|unknown command|error: /);
  });

  it("a line with a renamed option would fail: the check can fail", async () => {
    const home = mkdtempSync(path.join(tmpdir(), "mibyan-doc-sh-"));
    dirs.push(home);
    const run = await spawnCollect(process.execPath, [BIN, "call", "terminal", "{}", "--tsk", "T"], { env: cliEnv(home, home), cwd: home });
    expect(run.status).toBe(2);
  });

  it("the splitter keeps quoted JSON whole and refuses shell syntax", () => {
    expect(shellWords(`mibyan call terminal '{"command":"ls -la"}' --session S   # note`)).toEqual(["mibyan", "call", "terminal", '{"command":"ls -la"}', "--session", "S"]);
    expect(shellWords('mibyan check "$cmd" >/dev/null')).toBeNull();
  });
});
