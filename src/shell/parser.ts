/**
 * The bash parser: web-tree-sitter with the tree-sitter-bash grammar (wasm),
 * loaded lazily on first `initShellParser()` and kept for the process.
 * Importing this module loads nothing, so CLI start-up does not pay for it.
 *
 * Most commands an agent runs are in the fast parser's subset (fast-parse.ts),
 * which gives tree-sitter's own tree without the grammar. `withoutShellGrammar`
 * lets a caller (`detectAsync`) try a whole analysis on the fast path alone and
 * load the grammar only when some text needs it: one `mibyan check ls` then
 * never compiles the 1.4 MB grammar. The result is the same either way, since
 * with the grammar loaded `run` takes the fast path first too.
 *
 * One `Parser` instance, one `Language`, one parse-options object and one
 * progress callback are reused by every call: parsing a short command costs
 * the parse and the model walk, nothing else.
 */

import type { Parser, ParseOptions as TreeSitterParseOptions, Tree } from "web-tree-sitter";
import { buildScript, type BuildState } from "./build-model.js";
import { fastSyntaxTree } from "./fast-parse.js";
import { separateHeredocLines } from "./heredoc-lines.js";
import { NO_TIME_LIMIT, timeBudget, type TimeBudget } from "./time-budget.js";
import { copyTree, directCursorBinding, languageTables, sameTree, type DirectCursorBinding, type LanguageTables, type SyntaxNode } from "./syntax-tree.js";
import type { ParseOptions, ParseResult } from "./types.js";

/** Defaults of `ParseOptions`. */
export const SHELL_PARSE_DEFAULTS: Readonly<Required<ParseOptions>> = Object.freeze({
  timeBudgetMs: 50,
  maxDepth: 16,
  maxLength: 64 * 1024,
});

let parser: Parser | null = null;
let tables: LanguageTables | null = null;
let loading: Promise<void> | null = null;
/** The module's cursor functions for the tree copy (see syntax-tree.ts); null: the public `TreeCursor` is used. */
let direct: DirectCursorBinding | null = null;
/** Whether `run` tries `fastSyntaxTree` first (tests compare both ways). */
let useFastPath = true;

/**
 * Turns the fast path (fast-parse.ts) on or off; returns the previous setting. For tests that
 * compare the fast path with the full parse: the results must be the same either way.
 */
export function setShellFastPath(enabled: boolean): boolean {
  const previous = useFastPath;
  useFastPath = enabled;
  return previous;
}

/** Set while `withoutShellGrammar` runs: `parseShell` may run without the grammar, on the fast path only. */
let grammarless = false;

/** Thrown through the caller's code when a text needs the grammar inside `withoutShellGrammar`. */
class NeedsGrammar {
  readonly needsGrammar = true;
}
const NEEDS_GRAMMAR = Object.freeze(new NeedsGrammar());

/**
 * Runs `fn`, in which `parseShell` may be called before `initShellParser()` has finished: texts
 * the fast path takes parse as usual, and the first text it does not take abandons `fn` (by a
 * throw that `fn` must not catch), so this returns `undefined`: load the grammar, then run `fn`
 * again. Once the grammar is loaded this just runs `fn`.
 */
export function withoutShellGrammar<T>(fn: () => T): T | undefined {
  if (parser !== null) return fn();
  const outer = grammarless;
  grammarless = true;
  try {
    return fn();
  } catch (thrown) {
    if (thrown === NEEDS_GRAMMAR) return undefined;
    throw thrown;
  } finally {
    grammarless = outer;
  }
}

/** The current parse's budget; the parse is cancelled once it is spent. */
let budget: TimeBudget = NO_TIME_LIMIT;
let cancelled = false;
/**
 * web-tree-sitter 0.25 calls the progress callback periodically while parsing (and while
 * balancing the tree); returning true cancels the parse and `parse` returns null. Its typing
 * says `void`, the runtime reads the boolean.
 */
const progressCallback = (): boolean => {
  if (budget.expired()) {
    cancelled = true;
    return true;
  }
  return false;
};
const treeSitterOptions: TreeSitterParseOptions = { progressCallback };

/**
 * Loads web-tree-sitter and the bash grammar once per process. Idempotent and safe to call
 * concurrently (every caller awaits the same load); a failed load can be retried.
 */
export function initShellParser(): Promise<void> {
  if (parser) return Promise.resolve();
  loading ??= load().catch((error: unknown) => {
    loading = null;
    throw new Error(`could not load the bash parser (web-tree-sitter + tree-sitter-bash.wasm): ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  });
  return loading;
}

async function load(): Promise<void> {
  // node:url here, not at the top: a CLI run that never needs the grammar does not load it.
  const { fileURLToPath } = await import("node:url");
  // The package ships the grammar in grammar/ (scripts/copy-grammar.mjs, run by the build), two levels
  // above both src/shell/ and dist/shell/.
  const wasmPath = fileURLToPath(new URL("../../grammar/tree-sitter-bash.wasm", import.meta.url));
  const treeSitter = await import("web-tree-sitter");
  // The options object becomes the emscripten module, with its exported functions on it
  // (when web-tree-sitter was not initialised before in this process: then it stays empty).
  const moduleOptions = {};
  await treeSitter.Parser.init(moduleOptions as Parameters<typeof treeSitter.Parser.init>[0]);
  const language = await treeSitter.Language.load(wasmPath);
  const instance = new treeSitter.Parser();
  instance.setLanguage(language);
  tables = languageTables(language);
  parser = instance;
  direct = checkedBinding(instance, tables, directCursorBinding(moduleOptions));
  // The first parses compile the wasm lazily (tens of ms): pay that here, not in the first
  // command's time budget.
  for (const text of WARM_UP) parseShell(text, { timeBudgetMs: 60_000 });
}

/**
 * The direct cursor binding, if copies made with it equal the public `TreeCursor`'s on the
 * warm-up commands (with and without syntax errors); null otherwise.
 */
function checkedBinding(p: Parser, t: LanguageTables, binding: DirectCursorBinding | null): DirectCursorBinding | null {
  if (!binding) return null;
  try {
    for (const text of [...WARM_UP, "echo $(rm -rf / (", "a |", "if x; then"]) {
      const tree = p.parse(text);
      if (!tree) return null;
      try {
        const viaPublic = copyTree(tree, t, NO_TIME_LIMIT, null);
        const viaDirect = copyTree(tree, t, NO_TIME_LIMIT, binding);
        if (!viaPublic || !viaDirect || !sameTree(viaPublic, viaDirect)) return null;
      } finally {
        tree.delete();
      }
    }
    return binding;
  } catch {
    return null;
  }
}

/** Commands that run the grammar's and the model builder's main paths once at start-up. */
const WARM_UP = [
  "git status --short",
  `for f in *.txt; do if [[ -n "$f" && ! -e /tmp/x ]]; then A=1 cp -- "$f" ~/b\ c 2>&1 | tee -a log >/dev/null; fi; done`,
  "case $(uname -s) in Linux|Darwin) x=$((1 + 2)); echo ${x:-y} `id` $'\\x41' <(ls) &;; *) exit 1;; esac",
  "f() { local -r v=\"$1\"; export V; (cd / && ls) || { echo no; }; }; while read -r l; do :; done <<< 'a'",
  "cat <<-'EOF' > out && bash <<EOF2\n\tbody\n\tEOF\n$(date) \\$HOME\nEOF2\necho done",
];

/** True once `initShellParser()` has finished: `parseShell` can be called. */
export function isShellParserReady(): boolean {
  return parser !== null;
}

function option(value: number | undefined, fallback: number, min: number): number {
  return typeof value === "number" && Number.isFinite(value) && value >= min ? value : fallback;
}

/**
 * Parses a shell command into the `Script` model. Synchronous: call `initShellParser()` first
 * (or use `parseShellAsync`). Never throws on any input: syntax errors, unsupported syntax and
 * every limit reached (length, nesting depth, time) are listed in `problems`, and a non-empty
 * list means the command could not be fully analysed.
 */
export function parseShell(source: string, options: ParseOptions = {}): ParseResult {
  const p = parser;
  const t = tables;
  if ((!p || !t) && !grammarless) {
    throw new Error("the shell parser is not initialised: await initShellParser() once before parseShell(), or use parseShellAsync()");
  }
  const timeBudgetMs = option(options.timeBudgetMs, SHELL_PARSE_DEFAULTS.timeBudgetMs, 0);
  const maxDepth = Math.floor(option(options.maxDepth, SHELL_PARSE_DEFAULTS.maxDepth, 0));
  const maxLength = option(options.maxLength, SHELL_PARSE_DEFAULTS.maxLength, 0);

  if (source.length > maxLength) {
    return {
      script: { pipelines: [], text: source },
      problems: [`command too long: ${source.length} characters (limit ${maxLength}); not analysed`],
    };
  }
  if (source.length === 0) return { script: { pipelines: [], text: "" }, problems: [] };

  budget = timeBudget(timeBudgetMs);
  const state: BuildState = {
    problems: [],
    maxDepth,
    budget,
    parseNested: (text) => run(p, t, text, state, timeBudgetMs),
  };
  const root = run(p, t, source, state, timeBudgetMs);
  if (!root) return { script: { pipelines: [], text: source }, problems: state.problems };
  if (root.hasError && source.includes("<<")) {
    // tree-sitter-bash fails on `cat <<EOF > f; x`: retry once with such heredoc lines rewritten.
    const rewritten = separateHeredocLines(source);
    const retry = rewritten === null ? null : run(p, t, rewritten, state, timeBudgetMs);
    if (rewritten !== null && retry && !retry.hasError) {
      const script = buildScript(retry, rewritten, state);
      return { script: { pipelines: script.pipelines, text: source }, problems: state.problems };
    }
    if (!retry && state.timeReported) return { script: { pipelines: [], text: source }, problems: state.problems };
  }
  return { script: buildScript(root, source, state), problems: state.problems };
}

/**
 * Parses `text` within the current time budget and copies the tree into plain objects (the wasm
 * tree is freed at once); null, with a problem recorded, when the budget ran out.
 */
function run(p: Parser | null, t: LanguageTables | null, text: string, state: BuildState, budgetMs: number): SyntaxNode | null {
  // The common case: text the fast path knows gives tree-sitter's own tree without the wasm
  // parse and copy (see fast-parse.ts).
  if (useFastPath) {
    const fast = fastSyntaxTree(text);
    if (fast) return fast;
  }
  // Only inside `withoutShellGrammar` (parseShell checked): the caller loads the grammar and retries.
  if (!p || !t) throw NEEDS_GRAMMAR;
  cancelled = false;
  let tree: Tree | null;
  try {
    tree = p.parse(text, null, treeSitterOptions);
  } catch (error) {
    p.reset();
    state.problems.push(`the bash parser failed: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  }
  if (!tree) {
    // A cancelled parse would otherwise resume on the next call.
    p.reset();
    const message = cancelled ? `parse time budget of ${budgetMs} ms exceeded; not analysed` : "the bash parser returned no tree; not analysed";
    if (!state.problems.includes(message)) state.problems.push(message);
    state.timeReported = true;
    return null;
  }
  try {
    const root = copyTree(tree, t, budget, direct);
    if (!root) {
      const message = `parse time budget of ${budgetMs} ms exceeded; not analysed`;
      if (!state.problems.includes(message)) state.problems.push(message);
      state.timeReported = true;
    }
    return root;
  } finally {
    tree.delete();
  }
}

/**
 * The tree-sitter tree of `text`, copied, without the fast path and without building the model;
 * null when the parser is not ready or the parse failed. For tests that compare the fast path's
 * trees with tree-sitter's.
 */
export function fullSyntaxTree(text: string): SyntaxNode | null {
  const p = parser;
  const t = tables;
  if (!p || !t) return null;
  budget = NO_TIME_LIMIT;
  cancelled = false;
  const tree = p.parse(text, null, treeSitterOptions);
  if (!tree) {
    p.reset();
    return null;
  }
  try {
    return copyTree(tree, t, NO_TIME_LIMIT, direct);
  } finally {
    tree.delete();
  }
}

/** `parseShell()`, loading the grammar first (`initShellParser()`) only when the fast path does not take the text. */
export async function parseShellAsync(source: string, options?: ParseOptions): Promise<ParseResult> {
  const quick = withoutShellGrammar(() => parseShell(source, options));
  if (quick !== undefined) return quick;
  await initShellParser();
  return parseShell(source, options);
}
