/**
 * The config.yaml examples of README.md and docs/**.md, as test/doc-config-examples.test.ts
 * validates them (docs/config.md, "How the examples are checked").
 *
 * Every fenced block tagged yaml or yml is a config.yaml, or a section of one written from the
 * top level (`terminal:` ...), unless the line right before the fence marks it otherwise, with a
 * reason: `<!-- example: skip (a docker-compose file, not config.yaml) -->`.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { docFiles } from "./doc-examples.js";

export interface ConfigExample {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  text: string;
}

const FENCE = /^(\s*)(```+|~~~+)\s*([A-Za-z]+)?\s*$/;
const SKIP = /^\s*<!--\s*example:\s*skip\s*\((.+)\)\s*-->\s*$/;

export function extractConfigExamples(file: string, text: string): ConfigExample[] {
  const lines = text.split("\n");
  const out: ConfigExample[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const fence = open[2]!;
    const close = new RegExp(`^\\s*\\${fence[0]}{${fence.length},}\\s*$`);
    let end = i + 1;
    while (end < lines.length && !close.test(lines[end]!)) end++;
    const lang = (open[3] ?? "").toLowerCase();
    if ((lang === "yaml" || lang === "yml") && !(i > 0 && SKIP.test(lines[i - 1]!))) {
      const indent = open[1]!.length;
      out.push({ file, line: i + 1, text: lines.slice(i + 1, end).map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length))).join("\n") + "\n" });
    }
    i = end;
  }
  return out;
}

export function allConfigExamples(root: string): ConfigExample[] {
  return docFiles(root).flatMap((file) => extractConfigExamples(file, readFileSync(path.join(root, file), "utf8")));
}
