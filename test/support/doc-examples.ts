/**
 * The TypeScript/JavaScript examples of README.md and docs/**.md, as the package-consumer test
 * compiles and runs them (docs/packaging.md, "How the docs' examples are tested").
 *
 * Every fenced block tagged ts, typescript, js, javascript or mjs is an example. By default an
 * example is type-checked and run. A mark on the line right before the fence changes that,
 * and must say why:
 *
 *   <!-- example: compile-only (needs a Docker engine) -->   type-checked, not run
 *   <!-- example: skip (a rule table entry, not package code) -->   neither
 *
 * Even a skipped example's `import` statements are type-checked, so a name the docs import
 * from the package cannot disappear unnoticed.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

export type ExampleMode = "run" | "compile-only" | "skip";

export interface DocExample {
  /** Markdown file, relative to the repository. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: "ts" | "js";
  code: string;
  mode: ExampleMode;
  /** The mark's reason (compile-only, skip). */
  reason?: string;
  /** A file name for the example: `<doc>-L<line>`. */
  id: string;
}

const FENCE = /^(\s*)(```+|~~~+)\s*([A-Za-z]+)?\s*$/;
const LANGS: Record<string, "ts" | "js"> = { ts: "ts", typescript: "ts", js: "js", javascript: "js", mjs: "js" };
const MARK = /^\s*<!--\s*example:\s*(compile-only|skip)\s*(?:\((.+)\))?\s*-->\s*$/;
// A mark quoted in inline code (`<!-- example: skip (why) -->` in prose that explains marks) is not a mark.
const ANY_MARK = /(?:^|[^`])<!--\s*example:/;

/** README.md and every docs/**.md of the repository. */
export function docFiles(root: string): string[] {
  const out = ["README.md"];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith(".md")) out.push(rel);
    }
  };
  walk("docs");
  return out.sort();
}

/** The examples of one markdown text. Throws on a malformed mark (a typo must not silently run or skip). */
export function extractExamples(file: string, text: string): DocExample[] {
  const lines = text.split("\n");
  const examples: DocExample[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) {
      if (ANY_MARK.test(lines[i]!) && !MARK.test(lines[i]!)) throw new Error(`${file}:${i + 1}: malformed example mark: ${lines[i]}`);
      continue;
    }
    const fence = open[2]!;
    const close = new RegExp(`^\\s*\\${fence[0]}{${fence.length},}\\s*$`);
    let end = i + 1;
    while (end < lines.length && !close.test(lines[end]!)) end++;
    const lang = LANGS[(open[3] ?? "").toLowerCase()];
    if (lang) {
      const indent = open[1]!.length;
      const code = lines
        .slice(i + 1, end)
        .map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length)))
        .join("\n");
      const mark = i > 0 ? MARK.exec(lines[i - 1]!) : null;
      const mode: ExampleMode = mark ? (mark[1] as ExampleMode) : "run";
      if (mark && !mark[2]) throw new Error(`${file}:${i}: an example mark needs a reason: <!-- example: ${mark[1]} (why) -->`);
      const slug = file.replace(/\.md$/, "").replace(/[^A-Za-z0-9]+/g, "-").replace(/^-|-$/g, "").toLowerCase();
      examples.push({ file, line: i + 1, lang, code, mode, ...(mark?.[2] ? { reason: mark[2].trim() } : {}), id: `${slug}-L${i + 1}` });
    }
    i = end;
  }
  return examples;
}

/** Every example of the repository's docs. */
export function allExamples(root: string): DocExample[] {
  return docFiles(root).flatMap((file) => extractExamples(file, readFileSync(path.join(root, file), "utf8")));
}

/** The example's `import ... from "..."` statements (possibly multi-line), for checking the names a skipped example imports. */
export function importStatements(code: string): string[] {
  return [...code.matchAll(/^import\s[\s\S]*?\sfrom\s*["'][^"']+["'];?/gm)].map((m) => m[0]);
}
